// tb/system: every PG332 statistics register counts (issue 4).
//
// tb/system/counters.yaml runs WRITE, SEND and READ (each node requester
// and responder), an ECN mark and its CNP, a duplicate, a lost packet with
// its NAK-PSN and go-back-N, an RNR NAK and a dropped (corrupted) ACK, then
// reads every counter and status register of both nodes; the values are
// taken from the transaction log (reg reads).
//
// The expected values are written out below, worked out by hand from the
// scenario (phase by phase, see the comments), and the frame counts behind
// them are counted again, independently of the model, in the four tap
// captures with tshark (what each node transmitted and received) and by
// comparing received with transmitted bytes (a corrupted frame is one the
// receiver got but its peer never sent).
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "model/trace/pcap_writer.h"
#include "tb/system/system_test_util.h"

namespace {

using namespace system_test;
using json = nlohmann::json;

struct Frame {
  uint32_t opcode = 0, psn = 0, dest_qp = 0, dma_len = 0;
  int syndrome = -1;  // -1: no AETH
};

std::vector<Frame> tshark_frames(const fs::path& pcap) {
  int st = 0;
  const auto rows = tshark_fields(pcap, {"infiniband.bth.opcode", "infiniband.bth.psn", "infiniband.bth.destqp",
                                         "infiniband.aeth.syndrome", "infiniband.reth.dmalen"},
                                  &st);
  EXPECT_EQ(st, 0) << pcap;
  std::vector<Frame> out;
  for (const auto& r : rows) {
    EXPECT_EQ(r.size(), 5u);
    if (r.size() != 5 || r[0].empty()) {
      ADD_FAILURE() << pcap << ": a frame without a BTH";
      continue;
    }
    Frame f;
    f.opcode = uint32_t(to_u64(r[0]));
    f.psn = r[1].empty() ? 0 : uint32_t(to_u64(r[1]));
    f.dest_qp = r[2].empty() ? 0 : uint32_t(to_u64(r[2]));
    if (!r[3].empty()) f.syndrome = int(to_u64(r[3]));
    if (!r[4].empty()) f.dma_len = uint32_t(to_u64(r[4]));
    out.push_back(f);
  }
  return out;
}

bool is_send(uint32_t op) { return op <= 0x05 || op == 0x16 || op == 0x17; }
bool is_write(uint32_t op) { return op >= 0x06 && op <= 0x0B; }
bool is_request(uint32_t op) { return is_send(op) || is_write(op) || op == 0x0C; }
bool is_read_resp(uint32_t op) { return op >= 0x0D && op <= 0x10; }
bool ends_message(uint32_t op) { return op == 0x02 || op == 0x03 || op == 0x04 || op == 0x05 || op == 0x08 ||
                                        op == 0x09 || op == 0x0A || op == 0x0B || op == 0x0C || op == 0x16 || op == 0x17; }

// What one node's tap captures say about the counters PG332 defines as
// frame counts (tx: what it sent; rx: what reached it; bad: rx frames the
// peer never sent, byte for byte).
struct TapCounts {
  uint32_t tx_sends = 0, tx_rdwr = 0, tx_acks = 0, tx_naks = 0, tx_rnr = 0, tx_mads = 0, tx_cnps = 0,
           tx_rdrsp = 0, tx_retries = 0;
  uint32_t rx_all = 0, rx_bad = 0, rx_acks = 0, rx_naks = 0, rx_mads = 0, rx_cnps = 0;
};

TapCounts count_taps(const std::vector<Frame>& tx, const std::vector<Frame>& rx, size_t rx_bad) {
  TapCounts c;
  std::set<uint32_t> sent_psns;
  for (const Frame& f : tx) {
    if (f.opcode == 0x64) ++c.tx_mads;
    if (f.opcode == 0x81) ++c.tx_cnps;
    if (is_send(f.opcode)) ++c.tx_sends;
    if (is_write(f.opcode) || f.opcode == 0x0C) ++c.tx_rdwr;
    if (is_read_resp(f.opcode)) ++c.tx_rdrsp;
    if (f.opcode == 0x11 && f.syndrome >= 0) (f.syndrome < 0x20 ? c.tx_acks : c.tx_naks) += 1;
    if (f.opcode == 0x11 && f.syndrome >= 0x20 && f.syndrome < 0x40) ++c.tx_rnr;
    if (is_request(f.opcode) && !sent_psns.insert(f.psn).second) ++c.tx_retries;
  }
  c.rx_all = uint32_t(rx.size());
  c.rx_bad = uint32_t(rx_bad);
  for (const Frame& f : rx) {
    if (f.opcode == 0x64) ++c.rx_mads;
    if (f.opcode == 0x81) ++c.rx_cnps;
    if (f.opcode == 0x11 && f.syndrome >= 0) (f.syndrome < 0x20 ? c.rx_acks : c.rx_naks) += 1;
  }
  return c;
}

// Indices of the frames of `rx` that no frame of `tx` equals byte for byte,
// the IPv4 TOS and header checksum aside (a switch's ECN mark changes
// them and keeps the frame good; the ICRC masks the TOS). A duplicate
// matches the frame it copies.
std::set<size_t> corrupted(const fs::path& rx, const fs::path& tx) {
  auto masked = [](std::vector<uint8_t> d) {
    if (d.size() > 25) d[15] = d[24] = d[25] = 0;  // Ethernet 14 + TOS at 1, checksum at 10..11
    return d;
  };
  std::set<std::vector<uint8_t>> sent;
  for (const auto& f : ernic::PcapReader::read_all(tx.string())) sent.insert(masked(f.data));
  std::set<size_t> bad;
  const auto got = ernic::PcapReader::read_all(rx.string());
  for (size_t i = 0; i < got.size(); ++i)
    if (!sent.count(masked(got[i].data))) bad.insert(i);
  return bad;
}

// The responder's view of the requests that reached it (IBTA 9.7.5): PSN e
// expected; psn == e is accepted (unless the responder answered this
// arrival with an RNR NAK), psn behind e is a duplicate, ahead of e out of
// sequence; an accepted READ request moves e past its ceil(len / PMTU)
// response PSNs. Accepted SEND packets and messages, duplicates and
// out-of-sequence arrivals are counted.
struct ResponderCounts {
  uint32_t send_pkts = 0, msgs = 0, dups = 0, oos = 0;
};

ResponderCounts walk_requests(const std::vector<Frame>& rx, const std::set<size_t>& bad, uint32_t first_psn,
                              uint32_t pmtu, std::map<uint32_t, uint32_t> rnr_naks /* by PSN */) {
  ResponderCounts c;
  uint32_t e = first_psn;
  for (size_t i = 0; i < rx.size(); ++i) {
    const Frame& f = rx[i];
    if (bad.count(i) || !is_request(f.opcode) || f.dest_qp == 1) continue;
    const int32_t d = int32_t((f.psn - e) << 8) >> 8;
    if (d < 0) {
      ++c.dups;
    } else if (d > 0) {
      ++c.oos;
    } else if (rnr_naks[f.psn] > 0) {
      --rnr_naks[f.psn];
    } else {
      if (is_send(f.opcode)) ++c.send_pkts;
      if (ends_message(f.opcode)) ++c.msgs;
      const uint32_t npsn = f.opcode == 0x0C ? std::max(1u, (f.dma_len + pmtu - 1) / pmtu) : 1;
      e = (e + npsn) & 0xFFFFFF;
    }
  }
  return c;
}

TEST(SystemCounters, EveryStatisticsRegisterCountsWhatHappened) {
  const fs::path dir = test_dir("counters");
  SimResult r = run_sim(dir, {"run", kSystemDir + "/counters.yaml", "--pcap", "out.pcap", "--log", "out.jsonl",
                              "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;

  // The last value read of each register, per node, from the log.
  std::map<std::string, uint32_t> reg;
  {
    std::istringstream in(read_text(dir / "out.jsonl"));
    for (std::string line; std::getline(in, line);) {
      const json o = json::parse(line);
      if (o["kind"] == "reg" && o["op"] == "read" && o.contains("name"))
        reg[o["node"].get<std::string>() + "." + o["name"].get<std::string>()] = o["value"].get<uint32_t>();
    }
  }
  auto R = [&](const std::string& node, const std::string& name) {
    auto it = reg.find(node + "." + name);
    EXPECT_NE(it, reg.end()) << node << " " << name << " was not read";
    return it == reg.end() ? 0xDEADBEEFu : it->second;
  };
  auto lo = [](uint32_t v) { return v & 0xFFFF; };
  auto hi = [](uint32_t v) { return v >> 16; };

  // ---- The frames, counted in the captures.
  const auto a_tx = tshark_frames(dir / "out.A-tx.pcap"), a_rx = tshark_frames(dir / "out.A-rx.pcap");
  const auto b_tx = tshark_frames(dir / "out.B-tx.pcap"), b_rx = tshark_frames(dir / "out.B-rx.pcap");
  const auto a_bad = corrupted(dir / "out.A-rx.pcap", dir / "out.B-tx.pcap");
  const auto b_bad = corrupted(dir / "out.B-rx.pcap", dir / "out.A-tx.pcap");
  const TapCounts A = count_taps(a_tx, a_rx, a_bad.size()), B = count_taps(b_tx, b_rx, b_bad.size());
  std::map<uint32_t, uint32_t> b_rnr;
  for (const Frame& f : b_tx)
    if (f.opcode == 0x11 && f.syndrome >= 0x20 && f.syndrome < 0x40) ++b_rnr[f.psn];

  // By hand, from counters.yaml (A's PSNs: P1 0x100-0x103, P2 0x104-0x106,
  // P3 0x107-0x117, P4 READ 0x118-0x11A, P5 0x11B; B's READ 0x200):
  //   A sends: REQ, RTU (2 MADs); WRITEs 4 (P1) + 3 + 3 resent (P2); SENDs
  //   2 + 14 + 1 + 1 resent (P3) + 1 (P5) = 19; one READ request (P4); one
  //   READ response (B's READ). Retransmitted: 3 (P2) + 1 (P3) = 4.
  EXPECT_EQ(A.tx_mads, 2u);
  EXPECT_EQ(A.tx_sends, 19u);
  EXPECT_EQ(A.tx_rdwr, 11u);
  EXPECT_EQ(A.tx_rdrsp, 1u);
  EXPECT_EQ(A.tx_retries, 4u);
  EXPECT_EQ(A.tx_acks + A.tx_naks + A.tx_cnps, 0u);
  //   B sends: REP; a CNP (P1); ACKs 2 (P1: LAST and its duplicate) + 2
  //   (P2: duplicate FIRST, LAST) + 16 (P3: 15 messages and the resent
  //   16th) + 1 (P5) = 21; NAKs: the NAK-PSN (P2) and the RNR NAK (P3);
  //   one READ request and three READ responses (P4).
  EXPECT_EQ(B.tx_mads, 1u);
  EXPECT_EQ(B.tx_cnps, 1u);
  EXPECT_EQ(B.tx_acks, 21u);
  EXPECT_EQ(B.tx_naks, 2u);
  EXPECT_EQ(B.tx_rnr, 1u);
  EXPECT_EQ(B.tx_rdwr, 1u);
  EXPECT_EQ(B.tx_rdrsp, 3u);
  EXPECT_EQ(B.tx_sends + B.tx_retries, 0u);
  //   A receives everything B sent (1 + 1 + 21 + 2 + 1 + 3 = 29 frames),
  //   one ACK with a bad ICRC; B receives what A sent (2 + 10 + 19 + 1 + 1
  //   = 33 frames) but the lost WRITE_MIDDLE, plus the duplicated
  //   WRITE_LAST: 33, all good (the ECN mark is not damage).
  EXPECT_EQ(A.rx_all, 29u);
  EXPECT_EQ(A.rx_bad, 1u);
  EXPECT_EQ(B.rx_all, 33u);
  EXPECT_EQ(B.rx_bad, 0u);
  const ResponderCounts b_resp = walk_requests(b_rx, b_bad, 0x100, 1024, b_rnr);
  EXPECT_EQ(b_resp.send_pkts, 18u);  // 2 + 14 + the resent 16th (P3), 1 (P5); not the RNR-NAKed one
  EXPECT_EQ(b_resp.dups, 2u);        // P1's second WRITE_LAST, P2's resent WRITE_FIRST
  EXPECT_EQ(b_resp.oos, 1u);         // P2's WRITE_LAST after the gap

  // ---- Global registers, node A.
  EXPECT_EQ(lo(R("A", "INSRRPKTCNT")), 0u);                                 // no SEND reached A
  EXPECT_EQ(hi(R("A", "INSRRPKTCNT")), 3u);                                 // READ responses of P4
  EXPECT_EQ(lo(R("A", "INAMPKTCNT")), A.rx_acks - A.rx_bad);                // ACKs but the corrupted one
  EXPECT_EQ(lo(R("A", "INAMPKTCNT")), 20u);                                 // 2 + 2 + 15 + 1
  EXPECT_EQ(hi(R("A", "INAMPKTCNT")), A.rx_mads);                           // REP
  EXPECT_EQ(hi(R("A", "INAMPKTCNT")), 1u);
  EXPECT_EQ(R("A", "OUTIOPKTCNT"), 11u << 16 | 19u);
  EXPECT_EQ(R("A", "OUTAMPKTCNT"), 2u << 16 | 0u);                          // 2 MADs, no ACK
  EXPECT_EQ(R("A", "LSTINPKT"), 0x011Bu << 16 | 2u << 8 | 0x11u);           // P5's ACK, PSN 0x11B, QP 2
  EXPECT_EQ(R("A", "LSTOUTPKT"), 0x011Bu << 16 | 2u << 8 | 0x04u);          // P5's SEND_ONLY
  EXPECT_EQ(R("A", "ININVDUPCNT"), 0u);
  EXPECT_EQ(R("A", "INNCKPKTSTS"), 2u << 16 | 2u);                          // NAK-PSN + RNR NAK, last on QP 2
  EXPECT_EQ(hi(R("A", "INNCKPKTSTS")), A.rx_naks);
  EXPECT_EQ(R("A", "OUTRNRPKTSTS"), 0u);
  EXPECT_EQ(R("A", "WQEPROCSTS"), 0u);
  EXPECT_EQ(R("A", "QPMSTS"), 22u << 16 | 2u);                              // 2 (QP1) + 20 (QP2) WQEs; cache empty
  EXPECT_EQ(R("A", "INALLDRPPKTCNT"), A.rx_bad << 16 | A.rx_all);
  EXPECT_EQ(R("A", "INALLDRPPKTCNT"), 1u << 16 | 29u);
  EXPECT_EQ(R("A", "INNAKPKTCNT"), 2u);
  EXPECT_EQ(R("A", "OUTNAKPKTCNT"), 0u);
  EXPECT_EQ(R("A", "RESPHNDSTS"), 1u << 16 | 2u);                           // [16] always; QP 2 last
  EXPECT_EQ(R("A", "RETRYCNTSTS"), A.tx_retries);
  EXPECT_EQ(R("A", "RETRYCNTSTS"), 4u);
  EXPECT_EQ(R("A", "INCNPPKTCNT"), 1u);
  EXPECT_EQ(R("A", "OUTCNPPKTCNT"), 0u);
  EXPECT_EQ(R("A", "OUTRDRSPPKTCNT"), 1u);
  EXPECT_EQ(R("A", "ERRBUFWPTR"), 1u);                                      // the corrupted ACK
  EXPECT_EQ(R("A", "IPKTERRQWPTR"), 0u);

  // ---- Global registers, node B.
  EXPECT_EQ(lo(R("B", "INSRRPKTCNT")), b_resp.send_pkts);
  EXPECT_EQ(R("B", "INSRRPKTCNT"), 1u << 16 | 18u);                         // + A's READ_RESP_ONLY
  EXPECT_EQ(R("B", "INAMPKTCNT"), B.rx_mads << 16 | 0u);                    // REQ, RTU; no ACK reaches B
  EXPECT_EQ(R("B", "INAMPKTCNT"), 2u << 16);
  EXPECT_EQ(R("B", "OUTIOPKTCNT"), 1u << 16 | 0u);                          // one READ request
  EXPECT_EQ(R("B", "OUTAMPKTCNT"), B.tx_mads << 16 | B.tx_acks);            // the CNP is not a MAD here
  EXPECT_EQ(R("B", "OUTAMPKTCNT"), 1u << 16 | 21u);
  EXPECT_EQ(R("B", "LSTINPKT"), 0x011Bu << 16 | 2u << 8 | 0x04u);           // P5's SEND_ONLY
  EXPECT_EQ(R("B", "LSTOUTPKT"), 0x011Bu << 16 | 2u << 8 | 0x11u);          // its ACK
  EXPECT_EQ(R("B", "ININVDUPCNT"), b_resp.dups << 16 | b_resp.oos);
  EXPECT_EQ(R("B", "ININVDUPCNT"), 2u << 16 | 1u);
  EXPECT_EQ(R("B", "INNCKPKTSTS"), 0u);
  EXPECT_EQ(R("B", "OUTRNRPKTSTS"), B.tx_rnr << 16 | 2u);
  EXPECT_EQ(R("B", "OUTRNRPKTSTS"), 1u << 16 | 2u);
  EXPECT_EQ(R("B", "WQEPROCSTS"), 0u);
  EXPECT_EQ(R("B", "QPMSTS"), 3u << 16 | 2u);                               // REP, CNP (QP1) + READ (QP2)
  EXPECT_EQ(R("B", "INALLDRPPKTCNT"), 0u << 16 | B.rx_all);
  EXPECT_EQ(R("B", "INALLDRPPKTCNT"), 33u);
  EXPECT_EQ(R("B", "INNAKPKTCNT"), 0u);
  EXPECT_EQ(R("B", "OUTNAKPKTCNT"), B.tx_naks);
  EXPECT_EQ(R("B", "OUTNAKPKTCNT"), 2u);
  EXPECT_EQ(R("B", "RESPHNDSTS"), 1u << 16 | 2u);
  EXPECT_EQ(R("B", "RETRYCNTSTS"), 0u);
  EXPECT_EQ(R("B", "INCNPPKTCNT"), 0u);
  EXPECT_EQ(R("B", "OUTCNPPKTCNT"), B.tx_cnps);
  EXPECT_EQ(R("B", "OUTCNPPKTCNT"), 1u);
  EXPECT_EQ(R("B", "OUTRDRSPPKTCNT"), B.tx_rdrsp);
  EXPECT_EQ(R("B", "OUTRDRSPPKTCNT"), 3u);
  EXPECT_EQ(R("B", "ERRBUFWPTR"), 0u);
  EXPECT_EQ(R("B", "IPKTERRQWPTR"), 0u);

  // ---- Per-QP registers. A QP 2: 20 messages sent (SSN), one accepted as
  // responder (B's READ: MSN), 20 WQEs fetched; the last ACK was for
  // 0x11B; the last NAK an RNR NAK with timer code 1 (syndrome 0x21);
  // retried; SQ and outstanding queue empty. No SEND reached A: its
  // current RQ buffer is element 0.
  EXPECT_EQ(R("A", "STATSSNi[2]"), 20u);
  EXPECT_EQ(R("A", "STATMSNi[2]"), 1u);
  EXPECT_EQ(R("A", "STATQPi[2]"), 0x21u << 16 | 1u << 11 | 1u << 10 | 1u << 9);
  EXPECT_EQ(R("A", "STATCURSQPTRi[2]"), 20u);
  EXPECT_EQ(R("A", "STATRESPSNi[2]"), 0x11Cu);
  EXPECT_EQ(R("A", "STATRQBUFCAi[2]"), R("A", "RQBAi[2]") & ~0xFFu);
  EXPECT_EQ(R("A", "STATRQBUFCAMSBi[2]"), R("A", "RQBAMSBi[2]"));
  EXPECT_EQ(R("A", "STATWQEi[2]"), 20u);
  EXPECT_EQ(R("A", "STATRQPIDBi[2]"), 0u);
  EXPECT_EQ(R("A", "STATWQEi[1]"), 2u);                                      // REQ, RTU
  EXPECT_EQ(R("A", "STATRQPIDBi[1]"), 1u);                                   // REP
  // B QP 2: one message sent (its READ), 20 accepted (P1, P2, 16 SENDs,
  // A's READ, P5); its READ's response was 0x200; an RNR NAK was sent (RQ
  // overflow); 17 SEND messages filled the 16-entry RQ: PI 1, so the
  // current RQ buffer is element 1.
  EXPECT_EQ(b_resp.msgs, 20u);
  EXPECT_EQ(R("B", "STATSSNi[2]"), 1u);
  EXPECT_EQ(R("B", "STATMSNi[2]"), b_resp.msgs);
  EXPECT_EQ(R("B", "STATQPi[2]"), 1u << 10 | 1u << 9 | 1u << 1);
  EXPECT_EQ(R("B", "STATCURSQPTRi[2]"), 1u);
  EXPECT_EQ(R("B", "STATRESPSNi[2]"), 0x201u);
  const uint32_t elem = (R("B", "QPCONFi[2]") >> 16) * 256;
  EXPECT_EQ(elem, 4096u);
  EXPECT_EQ(R("B", "STATRQBUFCAi[2]"), (R("B", "RQBAi[2]") & ~0xFFu) + elem);
  EXPECT_EQ(R("B", "STATRQBUFCAMSBi[2]"), R("B", "RQBAMSBi[2]"));
  EXPECT_EQ(R("B", "STATWQEi[2]"), 1u);
  EXPECT_EQ(R("B", "STATRQPIDBi[2]"), 1u);
  EXPECT_EQ(R("B", "STATWQEi[1]"), 2u);                                      // REP, CNP
  EXPECT_EQ(R("B", "STATRQPIDBi[1]"), 2u);                                   // REQ, RTU
}

}  // namespace
