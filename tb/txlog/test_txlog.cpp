// tb/txlog: the transaction log writer (model/trace/txlog.h); its
// timeline view is tested in test_txlog_view.cpp.
//  - every typed call gives one line equal to a literal expected record
//    (bytes and key order, and as a parsed json object);
//  - the typed writer and write(json) give identical bytes for the same record;
//  - JSON string escaping (quotes, backslashes, control characters, UTF-8,
//    invalid UTF-8) matches nlohmann::json::dump;
//  - one instant's records in one order whatever the order of writing;
//  - throughput of the typed frame record (printed, not asserted).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "model/trace/txlog.h"
#include "tb/txlog/txlog_records.h"

using ernic::FrameFields;
using ernic::TxLog;
using nlohmann::json;

using namespace ernic::test;

namespace {

// One call of every typed record (and their variants), in this order.
void write_all_typed(TxLog& log) {
  log.reg(12345678, "A", "core", 2469, 2u, true, 0x20238, "SQPIi[2]", 1);
  log.reg(100, "B", "core", 0, std::nullopt, false, 0x20000, "XRNICCONF", 0xFFFFFFFFu);
  log.dma(200000, "A", "core", 40, 2u, "wqe", false, 0x100000000ull, 64);
  log.dma(210000, "B", "core", 42, std::nullopt, "payload", true, 0, 4096);
  log.dma(220000, "A", "core", 44, 2u, "payload", false, 0x20F00, 0x2100, 3, 17, 33);
  log.dma(230000, "A", "core", 46, 2u, "completion", true, 0x30F80, 0x200, 2, 3);
  log.frame(12345678, "A", "core", 2469, 2u, "tx", "A->B", 5, write_middle());
  log.frame(12400000, "B", "core", 2480, 3u, "tx", "B->A", 1, ack(0xedc9a1));
  log.frame(5000000, "A", "core", 1000, 1u, "tx", "A->B", 0, cm_mad());
  log.frame(7000, "B", "cmac", 2, std::nullopt, "rx", "A->B", 9, non_roce());
  log.cqe(13000000, "A", "core", 2600, 2, 0, 1, 0, false, 0x1);
  log.cqe(13000005, "A", "core", 2601, 2, 5, 0xffff, 4, true, 0x0104ffff);
  log.intr(13050000, "A", "core", 2610, true, 0x10);
  log.intr(13060000, "A", "core", 2612, false, 0);
  log.fault(12500000, "A->B", 7, "drop_mid", "drop", 7, 0xedc9a2, "");
  log.fault(12600000, "B->A", 8, "corrupt_any", "corrupt", -1, -1, "byte 40 ^= 0x01");
  log.state(1000, "A", "core", 0, 2u, "qp_state", "RTS");
  log.state(1001, "A", "core", 0, std::nullopt, "link", "up");
  log.step(0, "s.yaml:12:5", "write_reg", "start", "SQPIi[2] = 1");
  log.step(18446744073709551615ull, "s.yaml:13:5", "wait_until", "end", "");
}

// The expected lines of write_all_typed, written out literally.
const std::vector<std::string> kExpectedTyped = {
    R"({"t_ps":12345678,"node":"A","kind":"reg","domain":"core","cycle":2469,"qp":2,"op":"write","addr":131640,"name":"SQPIi[2]","value":1})",
    R"({"t_ps":100,"node":"B","kind":"reg","domain":"core","cycle":0,"op":"read","addr":131072,"name":"XRNICCONF","value":4294967295})",
    R"({"t_ps":200000,"node":"A","kind":"dma","domain":"core","cycle":40,"qp":2,"master":"wqe","op":"read","addr":4294967296,"len":64})",
    R"({"t_ps":210000,"node":"B","kind":"dma","domain":"core","cycle":42,"master":"payload","op":"write","addr":0,"len":4096})",
    R"({"t_ps":220000,"node":"A","kind":"dma","domain":"core","cycle":44,"qp":2,"master":"payload","op":"read","addr":134912,"len":8448,"bursts":3,"tlps":17,"cpls":33})",
    R"({"t_ps":230000,"node":"A","kind":"dma","domain":"core","cycle":46,"qp":2,"master":"completion","op":"write","addr":200576,"len":512,"bursts":2,"tlps":3})",
    R"({"t_ps":12345678,"node":"A","kind":"frame","domain":"core","cycle":2469,"qp":2,"dir":"tx","link":"A->B","index":5,"len":4154,"roce":true,"opcode":7,"opname":"RC_WRITE_MIDDLE","psn":15583649,"dest_qp":3,"ack_req":false,"src":"192.168.1.1","dst":"192.168.1.2"})",
    R"({"t_ps":12400000,"node":"B","kind":"frame","domain":"core","cycle":2480,"qp":3,"dir":"tx","link":"B->A","index":1,"len":62,"roce":true,"opcode":17,"opname":"RC_ACK","psn":15583649,"dest_qp":2,"ack_req":false,"syndrome":31,"msn":1,"src":"192.168.1.2","dst":"192.168.1.1"})",
    R"({"t_ps":5000000,"node":"A","kind":"frame","domain":"core","cycle":1000,"qp":1,"dir":"tx","link":"A->B","index":0,"len":318,"roce":true,"opcode":100,"opname":"UD_SEND_ONLY","psn":0,"dest_qp":1,"ack_req":true,"mad":"ConnectRequest","src":"192.168.1.1","dst":"192.168.1.2"})",
    R"({"t_ps":7000,"node":"B","kind":"frame","domain":"cmac","cycle":2,"dir":"rx","link":"A->B","index":9,"len":60,"roce":false,"src":"","dst":""})",
    R"({"t_ps":13000000,"node":"A","kind":"cqe","domain":"core","cycle":2600,"qp":2,"cq_index":0,"wr_id":1,"opcode":0,"error":false,"raw":1})",
    R"({"t_ps":13000005,"node":"A","kind":"cqe","domain":"core","cycle":2601,"qp":2,"cq_index":5,"wr_id":65535,"opcode":4,"error":true,"raw":17104895})",
    R"({"t_ps":13050000,"node":"A","kind":"intr","domain":"core","cycle":2610,"level":true,"intsts":16})",
    R"({"t_ps":13060000,"node":"A","kind":"intr","domain":"core","cycle":2612,"level":false,"intsts":0})",
    R"({"t_ps":12500000,"node":"","kind":"fault","domain":"wire","cycle":0,"link":"A->B","index":7,"rule":"drop_mid","action":"drop","opcode":7,"psn":15583650,"detail":""})",
    R"({"t_ps":12600000,"node":"","kind":"fault","domain":"wire","cycle":0,"link":"B->A","index":8,"rule":"corrupt_any","action":"corrupt","opcode":-1,"psn":-1,"detail":"byte 40 ^= 0x01"})",
    R"({"t_ps":1000,"node":"A","kind":"state","domain":"core","cycle":0,"qp":2,"what":"qp_state","value":"RTS"})",
    R"({"t_ps":1001,"node":"A","kind":"state","domain":"core","cycle":0,"what":"link","value":"up"})",
    R"({"t_ps":0,"node":"","kind":"step","domain":"scenario","cycle":0,"at":"s.yaml:12:5","step":"write_reg","phase":"start","detail":"SQPIi[2] = 1"})",
    R"({"t_ps":18446744073709551615,"node":"","kind":"step","domain":"scenario","cycle":0,"at":"s.yaml:13:5","step":"wait_until","phase":"end","detail":""})",
};

}  // namespace

TEST(TxLog, OpenFailureNamesThePath) {
  const std::string bad = "/nonexistent-dir-for-txlog/x.jsonl";
  try {
    TxLog log(bad);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
}

TEST(TxLog, TypedRecordsAreTheExpectedObjects) {
  const std::string p = tmp_path("typed");
  {
    TxLog log(p);
    write_all_typed(log);
    EXPECT_EQ(log.records(), kExpectedTyped.size());
  }
  const std::vector<std::string> got = lines_of(p);
  ASSERT_EQ(got.size(), kExpectedTyped.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(i);
    // The line parses and is the expected object...
    json j;
    ASSERT_NO_THROW(j = json::parse(got[i])) << got[i];
    EXPECT_EQ(j, json::parse(kExpectedTyped[i]));
    // ...with the keys in the documented order, compact.
    EXPECT_EQ(got[i], kExpectedTyped[i]);
  }
  // Exactly one '\n' per record, including the last.
  const std::string all = slurp(p);
  EXPECT_EQ(size_t(std::count(all.begin(), all.end(), '\n')), kExpectedTyped.size());
  EXPECT_EQ(all.back(), '\n');
  std::remove(p.c_str());
}

TEST(TxLog, TypedAndJsonWritersGiveTheSameBytes) {
  // Explicitly built json objects (stored sorted by key inside nlohmann::json;
  // write() must restore the record order).
  const std::string pt = tmp_path("bytes_typed"), pj = tmp_path("bytes_json");
  {
    TxLog t(pt), j(pj);
    t.reg(12345678, "A", "core", 2469, 2u, true, 0x20238, "SQPIi[2]", 1);
    j.write(json{{"t_ps", 12345678}, {"node", "A"}, {"kind", "reg"}, {"domain", "core"},
                 {"cycle", 2469}, {"qp", 2}, {"op", "write"}, {"addr", 0x20238},
                 {"name", "SQPIi[2]"}, {"value", 1}});
    t.frame(12400000, "B", "core", 2480, 3u, "tx", "B->A", 1, ack(0xedc9a1));
    j.write(json{{"t_ps", 12400000}, {"node", "B"}, {"kind", "frame"}, {"domain", "core"},
                 {"cycle", 2480}, {"qp", 3}, {"dir", "tx"}, {"link", "B->A"}, {"index", 1},
                 {"len", 62}, {"roce", true}, {"opcode", 17}, {"opname", "RC_ACK"},
                 {"psn", 0xedc9a1}, {"dest_qp", 2}, {"ack_req", false}, {"syndrome", 31},
                 {"msn", 1}, {"src", "192.168.1.2"}, {"dst", "192.168.1.1"}});
    t.fault(12600000, "B->A", 8, "corrupt_any", "corrupt", -1, -1, "byte 40 ^= 0x01");
    j.write(json{{"t_ps", 12600000}, {"node", ""}, {"kind", "fault"}, {"domain", "wire"},
                 {"cycle", 0}, {"link", "B->A"}, {"index", 8}, {"rule", "corrupt_any"},
                 {"action", "corrupt"}, {"opcode", -1}, {"psn", -1},
                 {"detail", "byte 40 ^= 0x01"}});
    const std::string odd = std::string("q\"b\\s\x01\n\x7f\xc2\xb5\xff", 11);
    t.state(5, odd, "core", 1, std::nullopt, odd, odd);
    j.write(json{{"t_ps", 5}, {"node", odd}, {"kind", "state"}, {"domain", "core"}, {"cycle", 1},
                 {"what", odd}, {"value", odd}});
    // Larger than the writer's buffer once escaped.
    const std::string big = std::string(150000, '"') + std::string(150000, '\x01');
    t.state(6, "A", "core", 2, 1u, "big", big);
    j.write(json{{"t_ps", 6}, {"node", "A"}, {"kind", "state"}, {"domain", "core"}, {"cycle", 2},
                 {"qp", 1}, {"what", "big"}, {"value", big}});
    t.step(0, "s.yaml:1:1", "init", "end", "");
    j.write(json{{"t_ps", 0}, {"node", ""}, {"kind", "step"}, {"domain", "scenario"},
                 {"cycle", 0}, {"at", "s.yaml:1:1"}, {"step", "init"}, {"phase", "end"},
                 {"detail", ""}});
  }
  EXPECT_EQ(slurp(pt), slurp(pj));

  // Every typed record: parse its line and write it back through write().
  const std::string pr = tmp_path("bytes_roundtrip");
  {
    TxLog t(pt);
    write_all_typed(t);
  }
  {
    TxLog j(pr);
    for (const std::string& l : lines_of(pt)) j.write(json::parse(l));
    EXPECT_EQ(j.records(), kExpectedTyped.size());
  }
  EXPECT_EQ(slurp(pt), slurp(pr));
  for (const auto& p : {pt, pj, pr}) std::remove(p.c_str());
}

// One instant's records: sorted by node between records without one (a
// step stays where it was); once a parallel branch's step is among them,
// the steps go last in their scenario order and the rest sorts as one run,
// so two orders of writing give one file (model/trace/txlog.h).
TEST(TxLog, AnInstantWithABranchStepPutsItsStepsLastInScenarioOrder) {
  auto write = [](const std::string& p, bool b_first) {
    TxLog log(p);
    uint64_t now = 100;
    log.clock = [&now] { return now; };
    log.step(100, "s.yaml:5:5", "parallel", "start", "", "000000050", false);
    auto branch = [&](const char* node, const char* at, const char* order) {
      log.reg(100, node, "core", 20, std::nullopt, true, 0x20, "SQPIi", 1);
      log.step(100, at, "post", "start", "", order, true);
    };
    if (b_first) {
      branch("B", "s.yaml:9:9", "000000051000000010000000000");
      branch("A", "s.yaml:7:9", "000000051000000000000000000");
    } else {
      branch("A", "s.yaml:7:9", "000000051000000000000000000");
      branch("B", "s.yaml:9:9", "000000051000000010000000000");
    }
    now = 200;  // a later instant, not a parallel one: kept as written
    log.reg(200, "B", "core", 40, std::nullopt, false, 0x24, "CQHEADi", 0);
    log.step(200, "s.yaml:12:5", "wait", "start", "", "000000060", false);
    log.reg(200, "A", "core", 40, std::nullopt, false, 0x24, "CQHEADi", 0);
  };
  const std::string p1 = tmp_path("branch1"), p2 = tmp_path("branch2");
  write(p1, false);
  write(p2, true);
  EXPECT_EQ(slurp(p1), slurp(p2));
  const std::vector<std::string> got = lines_of(p1);
  ASSERT_EQ(got.size(), 8u);
  EXPECT_NE(got[0].find("\"node\":\"A\""), std::string::npos) << got[0];  // the registers first, by node
  EXPECT_NE(got[1].find("\"node\":\"B\""), std::string::npos) << got[1];
  EXPECT_NE(got[2].find("\"step\":\"parallel\""), std::string::npos) << got[2];  // then the steps by order
  EXPECT_NE(got[3].find("s.yaml:7:9"), std::string::npos) << got[3];
  EXPECT_NE(got[4].find("s.yaml:9:9"), std::string::npos) << got[4];
  EXPECT_NE(got[5].find("\"node\":\"B\""), std::string::npos) << got[5];  // the step separates: B stays first
  EXPECT_NE(got[6].find("\"step\":\"wait\""), std::string::npos) << got[6];
  EXPECT_NE(got[7].find("\"node\":\"A\""), std::string::npos) << got[7];
  std::remove(p1.c_str());
  std::remove(p2.c_str());
}

// A fault record (node "") is ordered under its link's sending node, after
// that node's own records of the instant: B's record, A's frame and A's
// fault written in any order give A's frame, the fault, B's record (random
// seed 86 split: one process wrote B, fault, A; the merge another order).
TEST(TxLog, AFaultRecordSortsUnderItsSenderAfterItsOwnRecords) {
  FrameFields f;
  f.len = 570;
  f.roce = true;
  f.opcode = 7;
  f.opname = "RC_WRITE_MIDDLE";
  auto write = [&f](const std::string& p, int order) {
    TxLog log(p);
    log.clock = [] { return uint64_t(21900974); };
    auto b = [&] { log.reg(21900974, "B", "core", 4380, std::nullopt, false, 0x24, "CQHEADi", 0); };
    auto a = [&] { log.frame(21901614, "A", "cmac", 7058, 3, "tx", "A->B", 60, f); };
    auto fault = [&] { log.fault(21900974, "A->B", 60, "fault@34", "delay", 7, 1815010, "+355000 ps"); };
    if (order == 0) b(), fault(), a();
    if (order == 1) a(), b(), fault();
    if (order == 2) fault(), a(), b();
  };
  std::vector<std::string> p;
  for (int k = 0; k < 3; ++k) p.push_back(tmp_path("fault_order" + std::to_string(k)));
  for (int k = 0; k < 3; ++k) write(p[size_t(k)], k);
  EXPECT_EQ(slurp(p[0]), slurp(p[1]));
  EXPECT_EQ(slurp(p[0]), slurp(p[2]));
  const std::vector<std::string> got = lines_of(p[0]);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].rfind(R"({"t_ps":21901614,"node":"A","kind":"frame")", 0), 0u) << got[0];
  EXPECT_EQ(got[1].rfind(R"({"t_ps":21900974,"node":"","kind":"fault")", 0), 0u) << got[1];
  EXPECT_EQ(got[2].rfind(R"({"t_ps":21900974,"node":"B","kind":"reg")", 0), 0u) << got[2];
  for (const auto& q : p) std::remove(q.c_str());
}

TEST(TxLog, WriteKeepsUnknownKeysAfterTheKnownOnes) {
  const std::string p = tmp_path("unknown");
  {
    TxLog log(p);
    log.write(json{{"zz", 1}, {"kind", "intr"}, {"aa", "x"}, {"intsts", 2}, {"level", true},
                   {"t_ps", 3}, {"node", "A"}, {"domain", "core"}, {"cycle", 4}});
    log.write(json{{"kind", "custom"}, {"t_ps", 1}, {"b", json::array({1, 2})}, {"a", nullptr}});
    log.write(json::object());
    EXPECT_THROW(log.write(json::array({1})), std::invalid_argument);
    EXPECT_EQ(log.records(), 3u);
  }
  EXPECT_EQ(slurp(p),
            "{\"t_ps\":3,\"node\":\"A\",\"kind\":\"intr\",\"domain\":\"core\",\"cycle\":4,"
            "\"level\":true,\"intsts\":2,\"aa\":\"x\",\"zz\":1}\n"
            "{\"t_ps\":1,\"kind\":\"custom\",\"a\":null,\"b\":[1,2]}\n"
            "{}\n");
  std::remove(p.c_str());
}

TEST(TxLog, Escaping) {
  // Literal expectations.
  EXPECT_EQ(TxLog::quote("plain"), R"("plain")");
  EXPECT_EQ(TxLog::quote("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(TxLog::quote(std::string("\x00\x01\b\t\n\x0b\f\r\x1f", 9)),
            R"("\u0000\u0001\b\t\n\u000b\f\r\u001f")");
  EXPECT_EQ(TxLog::quote("/ \x7f"), "\"/ \x7f\"");          // not escaped by JSON
  EXPECT_EQ(TxLog::quote("\xc2\xb5s"), "\"\xc2\xb5s\"");       // UTF-8 kept as is
  EXPECT_EQ(TxLog::quote("a\xff" "b"), "\"a\xef\xbf\xbd" "b\"");  // invalid UTF-8 -> U+FFFD

  // A record with such strings parses back to the same strings.
  const std::string p = tmp_path("escape");
  static const char kNasty[] = "say \"hi\"\\ \x00\x02\n\r\t\b\f\x1f end";
  const std::string nasty(kNasty, sizeof kNasty - 1);
  {
    TxLog log(p);
    log.state(1, "node\"1", "core", 2, 7u, nasty, "C:\\path\\x");
  }
  const std::vector<std::string> l = lines_of(p);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0],
            R"({"t_ps":1,"node":"node\"1","kind":"state","domain":"core","cycle":2,"qp":7,)"
            R"("what":"say \"hi\"\\ \u0000\u0002\n\r\t\b\f\u001f end","value":"C:\\path\\x"})");
  const json j = json::parse(l[0]);
  EXPECT_EQ(j["what"].get<std::string>(), nasty);
  EXPECT_EQ(j["node"].get<std::string>(), "node\"1");
  EXPECT_EQ(j["value"].get<std::string>(), "C:\\path\\x");
  std::remove(p.c_str());

  // Same bytes as nlohmann's serializer: every single byte, then random strings.
  auto dumped = [](const std::string& s) {
    return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
  };
  for (int c = 0; c < 256; ++c) {
    const std::string s(1, char(c));
    EXPECT_EQ(TxLog::quote(s), dumped(s)) << c;
  }
  std::mt19937 rng(12345);
  const std::string alphabet = std::string("ab\"\\\x00\x01\x1f\x7f\xc2\xb5\xe2\x82\xac\xff\xed\xa0", 16);
  for (int n = 0; n < 20000; ++n) {
    std::string s;
    for (size_t k = rng() % 10; k; --k) s += alphabet[rng() % alphabet.size()];
    ASSERT_EQ(TxLog::quote(s), dumped(s)) << "case " << n;
  }
}

// --- speed -----------------------------------------------------------------

TEST(TxLogSpeed, MillionFrames) {
  const std::string p = tmp_path("speed");
  constexpr uint64_t kN = 1000000;
  const std::string node = "A", link = "A->B";
  FrameFields f = write_middle();
  const auto t0 = std::chrono::steady_clock::now();
  {
    TxLog log(p);
    for (uint64_t i = 0; i < kN; ++i) {
      f.psn = uint32_t(0xedc9a1 + i) & 0xFFFFFF;
      log.frame(12345678 + i * 3103, node, "core", 2469 + i, 2u, "tx", link, i, f);
    }
    log.flush();
    EXPECT_EQ(log.records(), kN);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ifstream in(p, std::ios::binary | std::ios::ate);
  const auto bytes = uint64_t(in.tellg());
  std::cout << "[ txlog    ] " << kN << " typed frame records, " << bytes << " bytes in " << s
            << " s: " << uint64_t(double(kN) / s) << " records/s, " << double(bytes) / s / 1e6
            << " MB/s\n";
  RecordProperty("frames_per_second", std::to_string(uint64_t(double(kN) / s)));
  // Spot-check the last line.
  in.seekg(0);
  std::string line, last;
  uint64_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    last.swap(line);
  }
  EXPECT_EQ(n, kN);
  const json j = json::parse(last);
  EXPECT_EQ(j["index"], kN - 1);
  EXPECT_EQ(j["psn"], (0xedc9a1 + kN - 1) & 0xFFFFFF);
  std::remove(p.c_str());
}
