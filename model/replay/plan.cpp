// model/replay: the plan both sides share (see plan.h).
#include "model/replay/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "model/roce/cm.h"
#include "model/roce/opcodes.h"
#include "model/roce/wire_decode.h"

namespace ernic::replay {

bool is_request(uint8_t op) {
  const auto k = roce::wire_opcode(op).kind;
  return op < 0x20 && roce::wire_opcode(op).known &&
         (k == roce::OpKind::Send || k == roce::OpKind::Write || k == roce::OpKind::ReadRequest ||
          k == roce::OpKind::Atomic);
}
bool is_response(uint8_t op) { return op >= 0x0D && op <= 0x12; }
const char* op_name(uint8_t op) { return roce::opcode_name(op); }

std::string ack_fields(const roce::Frame& f) {
  return f.aeth ? fmt::format(" syndrome=0x{:02x} msn={}", f.aeth->syndrome, f.aeth->msn) : std::string();
}



std::string ReplayOptions::key(const std::string& cli) const {
  if (!scenario_keys) return cli;
  std::string k = cli.rfind("--", 0) == 0 ? cli.substr(2) : cli;
  for (char& c : k)
    if (c == '-') c = '_';
  return k;
}

std::string OtherTransport::why() const {
  if (!total()) return "";
  std::string what;
  if (rocev1) what = fmt::format("{} RoCEv1 (EtherType 0x8915, GRH)", rocev1);
  if (ib) what += fmt::format("{}{} native InfiniBand", what.empty() ? "" : " and ", ib);
  return fmt::format("{} RoCE frame(s) of the capture are {}, not replayed: ERNIC speaks RoCEv2 only (PG332: over "
                     "IPv4 or IPv6, UDP port 4791)",
                     total(), what);
}

// The capture's RoCEv2 frames (IPv4 and IPv6), decoded by packet.h (RC, UD, CNP).
std::vector<Pkt> decode_all(const std::vector<ReplayFrame>& frames, std::vector<std::string>* malformed,
                            OtherTransport* other) {
  std::vector<Pkt> out;
  *other = {};
  for (const ReplayFrame& c : frames) {
    if (c.ib) ++other->ib;
    if (!c.skip.empty() || c.ib) continue;
    const roce::WireDecode d = roce::decode_wire(c.bytes.data(), c.bytes.size());
    if (d.status == roce::WireStatus::NotRoce) continue;
    if (d.status == roce::WireStatus::Malformed) {
      malformed->push_back(fmt::format("frame {}: a RoCE frame that does not decode ({}): left out", c.n, d.why));
      continue;
    }
    if (d.w.encap != roce::Encap::RoceV2) {
      ++(d.w.encap == roce::Encap::RoceV1 ? other->rocev1 : other->ib);
      continue;
    }
    const roce::Bytes plain = roce::as_plain_rocev2(c.bytes.data(), c.bytes.size(), d.w);
    auto f = plain.empty() ? std::nullopt : roce::decode(plain);
    if (!f) {
      malformed->push_back(fmt::format("frame {}: a RoCE frame that does not decode: left out", c.n));
      continue;
    }
    out.push_back({&c, std::move(*f)});
  }
  return out;
}

uint32_t detect_pmtu(const Plan& p) {
  uint32_t seg = 0, only = 0;
  for (const Pkt* k : p.requests) {
    const auto pos = roce::wire_opcode(k->f.bth.opcode).pos;
    const uint32_t len = uint32_t(k->f.payload.size());
    if (pos == roce::OpPos::First || pos == roce::OpPos::Middle) seg = std::max(seg, len);
    else only = std::max(only, len);
  }
  for (const Pkt* k : p.responses)
    if (k->f.bth.opcode == 0x0D || k->f.bth.opcode == 0x0E) seg = std::max(seg, uint32_t(k->f.payload.size()));
    else if (k->f.bth.opcode == 0x0F || k->f.bth.opcode == 0x10) only = std::max(only, uint32_t(k->f.payload.size()));
  for (uint32_t m : {256u, 512u, 1024u, 2048u, 4096u})
    if (seg ? m == seg : m >= only) return m;
  return 4096;
}

roce::Frame to_node(const roce::Frame& captured, const ReplayOptions& o) {
  roce::Frame f = captured;
  f.eth.src = *roce::MacAddr::parse(o.peer_mac);
  f.eth.dst = *roce::MacAddr::parse(o.node_mac);
  const roce::IpAddr src = *roce::IpAddr::parse(o.peer_ip), dst = *roce::IpAddr::parse(o.node_ip);
  if (src.v6 != f.ipv6) {  // another IP version than the capture's: that version's header, its defaults
    f.ipv6 = src.v6;
    f.ip4 = roce::Ipv4Hdr{};
    f.ip6 = roce::Ipv6Hdr{};
  }
  f.eth.ethertype = f.ipv6 ? roce::kEtherTypeIpv6 : roce::kEtherTypeIpv4;
  if (f.ipv6) {
    f.ip6.src = src.ip6;
    f.ip6.dst = dst.ip6;
  } else {
    f.ip4.src = src.ip4;
    f.ip4.dst = dst.ip4;
  }
  f.bth.dest_qp = o.node_qpn;
  f.bth.psn = (f.bth.psn + o.psn_delta) & kPsnMask;
  return f;
}

std::string resolve_addresses(const Plan& p, ReplayOptions* o) {
  const bool v6 = p.req_ip.v6;
  if (o->node_ip.empty() && o->peer_ip.empty()) {
    const bool own6 = !o->node_ip6.empty() && !o->peer_ip6.empty(), own4 = !o->node_ip4.empty() && !o->peer_ip4.empty();
    if (own6 && (v6 || !own4)) o->node_ip = o->node_ip6, o->peer_ip = o->peer_ip6;
    else if (own4) o->node_ip = o->node_ip4, o->peer_ip = o->peer_ip4;
    else if (!(o->node_ip4 + o->node_ip6 + o->peer_ip4 + o->peer_ip6).empty())
      return fmt::format("the two nodes have no IP version in common (ERNIC's node: {}; the other: {})",
                         o->node_ip4.empty() ? "IPv6 only" : o->node_ip6.empty() ? "IPv4 only" : "both",
                         o->peer_ip4.empty() ? "IPv6 only" : o->peer_ip6.empty() ? "IPv4 only" : "both");
  }
  if (o->node_ip.empty()) o->node_ip = v6 ? "fd00::2" : "10.0.0.2";
  if (o->peer_ip.empty()) o->peer_ip = v6 ? "fd00::1" : "10.0.0.1";
  const auto node = roce::IpAddr::parse(o->node_ip), peer = roce::IpAddr::parse(o->peer_ip);
  if (!node) return o->key("--node-ip") + " " + o->node_ip + ": not an IPv4 or IPv6 address";
  if (!peer) return o->key("--peer-ip") + " " + o->peer_ip + ": not an IPv4 or IPv6 address";
  if (node->v6 != peer->v6)
    return o->key("--node-ip") + " " + o->node_ip + " and " + o->key("--peer-ip") + " " + o->peer_ip +
           ": give two addresses of one IP version";
  return "";
}

// The connection and the mapping. Empty string: ok; else why not.
std::string make_plan(const std::vector<Pkt>& pk, const ReplayOptions& o, Plan* p) {
  const Pkt* first = nullptr;
  std::optional<roce::IpAddr> want_src;
  if (!o.requester_ip.empty()) {
    want_src = roce::IpAddr::parse(o.requester_ip);
    if (!want_src) return o.key("--requester-ip") + " " + o.requester_ip + ": not an IPv4 or IPv6 address";
  }
  for (const Pkt& k : pk)
    if (is_request(k.f.bth.opcode) && (!want_src || k.f.src_ip() == *want_src) &&
        (!o.qpn || k.f.bth.dest_qp == *o.qpn)) {
      first = &k;
      break;
    }
  if (!first) return "no RC request in the capture matches (requester IP / " + o.key("--qpn") + ")";
  p->req_ip = first->f.src_ip();
  p->resp_ip = first->f.dst_ip();
  p->resp_qpn = first->f.bth.dest_qp;
  std::set<uint32_t> req_psns;
  for (const Pkt& k : pk)
    if (is_request(k.f.bth.opcode) && k.f.src_ip() == p->req_ip && k.f.dst_ip() == p->resp_ip &&
        k.f.bth.dest_qp == p->resp_qpn) {
      p->requests.push_back(&k);
      req_psns.insert(k.f.bth.psn);
    }
  // The CM exchange: a ConnectRequest from the requester whose ConnectReply names the responder's QP.
  std::optional<uint32_t> cm_rqpn, cm_psn;
  std::map<uint32_t, std::pair<const Pkt*, roce::cm::Req>> reqs;  // local comm id ->
  for (const Pkt& k : pk) {
    if (k.f.bth.opcode != 0x64 || k.f.bth.dest_qp != 1) continue;
    const auto mad = roce::cm::decode_mad(k.f.payload.data(), k.f.payload.size());
    if (!mad) continue;
    if (auto* rq = std::get_if<roce::cm::Req>(&mad->msg); rq && k.f.src_ip() == p->req_ip)
      reqs[rq->local_comm_id] = {&k, *rq};
    if (auto* rp = std::get_if<roce::cm::Rep>(&mad->msg);
        rp && k.f.src_ip() == p->resp_ip && rp->local_qpn == p->resp_qpn && reqs.count(rp->remote_comm_id)) {
      const auto& [rf, rq] = reqs[rp->remote_comm_id];
      cm_rqpn = rq.local_qpn;
      cm_psn = rq.start_psn;
      p->source = fmt::format("the CM exchange (frames {} and {})", rf->cap->n, k.cap->n);
    }
  }
  if (p->source.empty()) p->source = "the data frames";
  // The requester's QPN: the CM's, else the first answer to one of the requests' PSNs.
  if (o.requester_qpn) p->req_qpn = *o.requester_qpn;
  else if (cm_rqpn) p->req_qpn = *cm_rqpn;
  else {
    bool found = false;
    for (const Pkt& k : pk)
      if (is_response(k.f.bth.opcode) && k.f.src_ip() == p->resp_ip && k.f.dst_ip() == p->req_ip &&
          req_psns.count(k.f.bth.psn)) {
        p->req_qpn = k.f.bth.dest_qp;
        found = true;
        break;
      }
    if (!found) return "no answer to the requests in the capture: give " + o.key("--requester-qpn");
  }
  p->first_psn = o.first_psn ? *o.first_psn : cm_psn ? *cm_psn : p->requests.front()->f.bth.psn;
  for (const Pkt& k : pk)
    if (is_response(k.f.bth.opcode) && k.f.src_ip() == p->resp_ip && k.f.dst_ip() == p->req_ip &&
        k.f.bth.dest_qp == p->req_qpn)
      p->responses.push_back(&k);
  return "";
}

std::vector<std::string> read_expect(const std::string& path, bool* ok) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {  // a device or FIFO would be read forever
    *ok = false;
    return out;
  }
  std::ifstream in(path);
  *ok = bool(in);
  std::string line;
  while (std::getline(in, line)) {
    const size_t a = line.find_first_not_of(" \t"), b = line.find_last_not_of(" \t\r");
    if (a == std::string::npos || line[a] == '#') continue;
    out.push_back(line.substr(a, b - a + 1));
  }
  return out;
}

DiffTally report_diffs(const std::vector<std::string>& diffs, const std::vector<std::string>& expected,
                       std::vector<std::string>* lines) {
  DiffTally t;
  for (const std::string& d : diffs) {
    const bool ex = std::find(expected.begin(), expected.end(), d) != expected.end();
    t.unexplained += !ex;
    lines->push_back(fmt::format("diff{}: {}", ex ? " (expected)" : "", d));
  }
  for (const std::string& e : expected)
    if (std::find(diffs.begin(), diffs.end(), e) == diffs.end()) {
      ++t.missing;
      lines->push_back("expected difference not seen: " + e);
    }
  return t;
}

}  // namespace ernic::replay
