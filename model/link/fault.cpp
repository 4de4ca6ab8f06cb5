// model/link: the wire fault injector (see fault.h).
#include "model/link/fault.h"

#include "model/link/ecn.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <utility>

#include "model/roce/icrc.h"
#include "model/roce/opcodes.h"
#include "model/roce/packet.h"
#include "model/roce/types.h"

namespace ernic {

namespace {

constexpr const char* kFieldNames[] = {"bth.opcode", "bth.psn",    "bth.dest_qp", "ip.ttl",  "ip.checksum",
                                       "icrc",       "payload",    "bth.flags",   "aeth.syndrome", "eth.dst",
                                       "eth.src",    "ip.version", "ip.flags",    "ip.src",  "ip.dst",
                                       "udp.length"};

// Offset of the BTH when the frame is UDP to port 4791 and holds all 12
// bytes of it (IPv4 header length from its IHL, as roce::is_roce reads it).
std::optional<size_t> bth_offset(const uint8_t* d, size_t len) {
  if (!roce::is_roce(d, len)) return std::nullopt;  // also guarantees Eth + IP + UDP fit
  const uint16_t et = roce::get_be16(d + 12);
  const size_t ip_len =
      et == roce::kEtherTypeIpv4 ? size_t(d[roce::kEthHdrLen] & 0x0F) * 4 : roce::kIpv6HdrLen;
  const size_t off = roce::kEthHdrLen + ip_len + roce::kUdpHdrLen;
  if (len < off + roce::kBthLen) return std::nullopt;
  return off;
}

// 4 or 6 when the frame carries a whole IPv4/IPv6 header, else 0.
int ip_version(const uint8_t* d, size_t len) {
  if (!d || len < roce::kEthHdrLen + 1) return 0;
  const uint16_t et = roce::get_be16(d + 12);
  const uint8_t ver = d[roce::kEthHdrLen] >> 4;
  if (et == roce::kEtherTypeIpv4 && ver == 4 && len >= roce::kEthHdrLen + roce::kIpv4HdrLen)
    return 4;
  if (et == roce::kEtherTypeIpv6 && ver == 6 && len >= roce::kEthHdrLen + roce::kIpv6HdrLen)
    return 6;
  return 0;
}

// BTH fields of a frame as it enters (-1: no readable BTH).
struct BthView {
  int opcode = -1;
  int64_t psn = -1;
  int64_t dest_qp = -1;
};

BthView view_of(const FrameBytes& f) {
  BthView v;
  if (const auto off = bth_offset(f.data(), f.size())) {
    const uint8_t* b = f.data() + *off;
    v.opcode = b[0];
    v.dest_qp = roce::get_be24(b + 5);
    v.psn = roce::get_be24(b + 9);
  }
  return v;
}

bool criteria_hold(const FaultRule& r, const BthView& v) {
  const bool needs_bth = !r.opcodes.empty() || r.psn || r.dest_qp;
  if (!needs_bth) return true;
  if (v.opcode < 0) return false;
  if (!r.opcodes.empty()) {
    bool any = false;
    for (uint8_t op : r.opcodes) any = any || op == v.opcode;
    if (!any) return false;
  }
  if (r.psn && int64_t(*r.psn) != v.psn) return false;
  if (r.dest_qp && int64_t(*r.dest_qp) != v.dest_qp) return false;
  return true;
}

// corrupt with repair: the IPv4 header checksum and the ICRC of the frame
// as it now is. False (nothing changed) when the frame is not IPv4/IPv6 by
// its EtherType and version nibble, or shorter than its IP length says.
bool repair_checksums(FrameBytes& f) {
  if (f.size() < roce::kEthHdrLen + roce::kIpv4HdrLen) return false;
  const uint16_t et = uint16_t(f[12] << 8 | f[13]);
  const uint8_t* ip = f.data() + roce::kEthHdrLen;
  size_t end = 0;
  if (et == 0x0800 && (ip[0] >> 4) == 4) {
    f[roce::kEthHdrLen + 10] = f[roce::kEthHdrLen + 11] = 0;
    const uint16_t c = roce::ipv4_checksum(f.data() + roce::kEthHdrLen);
    f[roce::kEthHdrLen + 10] = uint8_t(c >> 8);
    f[roce::kEthHdrLen + 11] = uint8_t(c);
    end = roce::kEthHdrLen + (size_t(ip[2]) << 8 | ip[3]);
  } else if (et == 0x86DD && (ip[0] >> 4) == 6 && f.size() >= roce::kEthHdrLen + roce::kIpv6HdrLen) {
    end = roce::kEthHdrLen + roce::kIpv6HdrLen + (size_t(ip[4]) << 8 | ip[5]);
  } else {
    return false;
  }
  if (end > f.size() || end < roce::kEthHdrLen + roce::kIcrcLen) return false;
  roce::put_le32(f.data() + end - roce::kIcrcLen, roce::compute_icrc(f.data(), end - roce::kIcrcLen));
  return true;
}

// The byte a corrupt rule flips in this frame, if it has it.
std::optional<size_t> corrupt_target(const FaultRule& r, const FrameBytes& f) {
  if (r.corrupt_byte) {
    if (size_t(*r.corrupt_byte) >= f.size()) return std::nullopt;
    return size_t(*r.corrupt_byte);
  }
  return FaultInjector::field_offset(f, r.corrupt_field);
}

}  // namespace

FaultInjector::FaultInjector(uint64_t seed) : rng_(seed) {}

const char* FaultInjector::kind_name(FaultKind k) {
  switch (k) {
    case FaultKind::drop: return "drop";
    case FaultKind::duplicate: return "duplicate";
    case FaultKind::reorder: return "reorder";
    case FaultKind::corrupt: return "corrupt";
    case FaultKind::delay: return "delay";
    case FaultKind::ecn: return "ecn";
  }
  return "?";
}

std::optional<FaultKind> FaultInjector::kind_from_name(const std::string& name) {
  for (FaultKind k : {FaultKind::drop, FaultKind::duplicate, FaultKind::reorder,
                      FaultKind::corrupt, FaultKind::delay, FaultKind::ecn})
    if (name == kind_name(k)) return k;
  return std::nullopt;
}

bool FaultInjector::is_field_name(const std::string& field) {
  for (const char* n : kFieldNames)
    if (field == n) return true;
  return false;
}

std::string FaultInjector::check_rule(const FaultRule& r) {
  if (r.nth && *r.nth == 0) return "nth is 1-based: 0 selects nothing";
  if (r.probability && !(*r.probability >= 0.0 && *r.probability <= 1.0))
    return "probability must be within [0, 1]";
  if (r.kind == FaultKind::corrupt) {
    const bool by_byte = r.corrupt_byte.has_value(), by_field = !r.corrupt_field.empty();
    if (by_byte == by_field) return "corrupt needs exactly one of corrupt_byte and corrupt_field";
    if (by_field && !is_field_name(r.corrupt_field))
      return "unknown corrupt_field \"" + r.corrupt_field +
             "\" (bth.opcode, bth.psn, bth.dest_qp, bth.flags, aeth.syndrome, eth.dst, eth.src, ip.version, "
             "ip.flags, ip.ttl, ip.checksum, ip.src, ip.dst, udp.length, icrc, payload)";
    if (r.corrupt_bit > 7) return "corrupt_bit must be 0..7";
  }
  if (r.kind == FaultKind::reorder && r.reorder_after == 0)
    return "reorder_after must be at least 1";
  return {};
}

std::optional<size_t> FaultInjector::field_offset(const uint8_t* d, size_t len,
                                                  const std::string& field) {
  if (!d) return std::nullopt;
  if (field == "eth.dst" || field == "eth.src") {
    if (len < roce::kEthHdrLen) return std::nullopt;
    return size_t(field == "eth.dst" ? 5 : 11);
  }
  if (field == "ip.version" || field == "ip.flags" || field == "ip.src" || field == "ip.dst" ||
      field == "udp.length") {
    const int ver = ip_version(d, len);
    const size_t ip = roce::kEthHdrLen;
    if (ver == 4) {
      if (field == "ip.version") return ip;
      if (field == "ip.flags") return ip + 6;
      if (field == "ip.src") return ip + 15;
      if (field == "ip.dst") return ip + 19;
      if (len < ip + roce::kIpv4HdrLen + 6) return std::nullopt;
      return ip + roce::kIpv4HdrLen + 5;
    }
    if (ver == 6) {
      if (field == "ip.version") return ip;
      if (field == "ip.flags") return std::nullopt;
      if (field == "ip.src") return ip + 23;
      if (field == "ip.dst") return ip + 39;
      if (len < ip + roce::kIpv6HdrLen + 6) return std::nullopt;
      return ip + roce::kIpv6HdrLen + 5;
    }
    return std::nullopt;
  }
  if (field == "aeth.syndrome") {
    const auto fr = roce::decode(d, len);
    if (!fr || !fr->aeth) return std::nullopt;
    const roce::OpcodeInfo* info = roce::opcode_info(fr->bth.opcode);
    if (!info) return std::nullopt;
    // The AETH follows the BTH and any RETH/DETH before it (only READ
    // responses and ACKs carry one, right after the BTH).
    const size_t bth = roce::kEthHdrLen + (fr->ipv6 ? roce::kIpv6HdrLen : roce::kIpv4HdrLen) + roce::kUdpHdrLen;
    return bth + roce::kBthLen;
  }
  if (field == "bth.opcode" || field == "bth.dest_qp" || field == "bth.psn" || field == "bth.flags") {
    const auto off = bth_offset(d, len);
    if (!off) return std::nullopt;
    if (field == "bth.opcode") return *off;
    if (field == "bth.flags") return *off + 1;
    if (field == "bth.dest_qp") return *off + 7;   // DestQP bytes 5..7: LSB
    return *off + 11;                              // PSN bytes 9..11: LSB
  }
  if (field == "ip.ttl" || field == "ip.checksum") {
    const int ver = ip_version(d, len);
    if (ver == 4) return roce::kEthHdrLen + (field == "ip.ttl" ? 8 : 10);
    if (ver == 6 && field == "ip.ttl") return roce::kEthHdrLen + 7;  // hop limit
    return std::nullopt;
  }
  if (field == "icrc" || field == "payload") {
    const auto fr = roce::decode(d, len);
    if (!fr) return std::nullopt;
    const roce::OpcodeInfo* info = roce::opcode_info(fr->bth.opcode);
    if (!info) return std::nullopt;  // decode accepts known opcodes only
    const size_t payload_off = roce::kEthHdrLen + (fr->ipv6 ? roce::kIpv6HdrLen : roce::kIpv4HdrLen) +
                               roce::kUdpHdrLen + roce::kBthLen + info->ext_len;
    if (field == "payload") {
      if (fr->payload.empty()) return std::nullopt;
      return payload_off;
    }
    const size_t icrc_off = payload_off + fr->payload.size() + fr->pad.size();
    if (icrc_off + roce::kIcrcLen > len) return std::nullopt;  // decode guarantees it; be safe
    return icrc_off;
  }
  return std::nullopt;
}

void FaultInjector::add_rule(FaultRule r) {
  const std::string why = check_rule(r);
  if (!why.empty())
    throw std::invalid_argument("fault rule \"" + r.name + "\": " + why);
  RuleState s;
  s.r = std::move(r);
  rules_.push_back(std::move(s));
}

void FaultInjector::set_link_up(bool up) { link_up_ = up; }

size_t FaultInjector::active_rule_count() const {
  size_t n = 0;
  for (const RuleState& s : rules_) n += s.retired ? 0 : 1;
  return n;
}

std::vector<uint64_t> FaultInjector::held_indices() const {
  std::vector<uint64_t> v;
  v.reserve(held_.size());
  for (const Held& h : held_) v.push_back(h.index);
  return v;
}

double FaultInjector::draw() { return double(rng_() >> 11) * 0x1.0p-53; }

std::vector<WireOut> FaultInjector::on_frame(FrameBytes f, std::vector<FaultApplied>* applied) {
  const uint64_t idx = next_index_++;
  const BthView v = view_of(f);
  std::vector<WireOut> out;
  auto record = [&](const std::string& rule, FaultKind k, uint64_t index, int opcode, int64_t psn,
                    std::string detail) {
    if (applied) applied->push_back(FaultApplied{rule, k, index, opcode, psn, std::move(detail)});
  };

  if (!link_up_) {
    record("link", FaultKind::drop, idx, v.opcode, v.psn, "link down");
  } else {
    // Every live rule counts the frame for nth; the first one that selects
    // it is applied.
    RuleState* sel = nullptr;
    size_t sel_byte = 0;
    for (RuleState& s : rules_) {
      if (s.retired || !criteria_hold(s.r, v)) continue;
      ++s.matched;
      if (s.r.nth) {
        if (s.matched != *s.r.nth) continue;
        s.retired = true;  // its one frame is this one, applied or not
      }
      if (sel) continue;
      std::optional<size_t> byte;
      if (s.r.kind == FaultKind::corrupt) {
        byte = corrupt_target(s.r, f);
        if (!byte) continue;  // nothing to flip: the rule does not apply
      }
      if (s.r.probability && !(draw() < *s.r.probability)) continue;
      sel = &s;
      if (byte) sel_byte = *byte;
    }

    if (!sel) {
      out.push_back(WireOut{std::move(f), 0, idx, false, false});
    } else {
      const FaultRule& r = sel->r;
      ++sel->applied;
      if (r.count != 0 && sel->applied >= r.count) sel->retired = true;
      switch (r.kind) {
        case FaultKind::drop:
          record(r.name, r.kind, idx, v.opcode, v.psn, "dropped");
          break;
        case FaultKind::duplicate:
          record(r.name, r.kind, idx, v.opcode, v.psn, "duplicated");
          out.push_back(WireOut{f, 0, idx, false, false});
          out.push_back(WireOut{std::move(f), 0, idx, true, false});
          break;
        case FaultKind::reorder: {
          const uint64_t after = idx + r.reorder_after;
          record(r.name, r.kind, idx, v.opcode, v.psn,
                 "held until after frame " + std::to_string(after));
          held_.push_back(Held{idx, after, std::move(f), v.opcode, v.psn});
          break;
        }
        case FaultKind::corrupt: {
          std::string what = "byte " + std::to_string(sel_byte);
          if (r.corrupt_value) {
            char buf[48];
            std::snprintf(buf, sizeof buf, " 0x%02x -> 0x%02x", f[sel_byte], *r.corrupt_value);
            what += buf;
            f[sel_byte] = *r.corrupt_value;
          } else {
            f[sel_byte] = uint8_t(f[sel_byte] ^ (1u << r.corrupt_bit));
            what += " bit " + std::to_string(r.corrupt_bit);
          }
          if (!r.corrupt_field.empty()) what += " (" + r.corrupt_field + ")";
          if (r.repair) what += repair_checksums(f) ? ", checksums repaired" : ", not repairable";
          record(r.name, r.kind, idx, v.opcode, v.psn, what);
          out.push_back(WireOut{std::move(f), 0, idx, false, false});
          break;
        }
        case FaultKind::ecn: {
          // The IP ECN field := CE, the IPv4 header checksum again (ecn.h).
          // Non-IP: untouched.
          const char* done = ecn::set_ce(f);
          record(r.name, r.kind, idx, v.opcode, v.psn, done ? done : "not IP: unchanged");
          out.push_back(WireOut{std::move(f), 0, idx, false, false});
          break;
        }
        case FaultKind::delay:
          record(r.name, r.kind, idx, v.opcode, v.psn, "+" + std::to_string(r.delay_ps) + " ps");
          out.push_back(WireOut{std::move(f), r.delay_ps, idx, false, false});
          break;
      }
    }
  }

  // Held frames whose last awaited frame is this one leave right after it,
  // oldest first (lost if the link is down now).
  std::vector<Held> still;
  for (Held& h : held_) {
    if (h.release_after > idx) {
      still.push_back(std::move(h));
    } else if (link_up_) {
      out.push_back(WireOut{std::move(h.bytes), 0, h.index, false, true});
    } else {
      record("link", FaultKind::drop, h.index, h.opcode, h.psn, "link down while held");
    }
  }
  held_ = std::move(still);
  return out;
}

}  // namespace ernic
