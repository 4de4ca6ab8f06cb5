// tb/peer: a responder, its memory and MRs, and requests built as a
// requester sends them (roce::Frame, model/roce/packet.h).
#pragma once
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "model/peer/answers.h"
#include "model/peer/responder.h"
#include "model/roce/opcodes.h"
#include "model/roce/psn.h"

namespace ernic::peer::test {

class PeerResponder : public ::testing::Test {
 protected:
  void SetUp() override {
    cfg.node = "P";
    cfg.mac = *roce::MacAddr::parse("02:00:00:00:00:0b");
    cfg.ip = *roce::Ipv4Addr::parse("10.0.0.2");
    mem = std::make_unique<HostMemory>(8u << 20);
    mrs = std::make_unique<PeerMrTable>(mem->size());
    rw = *mrs->add("rw", 65536, true, true, nullptr);
    ro = *mrs->add("ro", 8192, true, false, nullptr);
    q = PeerQp{};  // SetUp runs again inside some tests
    q.qpn = 2;
    q.remote_qpn = 0x17;
    q.remote_mac = *roce::MacAddr::parse("02:00:00:00:00:0a");
    q.local_ip = cfg.ip;
    q.remote_ip = *roce::Ipv4Addr::parse("10.0.0.1");
    q.pmtu = 1024;
    q.epsn = 0x100;
    q.rq_pa = *mrs->alloc(4 * 4096);
    q.rq_elem_bytes = 4096;
    q.rq_count = 4;
    rsp = std::make_unique<Responder>(cfg, *mem, *mrs);
  }
  // A request from the remote to QP 2.
  roce::Frame req(uint8_t opcode, uint32_t psn, size_t payload, bool ack_req = false, uint8_t fill = 0x11) {
    roce::Frame f;
    f.eth.src = q.remote_mac;
    f.eth.dst = cfg.mac;
    f.ip4.src = q.remote_ip.ip4;
    f.ip4.dst = cfg.ip;
    f.bth.opcode = opcode;
    f.bth.dest_qp = q.qpn;
    f.bth.psn = psn & roce::kPsnMask;
    f.bth.ack_req = ack_req;
    f.payload.resize(payload);
    for (size_t i = 0; i < payload; ++i) f.payload[i] = uint8_t(fill + i);
    return f;
  }
  roce::Frame reth_req(uint8_t opcode, uint32_t psn, size_t payload, uint64_t va, uint32_t rkey, uint32_t dma_len,
                       bool ack_req = false, uint8_t fill = 0x11) {
    roce::Frame f = req(opcode, psn, payload, ack_req, fill);
    f.reth = roce::Reth{va, rkey, dma_len};
    return f;
  }
  std::vector<roce::Frame> feed(const roce::Frame& f) {
    std::vector<roce::Frame> out;
    rsp->on_request(q, f, out);
    return out;
  }
  // An answer through the wire format and back: what the requester sees.
  static roce::Frame wire(const roce::Frame& f) {
    auto d = roce::decode(roce::encode(f));
    EXPECT_TRUE(d.has_value());
    return d ? *d : roce::Frame{};
  }

  PeerConfig cfg;
  std::unique_ptr<HostMemory> mem;
  std::unique_ptr<PeerMrTable> mrs;
  PeerMr rw, ro;
  PeerQp q;
  std::unique_ptr<Responder> rsp;
};

// IBTA 9.7.5.1's credit count encoding, as the tests write it: code c
// stands for this many receive WQEs (code 31: invalid).
inline uint32_t ibta_credits(uint8_t code) {
  if (code <= 4) return code;
  // from code 4 on the counts go 4, 6, 8, 12, 16, 24, ...: doubling every two codes
  const uint32_t base = (code % 2 == 0) ? 4u : 6u;
  return base << ((code - (code % 2 == 0 ? 4 : 5)) / 2);
}

}  // namespace ernic::peer::test
