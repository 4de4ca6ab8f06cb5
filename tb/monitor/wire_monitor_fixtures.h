// tb/monitor: the two wire monitor benches the test_wire_monitor_*.cpp
// files share. Wire feeds frames as sent (answers judged when sent);
// DeliveredWire feeds them as System does (acks_from_delivery: answers also
// as delivered to the requester, possibly later). Requests go A->B to the
// responder's QP kQpB, answers B->A to the requester's QP kQpA.
#pragma once
#include <cstddef>
#include <cstdint>
#include <gtest/gtest.h>
#include <optional>
#include <string>
#include <vector>

#include "model/monitor/wire_monitor.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"

namespace ernic::test {

constexpr uint32_t kQpB = 2;   // responder's QP on B (requests A->B go here)
constexpr uint32_t kQpA = 3;   // requester's QP on A (answers B->A go here)
inline const std::string AB = "A->B", BA = "B->A";

struct Wire {
  monitor::WireMonitor m;
  uint64_t t = 0;

  void send(const std::string& dir, roce::Frame f, const roce::EncodeOptions& o = {}) {
    f.ip4.src = roce::Ipv4Addr{dir == AB ? 0x0A000001u : 0x0A000002u};
    f.ip4.dst = roce::Ipv4Addr{dir == AB ? 0x0A000002u : 0x0A000001u};
    t += 1000000;
    m.on_frame(roce::encode(f, o), t, dir);
  }
  // A request packet A->B. ack_req defaults to IBTA's rule (LAST/ONLY/READ).
  void req(uint8_t opcode, uint32_t psn, size_t payload = 0, int ack_req = -1, uint32_t read_len = 0) {
    roce::Frame f;
    f.bth.opcode = opcode;
    f.bth.dest_qp = kQpB;
    f.bth.psn = psn;
    const auto* oi = roce::opcode_info(opcode);
    f.bth.ack_req = ack_req >= 0 ? ack_req != 0 : (oi->pos == roce::OpPos::Last || oi->pos == roce::OpPos::Only);
    if (oi->ext & roce::kExtReth)
      f.reth = roce::Reth{0x1000, 0x100, opcode == roce::op::RC_READ_REQUEST ? read_len : 0};
    f.payload.assign(payload, 0xA5);
    send(AB, f);
  }
  // An answer B->A (ACK, NAK or READ response).
  void ans(uint8_t opcode, uint32_t psn, uint8_t syn, uint32_t msn, size_t payload = 0) {
    roce::Frame f;
    f.bth.opcode = opcode;
    f.bth.dest_qp = kQpA;
    f.bth.psn = psn;
    if (roce::opcode_info(opcode)->ext & roce::kExtAeth) f.aeth = roce::Aeth{syn, msn};
    f.payload.assign(payload, 0x5A);
    send(BA, f);
  }
  void ack(uint32_t psn, uint32_t msn, uint8_t syn = 0x1F) { ans(roce::op::RC_ACK, psn, syn, msn); }

  std::string dump() const {
    std::string s;
    for (const auto& v : m.violations()) s += "  " + v.str() + "\n";
    return s;
  }
  // Exactly the one rule, at least once, and nothing else.
  void expect_only(const std::string& rule) const {
    ASSERT_FALSE(m.violations().empty()) << "no violation; expected " << rule;
    for (const auto& v : m.violations()) EXPECT_EQ(v.rule, rule) << dump();
  }
};

// A monitor fed as System feeds it (acks_from_delivery): frames as sent and,
// for answers, as delivered to the requester.
struct DeliveredWire {
  monitor::WireMonitor m{true};
  uint64_t t = 0;
  std::vector<uint8_t> enc(uint8_t opc, uint32_t qp, uint32_t psn, size_t payload, uint32_t read_len,
                           std::optional<roce::Aeth> aeth) {
    roce::Frame f;
    f.bth.opcode = opc;
    f.bth.dest_qp = qp;
    f.bth.psn = psn;
    const auto* oi = roce::opcode_info(opc);
    f.bth.ack_req = qp == kQpB && (oi->pos == roce::OpPos::Last || oi->pos == roce::OpPos::Only);
    if (oi->ext & roce::kExtReth)
      f.reth = roce::Reth{0x1000, 0x100, opc == roce::op::RC_READ_REQUEST ? read_len : 0};
    f.aeth = aeth;
    f.payload.assign(payload, 0xA5);
    return roce::encode(f);
  }
  void req(uint8_t opc, uint32_t psn, size_t payload = 0, uint32_t read_len = 0) {
    m.on_frame(enc(opc, kQpB, psn, payload, read_len, {}), t += 1000, AB);
  }
  // An answer B->A: as sent now; delivered now too unless `deliver` is false
  // (then deliver() hands it over later).
  std::vector<uint8_t> ans(uint8_t opc, uint32_t psn, uint8_t syn, uint32_t msn, size_t payload = 0,
                           bool deliver = true) {
    auto b = enc(opc, kQpA, psn, payload, 0, roce::opcode_info(opc)->ext & roce::kExtAeth
                                                  ? std::optional<roce::Aeth>(roce::Aeth{syn, msn})
                                                  : std::nullopt);
    m.on_frame(b, t += 1000, BA);
    if (deliver) m.on_delivered(b, t += 1000, BA);
    return b;
  }
  void deliver(const std::vector<uint8_t>& b) { m.on_delivered(b, t += 1000, BA); }
  std::string dump() const {
    std::string s;
    for (const auto& v : m.violations()) s += "  " + v.str() + "\n";
    return s;
  }
};

}  // namespace ernic::test
