// tb/fuzz: the ERNIC RX path end to end (issue 20, fuzzing item 3): any
// frames into one node's RX, through the C++ reference roce_rx
// (seam::roce_rx_ref) into the ERNIC model (rx_pkt_hndler, resp_hndler, the
// QP manager's go-backs, the DMA masters, host memory); the node is
// rx_node.h's, the invariants rx_check.h's (memory outside what ERNIC may
// write untouched, QPs in legal states, counters and NAKs consistent).
//
// Input: up to 8 records, each 8 control bytes and a frame:
//   [0] fix-ups: bit 0 IP/UDP lengths from the frame's size, 1 the IPv4
//       header checksum, 2 the ICRC (computed last), 3 re-address to QP
//       [1] (MACs, IPs, UDP port 4791, BTH destination QP: the node and
//       that QP's remote), 4 PSN := base + (int8)[2], base = the QP's
//       expected request PSN for requests, its expected response PSN for
//       answers (the snapshot's), 5 the RETH from MR [3] & 15 (its R_Key,
//       bit 4 of [3]: a wrong key byte; VA = the MR's + (int8)[4] * 64;
//       [3] >> 5: DMA length 0 kept, 1 this frame's payload, 2 the MR's
//       length, 3 one byte more), 6 FCS bad, 7 ECN CE;
//   [1] QP (mod 9), [2] PSN delta, [3] MR choice, [4] VA offset,
//   [5] core cycles / 8 before the next frame, [6..7] frame length (LE,
//       modulo 4201, cut to what is left).
// Without fix-ups a frame is taken as it is (validation's paths); with them
// the fuzzer reaches the QPs' protocol handling despite the ICRC.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "model/roce/icrc.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "model/roce/psn.h"
#include "model/regs/regs.h"
#include "tb/fuzz/fuzz_check.h"
#include "tb/fuzz/rx_check.h"
#include "tb/fuzz/rx_node.h"

namespace {

using namespace ernic::fuzz_rx;
namespace R = ernic::regs;

void be(uint8_t* p, uint64_t v, int n) {
  for (int i = n - 1; i >= 0; --i, v >>= 8) p[i] = uint8_t(v);
}

void fix_frame(std::vector<uint8_t>& f, const uint8_t* c) {
  const size_t n = f.size();
  if (n < 14) return;
  uint8_t* b = f.data();
  const bool v6 = b[12] == 0x86 && b[13] == 0xDD, v4 = b[12] == 0x08 && b[13] == 0x00;
  if (!v6 && !v4) return;
  const size_t iph = v6 ? 40 : std::max<size_t>(20, n > 14 ? size_t(b[14] & 15) * 4 : 20);
  const size_t u = 14 + iph, t = u + 8;
  if (n < t + 12) return;
  const Snapshot& snap = RxNode::get().snapshot();
  uint32_t q = uint32_t(b[t + 5]) << 16 | uint32_t(b[t + 6]) << 8 | b[t + 7];
  if (c[0] & 8) {  // re-address
    q = c[1] % 9;
    const QpSpec* s = qp_spec(q);
    if (!s || q == 1) s = qp_spec(2);
    be(b, kLocalMac, 6);
    be(b + 6, s->remote_mac, 6);
    if (v6) {
      b[14] = uint8_t(0x60 | (b[14] & 0x0F));
      b[20] = 17;
      const roce::Ipv6Addr src = remote_ip6(q), dst = local_ip6();
      std::copy(src.b.begin(), src.b.end(), b + 22);
      std::copy(dst.b.begin(), dst.b.end(), b + 38);
    } else {
      b[14] = uint8_t(0x40 | (b[14] & 0x0F));
      b[23] = 17;
      be(b + 26, s->remote_ip4 ? s->remote_ip4 : 0x0A000002, 4);
      be(b + 30, kLocalIp4, 4);
    }
    be(b + u + 2, 4791, 2);
    be(b + t + 5, q, 3);
  }
  const uint8_t op = b[t];
  const roce::OpcodeInfo* oi = roce::opcode_info(op);
  if ((c[0] & 16) && q >= 1 && q <= kNumQp) {  // PSN from the QP's state
    const R::RegisterFile& g = *snap.regs;
    const bool answer = oi && (oi->kind == roce::OpKind::Ack || oi->kind == roce::OpKind::ReadResponse ||
                               oi->kind == roce::OpKind::AtomicAck);
    const uint32_t base = answer ? g.q(q, R::q::STATRESPSNi) : roce::psn_add(g.q(q, R::q::LSTRQREQi), 1);
    be(b + t + 9, roce::psn_add(base, int8_t(c[2])), 3);
  }
  if ((c[0] & 32) && oi && (oi->ext & roce::kExtReth)) {
    const size_t r = t + 12 + ((oi->ext & roce::kExtDeth) ? 8 : 0);
    if (n >= r + 16) {
      const uint32_t idx = c[3] & 15;
      MrSpec m{idx, 0, 0, 0, 0, 0, 0};
      for (const MrSpec& s : mr_specs())
        if (s.idx == idx) m = s;
      be(b + r, m.va + uint64_t(int64_t(int8_t(c[4])) * 64), 8);
      be(b + r + 8, R::make_rkey(idx, m.key ^ ((c[3] & 16) ? 0x5A : 0)), 4);
      const size_t pay = n > r + 16 + 4 ? n - (r + 16) - 4 : 0;
      const uint32_t len_sel = c[3] >> 5;
      if (len_sel == 1) be(b + r + 12, pay, 4);
      if (len_sel == 2 || len_sel == 3) be(b + r + 12, m.len + (len_sel == 3), 4);
    }
  }
  if (c[0] & 128) b[15] |= v6 ? 0x30 : 0x03;  // ECN CE
  if (c[0] & 1) {
    if (v6) be(b + 18, n - 54, 2);
    else be(b + 16, n - 14, 2);
    be(b + u + 4, n - u, 2);
  }
  if ((c[0] & 2) && v4 && iph == 20) be(b + 24, roce::ipv4_checksum(b + 14), 2);
  if ((c[0] & 4) && n >= t + 12 + 4) {
    const uint32_t icrc = roce::compute_icrc(b, n - 4);
    for (int i = 0; i < 4; ++i) b[n - 4 + i] = uint8_t(icrc >> (8 * i));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  RxNode& node = RxNode::get();
  ernic_fuzz::Input in(data, size);
  std::vector<InFrame> frames;
  while (in.left() >= 8 && frames.size() < 8) {
    uint8_t c[6];
    for (uint8_t& x : c) x = in.u8();
    InFrame f;
    f.bytes = in.bytes(4200);
    f.bad_fcs = c[0] & 64;
    f.gap_cycles = uint32_t(c[5]) * 8;
    fix_frame(f.bytes, c);
    frames.push_back(std::move(f));
  }
  const RunResult r = node.run(frames);
  check_run(node, r);
  if (std::getenv("ERNIC_FUZZ_RX_VERBOSE")) {  // what each input did (seed review)
    const auto& st = node.shared().stats;
    std::fprintf(stderr, "fuzz_rx: %zu frames: %zu bypass, %zu to ERNIC, %zu taken, %zu sent, %llu dropped, %llu ACKs, "
                 "%llu NAKs, %llu READ responses, %llu CQEs, %llu fatal, %.3f us\n", frames.size(), r.bypass, r.pushed,
                 r.taken, r.tx.size(), (unsigned long long)(st.rx_dropped - node.snapshot().stats.rx_dropped),
                 (unsigned long long)(st.acks_sent - node.snapshot().stats.acks_sent),
                 (unsigned long long)(st.naks_sent - node.snapshot().stats.naks_sent),
                 (unsigned long long)(st.read_responses_sent - node.snapshot().stats.read_responses_sent),
                 (unsigned long long)(st.cqes_written - node.snapshot().stats.cqes_written),
                 (unsigned long long)(st.fatal_events - node.snapshot().stats.fatal_events), r.sim_ps / 1e6);
    for (const auto& e : node.ctx().events) std::fprintf(stderr, "  %s: %s\n", e.where.c_str(), e.what.c_str());
  }
  node.restore();
  return 0;
}
