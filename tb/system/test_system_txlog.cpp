// tb/system: the transaction log (--log) of the default scenario read as a
// timeline of one QP, against the packet captures: A's RC QP (its QPN from
// the ConnectRequest's LocalQPN, decoded by tshark), the WRITE packets A
// sends on it and the ACK it receives must be the log's frame records of
// node A with that qp, in the same order, with the same opcodes, PSNs,
// lengths and times; `ernic-sim log --node A --qp N --kind frame` must
// print exactly those, one line each. Also: the order of the records in
// the file, the completion after the ACK, the doorbell before the first
// packet.
//
// Expected values come from the scenario file (read with yaml-cpp: WRITE
// length, PMTU, wr_id, node IPs), from the pcap taps (parsed by hand:
// Ethernet 14, IPv4 20, UDP 8, BTH 12, AETH 4), from tshark's CM decoding
// and from the line arithmetic of 100 Gb/s Ethernet (80 ps a byte).
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "model/trace/pcap_writer.h"
#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;
using json = nlohmann::json;
using Bytes = std::vector<uint8_t>;

constexpr uint64_t kPsPerByte = 80;       // 100 Gb/s
constexpr uint64_t kPreamble = 8, kFcs = 4;
constexpr size_t kBthOff = 14 + 20 + 8;   // Ethernet, IPv4 (no options), UDP
constexpr int kWriteFirst = 6, kWriteMiddle = 7, kWriteLast = 8, kAck = 17;  // IBTA RC opcodes
// CMAC RX: a frame is handed on (and its rx record written) within
// rx_latency_cycles (8, assumption A-CMAC-2 in model/link/cmac.h) plus one
// clock edge of its last byte; 3103 ps a CMAC cycle.
constexpr uint64_t kRxTapSlackPs = (8 + 1) * kCmacPeriodPs;

const char* opname(int op) {
  switch (op) {
    case kWriteFirst: return "RC_WRITE_FIRST";
    case kWriteMiddle: return "RC_WRITE_MIDDLE";
    case kWriteLast: return "RC_WRITE_LAST";
    case kAck: return "RC_ACK";
    default: return "?";
  }
}

uint32_t be(const Bytes& d, size_t off, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | d.at(off + i);
  return v;
}

struct Pkt {  // one frame of a tap, parsed by hand
  size_t index;   // position in its tap file
  uint64_t ns;    // pcap timestamp
  size_t len;
  int opcode;
  uint32_t dest_qp, psn;
  bool ack_req;
  std::optional<uint8_t> syndrome;
  std::optional<uint32_t> msn;
  bool tx;        // on A's tx tap (else A's rx tap)
};

std::optional<Pkt> parse(const ernic::PcapFrame& f, size_t index, bool tx) {
  const Bytes& d = f.data;
  if (d.size() < kBthOff + 12 + 4 || be(d, 12, 2) != 0x0800 || d[23] != 17 || be(d, 36, 2) != 4791)
    return std::nullopt;
  Pkt p{index, f.time_ns, d.size(), d[kBthOff], be(d, kBthOff + 5, 3), be(d, kBthOff + 9, 3),
        (d[kBthOff + 8] & 0x80) != 0, std::nullopt, std::nullopt, tx};
  if (p.opcode == kAck) {
    p.syndrome = d.at(kBthOff + 12);
    p.msn = be(d, kBthOff + 13, 3);
  }
  return p;
}

uint64_t num(const YAML::Node& n) { return std::stoull(n.Scalar(), nullptr, 0); }

class SystemTxlog : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_dir();
    SimResult r = run_sim(dir_, {"run", kDefaultScenario, "--pcap", "out.pcap", "--log", "out.log", "--json", "out.json",
                                 "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    scn_ = YAML::LoadFile(kDefaultScenario);
    std::istringstream in(read_text(dir_ / "out.log"));
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) log_.push_back(json::parse(line));
    ASSERT_FALSE(log_.empty());

    // A's and B's QPNs of the connection: LocalQPN of the ConnectRequest
    // (sent by A's IP) and of the ConnectReply (sent by B's IP).
    const std::string a_ip = scn_["nodes"]["A"]["ip"].Scalar(), b_ip = scn_["nodes"]["B"]["ip"].Scalar();
    int st = 0;
    auto rows = tshark_fields(dir_ / "out.pcap",
                              {"ip.src", "infiniband.cm.req.localqpn", "infiniband.cm.rep.localqpn"}, &st);
    ASSERT_EQ(st, 0);
    for (const auto& row : rows) {
      ASSERT_EQ(row.size(), 3u);
      if (!row[1].empty() && row[0] == a_ip) a_qpn_ = uint32_t(to_u64(row[1]));
      if (!row[2].empty() && row[0] == b_ip) b_qpn_ = uint32_t(to_u64(row[2]));
    }
    ASSERT_NE(a_qpn_, 0u) << "no ConnectRequest from " << a_ip;
    ASSERT_NE(b_qpn_, 0u) << "no ConnectReply from " << b_ip;

    // A's RC frames of that QP: WRITE packets to B's QPN on A's tx tap, and
    // the RC frames to A's QPN on A's rx tap; in time order.
    const auto tx = ernic::PcapReader::read_all((dir_ / "out.A-tx.pcap").string());
    const auto rx = ernic::PcapReader::read_all((dir_ / "out.A-rx.pcap").string());
    for (size_t i = 0; i < tx.size(); ++i)
      if (auto p = parse(tx[i], i, true); p && p->opcode < 0x20 && p->dest_qp == b_qpn_) pkts_.push_back(*p);
    for (size_t i = 0; i < rx.size(); ++i)
      if (auto p = parse(rx[i], i, false); p && p->opcode < 0x20 && p->dest_qp == a_qpn_) pkts_.push_back(*p);
    std::stable_sort(pkts_.begin(), pkts_.end(), [](const Pkt& x, const Pkt& y) { return x.ns < y.ns; });
  }

  // Node A's frame records with qp = A's QPN, in file order.
  std::vector<json> qp_frames() const {
    std::vector<json> v;
    for (const auto& r : log_)
      if (r["kind"] == "frame" && r["node"] == "A" && r.contains("qp") && r["qp"] == a_qpn_) v.push_back(r);
    return v;
  }

  fs::path dir_;
  YAML::Node scn_;
  std::vector<json> log_;
  uint32_t a_qpn_ = 0, b_qpn_ = 0;
  std::vector<Pkt> pkts_;
};

// The taps hold what the scenario makes: one WRITE of `length` bytes cut at
// the PMTU (FIRST, MIDDLE..., LAST with AckReq, consecutive PSNs), then one
// ACK of the last PSN. The log's records of A's QP are those frames.
TEST_F(SystemTxlog, QpFrameRecordsAreTheTapsFramesInOrder) {
  YAML::Node post, conn;
  for (const auto& s : scn_["steps"]) {
    if (s["post"]) post = s["post"];
    if (s["connect"]) conn = s["connect"];
  }
  ASSERT_TRUE(post && conn);
  const uint64_t length = num(post["wqes"][0]["length"]);
  const uint64_t pmtu = conn["pmtu"] ? num(conn["pmtu"]) : 4096;
  const size_t n = size_t((length + pmtu - 1) / pmtu);
  ASSERT_GE(n, 3u);
  ASSERT_EQ(pkts_.size(), n + 1) << "WRITE packets of A's QP and the ACK";
  for (size_t k = 0; k < n; ++k) {
    const Pkt& p = pkts_[k];
    EXPECT_TRUE(p.tx) << "packet " << k;
    EXPECT_EQ(p.opcode, k == 0 ? kWriteFirst : k + 1 == n ? kWriteLast : kWriteMiddle) << "packet " << k;
    EXPECT_EQ(p.psn, (pkts_[0].psn + k) & 0xFFFFFF) << "packet " << k;
    EXPECT_EQ(p.ack_req, k + 1 == n) << "packet " << k;
  }
  const Pkt& ack = pkts_[n];
  EXPECT_FALSE(ack.tx);
  EXPECT_EQ(ack.opcode, kAck);
  EXPECT_EQ(ack.psn, pkts_[n - 1].psn) << "the ACK covers the last packet";

  // A's QP really is that QPN: the log shows it reaching RTS on node A.
  bool rts = false;
  for (const auto& r : log_)
    if (r["kind"] == "state" && r["node"] == "A" && r.contains("qp") && r["qp"] == a_qpn_ && r["what"] == "verbs_state" &&
        r["value"] == "RTS")
      rts = true;
  EXPECT_TRUE(rts) << "no verbs_state RTS record for A's QP " << a_qpn_;

  const auto recs = qp_frames();
  ASSERT_EQ(recs.size(), pkts_.size()) << "node A's frame records with qp " << a_qpn_;
  for (size_t k = 0; k < recs.size(); ++k) {
    const json& r = recs[k];
    const Pkt& p = pkts_[k];
    SCOPED_TRACE("record " + std::to_string(k) + ": " + r.dump());
    EXPECT_EQ(r["dir"], p.tx ? "tx" : "rx");
    EXPECT_EQ(r["link"], p.tx ? "A->B" : "B->A");
    EXPECT_EQ(r["index"].get<uint64_t>(), p.index) << "position in the tap";
    EXPECT_EQ(r["t_ps"].get<uint64_t>() / 1000, p.ns) << "log t_ps / 1000 = pcap ns";
    EXPECT_EQ(r["len"].get<size_t>(), p.len);
    EXPECT_EQ(r["roce"], true);
    EXPECT_EQ(r["opcode"].get<int>(), p.opcode);
    EXPECT_EQ(r["opname"], opname(p.opcode));
    EXPECT_EQ(r["psn"].get<uint32_t>(), p.psn);
    EXPECT_EQ(r["dest_qp"].get<uint32_t>(), p.tx ? b_qpn_ : a_qpn_);
    EXPECT_EQ(r["ack_req"].get<bool>(), p.ack_req);
    EXPECT_EQ(r["src"], p.tx ? scn_["nodes"]["A"]["ip"].Scalar() : scn_["nodes"]["B"]["ip"].Scalar());
    EXPECT_EQ(r["dst"], p.tx ? scn_["nodes"]["B"]["ip"].Scalar() : scn_["nodes"]["A"]["ip"].Scalar());
    if (p.syndrome) {
      EXPECT_EQ(r["syndrome"].get<int>(), *p.syndrome);
      EXPECT_EQ(r["msn"].get<uint32_t>(), *p.msn);
    } else {
      EXPECT_FALSE(r.contains("syndrome"));
    }
    EXPECT_EQ(r["domain"], "cmac");
  }
}

// `ernic-sim log out.log --node A --qp N --kind frame` prints one line per
// record above, in the same order: time in us (6 decimals, the ps), tx/rx,
// link, tap index, opcode name, PSN and length as text.
TEST_F(SystemTxlog, TimelineCommandShowsTheQpFramesOneToOne) {
  SimResult r = run_sim(dir_, {"log", "out.log", "--node", "A", "--qp", std::to_string(a_qpn_), "--kind", "frame"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines, comments;
  for (const auto& l : roce_test::split_lines(r.out)) {
    if (l.empty()) continue;
    (l[0] == '#' ? comments : lines).push_back(l);
  }
  const auto recs = qp_frames();
  ASSERT_EQ(lines.size(), pkts_.size()) << r.out;
  ASSERT_EQ(recs.size(), pkts_.size());
  for (size_t k = 0; k < lines.size(); ++k) {
    const Pkt& p = pkts_[k];
    const std::string& l = lines[k];
    const uint64_t t = recs[k]["t_ps"].get<uint64_t>();
    char buf[64];
    std::snprintf(buf, sizeof buf, "%llu.%06llu us ", (unsigned long long)(t / 1000000),
                  (unsigned long long)(t % 1000000));
    EXPECT_NE(l.find(buf), std::string::npos) << "time " << buf << " in: " << l;
    EXPECT_EQ(t / 1000, p.ns);
    const std::string where = std::string(p.tx ? " tx A->B #" : " rx B->A #") + std::to_string(p.index) + " ";
    EXPECT_NE(l.find(where), std::string::npos) << where << " in: " << l;
    EXPECT_NE(l.find(std::string(" ") + opname(p.opcode) + " "), std::string::npos) << l;
    std::snprintf(buf, sizeof buf, " psn=0x%06x ", p.psn);
    EXPECT_NE(l.find(buf), std::string::npos) << buf << " in: " << l;
    EXPECT_NE(l.find(" len=" + std::to_string(p.len)), std::string::npos) << l;
    EXPECT_NE(l.find(" A "), std::string::npos) << l;
    EXPECT_NE(l.find("QP" + std::to_string(a_qpn_)), std::string::npos) << l;
  }
  ASSERT_FALSE(comments.empty());
  EXPECT_NE(comments.back().find(std::to_string(lines.size()) + " / " + std::to_string(log_.size()) + " records shown"),
            std::string::npos)
      << comments.back();
}

// Order in the file. What holds (and is asserted):
// - t_ps never decreases within one node and kind (reg, dma, cqe, intr,
//   state), within one node's tx or rx frames, within steps and faults;
// - every record other than a frame is written in time order: the file
//   without its frame records is sorted by t_ps;
// - a frame record's t_ps is the tap's time (first byte after the SFD), but
//   it is written when the frame passes the tap: a tx record when the
//   preamble starts (640 ps before its t_ps), an rx record once the last
//   byte (FCS) has arrived, within kRxTapSlackPs. So frame records can sit
//   after later records of other kinds (the file as a whole is not sorted).
TEST_F(SystemTxlog, RecordOrderInTheFile) {
  std::map<std::string, std::pair<uint64_t, size_t>> last;  // stream -> (t_ps, line)
  uint64_t last_other = 0;
  for (size_t i = 0; i < log_.size(); ++i) {
    const json& r = log_[i];
    const std::string kind = r["kind"];
    const uint64_t t = r["t_ps"].get<uint64_t>();
    std::string stream = r["node"].get<std::string>() + "/" + kind;
    if (kind == "frame") stream += "/" + r["dir"].get<std::string>();
    auto it = last.find(stream);
    if (it != last.end()) {
      EXPECT_GE(t, it->second.first) << stream << ": line " << i + 1 << " goes back in time from line "
                                     << it->second.second;
    }
    last[stream] = {t, i + 1};
    if (kind != "frame") {
      EXPECT_GE(t, last_other) << "line " << i + 1 << " (" << kind << ") is out of time order";
      last_other = std::max(last_other, t);
    }
  }
  size_t txs = 0, rxs = 0;
  for (size_t i = 0; i < log_.size(); ++i) {
    const json& f = log_[i];
    if (f["kind"] != "frame") continue;
    const uint64_t t = f["t_ps"].get<uint64_t>();
    const bool tx = f["dir"] == "tx";
    (tx ? txs : rxs)++;
    const uint64_t lo = tx ? t - kPreamble * kPsPerByte : t + (f["len"].get<uint64_t>() + kFcs) * kPsPerByte;
    const uint64_t hi = tx ? lo : lo + kRxTapSlackPs;
    for (size_t j = 0; j < log_.size(); ++j) {
      const json& o = log_[j];
      if (o["kind"] == "frame") continue;
      const uint64_t to = o["t_ps"].get<uint64_t>();
      if (j < i) {
        EXPECT_LE(to, hi) << "line " << j + 1 << " is before the frame record on line " << i + 1;
      }
      if (j > i) {
        EXPECT_GE(to, lo) << "line " << j + 1 << " is after the frame record on line " << i + 1;
      }
    }
  }
  EXPECT_GT(txs, 0u);
  EXPECT_GT(rxs, 0u);
}

// The completion of the WRITE (the post's wr_id) on A's QP: one CQE
// record, opcode WRITE (0), no error, written after the ACK's last byte
// reached A.
TEST_F(SystemTxlog, CompletionFollowsTheAck) {
  YAML::Node post;
  for (const auto& s : scn_["steps"])
    if (s["post"]) post = s["post"];
  ASSERT_TRUE(post);
  const uint64_t wr_id = num(post["wqes"][0]["wr_id"]);
  ASSERT_FALSE(pkts_.empty());
  const Pkt& ack = pkts_.back();
  ASSERT_EQ(ack.opcode, kAck);
  std::optional<uint64_t> ack_ps;
  for (const auto& r : qp_frames())
    if (r["dir"] == "rx" && r["opcode"] == kAck) ack_ps = r["t_ps"].get<uint64_t>();
  ASSERT_TRUE(ack_ps.has_value());
  const uint64_t ack_end = *ack_ps + (ack.len + kFcs) * kPsPerByte;
  std::vector<json> cqes;
  for (const auto& r : log_)
    if (r["kind"] == "cqe" && r["node"] == "A" && r["qp"] == a_qpn_) cqes.push_back(r);
  ASSERT_EQ(cqes.size(), 1u) << "one WQE, one CQE on A's QP";
  EXPECT_EQ(cqes[0]["wr_id"].get<uint64_t>(), wr_id);
  EXPECT_EQ(cqes[0]["opcode"].get<int>(), 0) << "PG332 CQE opcode WRITE";
  EXPECT_EQ(cqes[0]["error"], false);
  EXPECT_GT(cqes[0]["t_ps"].get<uint64_t>(), ack_end) << "CQE before the ACK had arrived";
}

// The doorbell: A writes SQPIi of its QP (value 1: one WQE posted) before
// the first WRITE packet leaves, in time and in the file; once.
TEST_F(SystemTxlog, DoorbellBeforeTheFirstWritePacket) {
  const std::string reg = "SQPIi[" + std::to_string(a_qpn_) + "]";
  std::vector<size_t> at;
  for (size_t i = 0; i < log_.size(); ++i) {
    const json& r = log_[i];
    if (r["kind"] == "reg" && r["node"] == "A" && r["op"] == "write" && r["name"] == reg) at.push_back(i);
  }
  ASSERT_EQ(at.size(), 1u) << reg << " writes on A";
  const json& db = log_[at[0]];
  EXPECT_EQ(db["qp"].get<uint32_t>(), a_qpn_);
  EXPECT_EQ(db["value"].get<uint32_t>(), 1u) << "SQ producer index after one WQE";
  size_t first_write = log_.size();
  for (size_t i = 0; i < log_.size(); ++i)
    if (log_[i]["kind"] == "frame" && log_[i]["node"] == "A" && log_[i]["dir"] == "tx" &&
        log_[i]["opcode"] == kWriteFirst) {
      first_write = i;
      break;
    }
  ASSERT_LT(first_write, log_.size());
  EXPECT_LT(at[0], first_write) << "doorbell after the first WRITE packet in the file";
  EXPECT_LT(db["t_ps"].get<uint64_t>(), log_[first_write]["t_ps"].get<uint64_t>());
  ASSERT_FALSE(pkts_.empty());
  EXPECT_EQ(log_[first_write]["t_ps"].get<uint64_t>() / 1000, pkts_.front().ns);
}

}  // namespace
