// tb/txlog: the timeline view of the transaction log
// (model/trace/txlog_view.h): the timeline of a synthetic log, unfiltered
// and filtered by node, QP, kind and time range, is exactly the expected
// text; bad input gives 2 naming the file and line.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "model/trace/txlog.h"
#include "model/trace/txlog_view.h"
#include "tb/txlog/txlog_records.h"

using ernic::FrameFields;
using ernic::TimelineFilter;
using ernic::TxLog;
using namespace ernic::test;
using nlohmann::json;

// --- timeline --------------------------------------------------------------

namespace {

void write_synthetic(const std::string& p) {
  TxLog log(p);
  log.step(0, "s.yaml:3:5", "post_send", "start", "qp=2");
  log.reg(100000, "A", "core", 20, 2u, true, 0x20238, "SQPIi[2]", 1);
  log.dma(150000, "A", "core", 30, 2u, "wqe", false, 0x10000, 64);
  log.frame(12345678, "A", "core", 2469, 2u, "tx", "A->B", 5, write_middle());
  log.fault(12345678, "A->B", 5, "drop_mid", "drop", 7, 0xedc9a1, "rule 1");
  FrameFields raw = non_roce();
  raw.src = "192.168.1.1";
  raw.dst = "192.168.1.2";
  log.frame(12350000, "B", "cmac", 3980, std::nullopt, "rx", "A->B", 6, raw);
  log.frame(12400000, "B", "core", 2480, 3u, "tx", "B->A", 1, ack(0xedc9a0));
  log.frame(12410000, "A", "core", 2482, 2u, "rx", "B->A", 1, ack(0xedc9a0));
  log.cqe(13000000, "A", "core", 2600, 2, 0, 1, 0, false, 0x1);
  log.intr(13000000, "A", "core", 2600, true, 0x10);
  log.state(13100000, "B", "core", 2620, 3u, "qp_state", "RTS");
  log.step(13200000, "s.yaml:3:5", "post_send", "end", "");
}

struct View {
  int rc;
  std::string out, err;
};

View view(const std::string& p, const TimelineFilter& f) {
  std::ostringstream out, err;
  const int rc = ernic::print_timeline(p, f, out, err);
  return {rc, out.str(), err.str()};
}

class Timeline : public testing::Test {
 protected:
  void SetUp() override {
    path_ = tmp_path("timeline");
    write_synthetic(path_);
  }
  void TearDown() override { std::remove(path_.c_str()); }
  // The expected text with the file's path in the header.
  std::string expect(const std::string& filter, const std::string& body, const std::string& tail) {
    return "# timeline of " + path_ + "  filter: " + filter + "\n" + body + tail;
  }
  std::string path_;
};

// The synthetic file's 12 records as the timeline prints them, in order;
// each filter test expects a selection of them.
const char* const kLines[] = {
    "      0.000000 us  -  scenario   -    step   start post_send at s.yaml:3:5 (qp=2)\n",
    "      0.100000 us  A  core#  20  QP2  reg    write SQPIi[2] = 0x00000001  (addr 0x20238)\n",
    "      0.150000 us  A  core#  30  QP2  dma    wqe read addr=0x10000 len=64\n",
    "     12.345678 us  A  core#2469  QP2  frame  tx A->B #5  RC_WRITE_MIDDLE psn=0xedc9a1 len=4154 dqp=3\n",
    "     12.345678 us  -  wire       -    fault  drop rule=drop_mid frame A->B #5 RC_WRITE_MIDDLE psn=0xedc9a1 (rule 1)\n",
    "     12.350000 us  B  cmac#3980  -    frame  rx A->B #6  non-RoCE len=60 192.168.1.1->192.168.1.2\n",
    "     12.400000 us  B  core#2480  QP3  frame  tx B->A #1  RC_ACK psn=0xedc9a0 syn=0x1f msn=1 len=62 dqp=2\n",
    "     12.410000 us  A  core#2482  QP2  frame  rx B->A #1  RC_ACK psn=0xedc9a0 syn=0x1f msn=1 len=62 dqp=2\n",
    "     13.000000 us  A  core#2600  QP2  cqe    idx=0 wr_id=1 opcode=WRITE(0) ok raw=0x00000001\n",
    "     13.000000 us  A  core#2600  -    intr   level=1 intsts=0x00000010\n",
    "     13.100000 us  B  core#2620  QP3  state  qp_state = RTS\n",
    "     13.200000 us  -  scenario   -    step   end post_send at s.yaml:3:5\n",
};

std::string rows(std::initializer_list<int> idx) {
  std::string out;
  for (int k : idx) out += kLines[k];
  return out;
}

}  // namespace

TEST_F(Timeline, Unfiltered) {
  const View v = view(path_, {});
  EXPECT_EQ(v.rc, 0);
  EXPECT_EQ(v.err, "");
  EXPECT_EQ(v.out, expect("none", rows({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}),
      "# 12 / 12 records shown\n"));
}

TEST_F(Timeline, ByNode) {
  TimelineFilter f;
  f.nodes = {"B"};
  const View v = view(path_, f);
  EXPECT_EQ(v.rc, 0);
  EXPECT_EQ(v.out, expect("node=B", rows({4, 5, 6, 10}),
      "# 4 / 12 records shown\n"));
}

TEST_F(Timeline, ByQp) {
  TimelineFilter f;
  f.qp = 2;
  const View v = view(path_, f);
  EXPECT_EQ(v.rc, 0);
  EXPECT_EQ(v.out, expect("qp=2", rows({1, 2, 3, 7, 8}),
      "# 5 / 12 records shown\n"));
}

TEST_F(Timeline, ByKind) {
  TimelineFilter f;
  f.kinds = {"fault", "frame"};
  const View v = view(path_, f);
  EXPECT_EQ(v.rc, 0);
  EXPECT_EQ(v.out, expect("kind=fault,frame", rows({3, 4, 5, 6, 7}),
      "# 5 / 12 records shown\n"));
}

TEST_F(Timeline, ByTimeRangeInclusive) {
  TimelineFilter f;
  f.from_us = 12.345678;
  f.to_us = 12.41;
  const View v = view(path_, f);
  EXPECT_EQ(v.rc, 0);
  EXPECT_EQ(v.out, expect("from=12.345678us to=12.41us", rows({3, 4, 5, 6, 7}),
      "# 5 / 12 records shown\n"));
}

TEST_F(Timeline, Combined) {
  TimelineFilter f;
  f.nodes = {"A"};
  f.qp = 2;
  f.kinds = {"frame"};
  f.from_us = 12.4;
  const View v = view(path_, f);
  EXPECT_EQ(v.rc, 0);
  EXPECT_EQ(v.out, expect("node=A qp=2 kind=frame from=12.4us",
      "     12.410000 us  A  core#2482  QP2  frame  rx B->A #1  RC_ACK psn=0xedc9a0 syn=0x1f msn=1 len=62 dqp=2\n",
      "# 1 / 12 records shown\n"));
}

TEST_F(Timeline, NothingMatches) {
  TimelineFilter f;
  f.kinds = {"nosuch"};
  const View v = view(path_, f);
  EXPECT_EQ(v.rc, 0);
  EXPECT_EQ(v.out, expect("kind=nosuch", "", "# 0 / 12 records shown\n"));
}

// Columns widen to fit; control characters in strings stay on one line;
// a kind the viewer does not know shows its fields as key=value.
TEST(TimelineLayout, WidthsEscapesUnknownKinds) {
  const std::string p = tmp_path("layout");
  {
    TxLog log(p);
    log.state(123456789012345ull, "host10", "core", 24691357802ull, 4096u, "note", "a\nb\tc\x01");
    log.write(json{{"t_ps", 5}, {"node", "A"}, {"kind", "custom"}, {"domain", "core"},
                   {"cycle", 1}, {"x", 1}, {"y", "two"}});
    log.intr(6, "A", "", 2, false, 0x80);
  }
  std::ostringstream out, err;
  EXPECT_EQ(ernic::print_timeline(p, {}, out, err), 0);
  EXPECT_EQ(out.str(),
      "# timeline of " + p + "  filter: none\n"
      "        0.000005 us  A       core#          1  -       custom  x=1 y=two\n"
      "        0.000006 us  A       -#             2  -       intr    level=0 intsts=0x00000080\n"
      "123456789.012345 us  host10  core#24691357802  QP4096  state   note = a\\nb\\tc\\x01\n"
      "# 3 / 3 records shown\n");
  std::remove(p.c_str());
}

namespace {

std::string write_text(const std::string& name, const std::string& text) {
  const std::string p = tmp_path(name);
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

const char kGood[] =
    R"({"t_ps":1,"node":"A","kind":"intr","domain":"core","cycle":0,"level":true,"intsts":16})"
    "\n";

}  // namespace

TEST(TimelineErrors, MalformedLineIsNamed) {
  struct Case {
    std::string text;
    std::string err;  // after "<path>:"
  };
  const std::vector<Case> cases = {
      {std::string(kGood) + kGood + R"({"t_ps":1,"kind":"reg")" + "\n",
       "3: malformed transaction log record: not valid JSON (byte 23)\n"},
      {std::string(kGood) +
           R"({"t_ps":5,"node":"A","kind":"cqe","domain":"core","cycle":1,"qp":2})" + "\n" + kGood,
       "2: malformed transaction log record: missing key \"cq_index\"\n"},
      {"[1,2]\n", "1: malformed transaction log record: not a JSON object\n"},
      {std::string(kGood) + "\n", "2: malformed transaction log record: not valid JSON (byte 1)\n"},
      {R"({"t_ps":-1,"kind":"intr"})", "1: malformed transaction log record: \"t_ps\" is not an unsigned integer\n"},
      {R"({"t_ps":1,"kind":"frame","dir":"tx","link":"A->B","index":1,"len":60,"roce":"yes"})",
       "1: malformed transaction log record: \"roce\" is not a boolean\n"},
      // A number no double holds: nlohmann's out_of_range (was uncaught, exit 1).
      {std::string(kGood) + R"({"t_ps": 1e400})" + "\n",
       "2: malformed transaction log record: not valid JSON (number overflow parsing '1e400')\n"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(i);
    const std::string p = write_text("bad" + std::to_string(i), cases[i].text);
    const View v = view(p, {});
    EXPECT_EQ(v.rc, 2);
    EXPECT_EQ(v.out, "");  // nothing printed before the whole file is checked
    EXPECT_EQ(v.err, p + ":" + cases[i].err);
    std::remove(p.c_str());
  }
}

TEST(TimelineErrors, UnreadableFile) {
  const std::string p = tmp_path("missing");
  std::remove(p.c_str());
  View v = view(p, {});
  EXPECT_EQ(v.rc, 2);
  EXPECT_EQ(v.out, "");
  EXPECT_EQ(v.err, p + ": cannot read the transaction log: No such file or directory\n");
  v = view(testing::TempDir(), {});
  EXPECT_EQ(v.rc, 2);
  EXPECT_NE(v.err.find("is a directory"), std::string::npos) << v.err;
  // Not a regular file: refused, as `run` refuses such a scenario (/dev/zero
  // was read forever).
  v = view("/dev/zero", {});
  EXPECT_EQ(v.rc, 2);
  EXPECT_EQ(v.out, "");
  EXPECT_EQ(v.err, "/dev/zero: cannot read the transaction log: not a regular file\n");
}

TEST(TimelineErrors, EmptyFileIsFine) {
  const std::string p = write_text("empty", "");
  const View v = view(p, {});
  EXPECT_EQ(v.rc, 0);
  EXPECT_EQ(v.out, "# timeline of " + p + "  filter: none\n# 0 / 0 records shown\n");
  std::remove(p.c_str());
}
