// tb/roce: frames the captures lack (test_frames.cpp), written to a pcap and
// read back with tshark: every field must decode to the value set, and no
// frame may be malformed. Also decodes each frame with roce::decode.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "model/roce/cm.h"
#include "model/roce/icrc.h"
#include "model/roce/packet.h"
#include "tb/roce/test_frames.h"
#include "tb/roce/test_util.h"

using namespace roce;
using namespace roce_test;

namespace {

class TsharkFrames : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    frames_ = new std::vector<TestFrame>(build_test_frames());
    char tmpl[] = "/tmp/roce_tshark_XXXXXX";
    const char* dir = mkdtemp(tmpl);
    ASSERT_NE(dir, nullptr);
    dir_ = new std::string(dir);
    pcap_ = new std::string(*dir_ + "/frames.pcap");
    std::vector<Bytes> raw;
    for (const auto& f : *frames_) raw.push_back(f.bytes);
    ASSERT_TRUE(write_pcap(*pcap_, raw));
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    std::filesystem::remove_all(*dir_, ec);
    delete frames_;
    delete dir_;
    delete pcap_;
  }
  static std::string tshark(const std::string& args, int* status) {
    return run(std::string(TSHARK_PROGRAM) + " --disable-protocol rpcordma -r " + shell_quote(*pcap_) +
                   " " + args + " 2>/dev/null",
               status);
  }
  static std::vector<TestFrame>* frames_;
  static std::string* dir_;
  static std::string* pcap_;
};
std::vector<TestFrame>* TsharkFrames::frames_ = nullptr;
std::string* TsharkFrames::dir_ = nullptr;
std::string* TsharkFrames::pcap_ = nullptr;

TEST_F(TsharkFrames, AllFramesPresentAndNoneMalformed) {
  int st = 0;
  const auto lines = split_lines(tshark("-T fields -e frame.number -e frame.protocols", &st));
  ASSERT_EQ(st, 0);
  ASSERT_EQ(lines.size(), frames_->size());
  for (const auto& l : lines) EXPECT_NE(l.find("eth:ethertype:ip"), std::string::npos) << l;
  for (const auto& l : lines) EXPECT_NE(l.find(":udp:infiniband"), std::string::npos) << l;
  const std::string bad = tshark("-Y _ws.malformed -T fields -e frame.number", &st);
  ASSERT_EQ(st, 0);
  EXPECT_EQ(bad, "") << "malformed frames: " << bad;
  // Expert warnings and errors: the only one allowed is tshark's complaint
  // about the zero UDP checksum of the IPv6 frame (RoCEv2 sends UDP
  // checksum 0 over IPv6 too, as Linux RXE does).
  size_t ipv6_frame = 0;
  for (size_t i = 0; i < frames_->size(); ++i)
    if ((*frames_)[i].name == "ipv6_send_only") ipv6_frame = i + 1;
  ASSERT_NE(ipv6_frame, 0u);
  const std::string expert = tshark(
      "-Y \"_ws.expert.severity >= 0x00600000\" -T fields -E separator=, -E quote=d "
      "-E occurrence=a -e frame.number -e _ws.expert.message",
      &st);
  ASSERT_EQ(st, 0);
  EXPECT_EQ(expert, "\"" + std::to_string(ipv6_frame) + "\",\"Illegal checksum value (0)\"\n");
}

TEST_F(TsharkFrames, FieldsDecodeToTheValuesSet) {
  // One tshark run with every field any frame expects.
  std::vector<std::string> fields;
  std::map<std::string, size_t> col;
  for (const auto& f : *frames_)
    for (const auto& [k, v] : f.expect)
      if (!col.count(k)) {
        col[k] = fields.size() + 1;  // column 0 is frame.number
        fields.push_back(k);
      }
  std::string args = "-T fields -E separator=, -E quote=d -E occurrence=f -e frame.number";
  for (const auto& k : fields) args += " -e " + k;
  int st = 0;
  const auto lines = split_lines(tshark(args, &st));
  ASSERT_EQ(st, 0);
  ASSERT_EQ(lines.size(), frames_->size());
  size_t checked = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const TestFrame& tf = (*frames_)[i];
    SCOPED_TRACE(tf.name);
    const auto v = split_csv(lines[i]);
    ASSERT_EQ(v.size(), fields.size() + 1) << lines[i];
    EXPECT_EQ(v[0], std::to_string(i + 1));
    for (const auto& [k, want] : tf.expect) {
      const std::string& got = v[col[k]];
      if (k == "_ws.col.Info")
        EXPECT_NE(got.find(want), std::string::npos) << k << ": '" << got << "'";
      else
        EXPECT_EQ(got, want) << k;
      ++checked;
    }
  }
  EXPECT_GT(checked, 100u);
}

// The CM attribute names the library prints are the ones tshark prints.
TEST_F(TsharkFrames, CmAttrNamesMatchTshark) {
  int st = 0;
  const auto lines = split_lines(
      tshark("-Y infiniband.mad -T fields -E separator=, -E quote=d -e infiniband.mad.attributeid -e _ws.col.Info", &st));
  ASSERT_EQ(st, 0);
  std::set<uint16_t> seen;
  for (const auto& l : lines) {
    const auto v = split_csv(l);
    ASSERT_EQ(v.size(), 2u);
    const uint16_t id = uint16_t(std::stoul(v[0], nullptr, 16));
    seen.insert(id);
    EXPECT_EQ(v[1], std::string("CM: ") + cm::attr_name(id));
  }
  EXPECT_EQ(seen, (std::set<uint16_t>{cm::attr::REQ, cm::attr::REP, cm::attr::RTU, cm::attr::REJ,
                                      cm::attr::DREQ, cm::attr::DREP}));
}

// The same frames through our own decoder: ICRC, re-encode, CM MAD contents.
TEST_F(TsharkFrames, DecodeAndReencode) {
  for (const auto& tf : *frames_) {
    SCOPED_TRACE(tf.name);
    DecodeError e;
    const auto f = decode(tf.bytes, &e);
    ASSERT_TRUE(f) << decode_error_name(e);
    EXPECT_EQ(f->icrc, compute_icrc(tf.bytes.data(), tf.bytes.size() - 4));
    EXPECT_EQ(encode(*f, EncodeOptions{false, false, false, false}), tf.bytes);
    EXPECT_EQ((f->payload.size() + f->bth.pad_cnt) % 4, 0u);
    if (tf.name.rfind("cm_", 0) == 0) {
      EXPECT_EQ(f->bth.opcode, 0x64);
      EXPECT_EQ(f->bth.dest_qp, 1u);
      EXPECT_EQ(f->bth.pkey, 0xFFFF);
      ASSERT_TRUE(f->deth);
      EXPECT_EQ(f->deth->qkey, 0x80010000u);
      EXPECT_EQ(f->deth->src_qp, 1u);
      ASSERT_EQ(f->payload.size(), 256u);
      const auto mad = cm::decode_mad(f->payload.data(), f->payload.size());
      ASSERT_TRUE(mad);
      if (tf.name == "cm_req") {
        const auto& r = std::get<cm::Req>(mad->msg);
        EXPECT_EQ(r.local_qpn, 0x11u);
        EXPECT_EQ(r.start_psn, 0xABCDEFu);
        const auto ip = cm::decode_ip_hdr(r.private_data.data(), r.private_data.size());
        ASSERT_TRUE(ip);
        EXPECT_EQ(ip->port, 0xC123);
        const auto mr = cm::decode_mr_info(r.private_data.data() + 36, r.private_data.size() - 36);
        ASSERT_TRUE(mr);
        EXPECT_EQ(mr->rkey, 0xABCu);
        EXPECT_EQ(mr->length, 65536u);
      }
    }
  }
}

}  // namespace
