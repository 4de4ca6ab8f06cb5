// tb/system: the shadow-memory scoreboard through the simulator. A real
// scenario with one byte changed behind the host program's back (a `stray`
// mem_write, which the scoreboard is not told of) must fail with exit 1,
// naming node, MR, offset, the expected and the found byte and the
// operation that last defined it; runs that pass report what it checked;
// a register-level run reports that it stood aside.
#include <nlohmann/json.hpp>

#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;
using json = nlohmann::json;

json run_json(const fs::path& dir, const std::string& scenario, int want_rc, SimResult* res = nullptr) {
  SimResult r = run_sim(dir, {"run", scenario, "--json", "out.json"});
  EXPECT_EQ(r.exit_code, want_rc) << r.out << r.err;
  if (res) *res = r;
  return json::parse(read_text(dir / "out.json"));
}

std::string failures(const json& rep) {
  std::string o;
  for (const auto& f : rep["failures"]) o += f["what"].get<std::string>() + "\n";
  return o;
}

TEST(Scoreboard, StrayByteFailsTheRunAndIsNamed) {
  const fs::path d = test_dir();
  SimResult r;
  const json rep = run_json(d, kSystemDir + "/scoreboard/stray_byte.yaml", 1, &r);
  const std::string f = failures(rep);
  // The READ brought the changed byte back to A: caught when its CQE is polled.
  EXPECT_NE(f.find("scoreboard: node A MR 'back' offset 100 (address 0x"), std::string::npos) << f;
  EXPECT_NE(f.find("expected 0x64, found 0x00; last defined by the READ wr_id 2 of 4096 bytes on A QP2"),
            std::string::npos)
      << f;
  // B's MR itself, at the end of the run, with the WRITE that defined it.
  EXPECT_NE(f.find("scoreboard: node B MR 'dst' offset 100 (address 0x190064): expected 0x64, found 0x00; last "
                   "defined by the WRITE wr_id 1 of 4096 bytes on A QP2"),
            std::string::npos)
      << f;
  EXPECT_EQ(rep["scoreboard"]["mismatches"].get<uint64_t>(), 2u) << rep["scoreboard"].dump();
  EXPECT_EQ(rep["scoreboard"]["operations_tracked"].get<uint64_t>(), 2u);
  // The summary printed by the run says the same.
  EXPECT_NE(r.out.find("scoreboard 5 buffers, 2 operations tracked (2 completed)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 mismatch(es)"), std::string::npos) << r.out;
}

TEST(Scoreboard, PassingRunReportsWhatItChecked) {
  const fs::path d = test_dir();
  const json rep = run_json(d, kDefaultScenario, 0);
  const json& sb = rep["scoreboard"];
  EXPECT_EQ(sb["mismatches"].get<uint64_t>(), 0u);
  EXPECT_EQ(sb["operations_tracked"].get<uint64_t>(), 1u);
  EXPECT_EQ(sb["operations_completed"].get<uint64_t>(), 1u);
  // The 64 KiB WRITE's target and source when the CQE was polled, then both
  // MRs again at the end: at least 4 x 64 KiB.
  EXPECT_GE(sb["bytes_checked"].get<uint64_t>(), 4u * 65536) << sb.dump();
  EXPECT_TRUE(sb["stood_aside"].empty());
}

TEST(Scoreboard, StandsAsideForRegisterLevelPosting) {
  const fs::path d = test_dir();
  const json rep = run_json(d, kSourceDir + "/scenarios/handshake/init_register_level.yaml", 0);
  const json& sb = rep["scoreboard"];
  EXPECT_EQ(sb["mismatches"].get<uint64_t>(), 0u);
  ASSERT_FALSE(sb["stood_aside"].empty());
  EXPECT_NE(sb["summary"].get<std::string>().find("stood aside on A: register-level write of"), std::string::npos)
      << sb.dump();
}

}  // namespace
