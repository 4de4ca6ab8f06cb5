// tools: ernic-sim pcap decode / lint / replay (see pcap_cmd.h; replay: pcap_replay.h).
#include "tools/pcap_cmd.h"


#include <CLI/CLI.hpp>
#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/monitor/wire_monitor.h"
#include "model/roce/opcodes.h"
#include "model/roce/wire_decode.h"
#include "model/trace/capture_file.h"
#include "tools/pcap_replay.h"

namespace pcap_cmd {

namespace {


std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

using CapFrame = ernic::CaptureFrame;
using Capture = ernic::Capture;

std::string time_str(uint64_t ns) { return fmt("%" PRIu64 ".%09" PRIu64, ns / 1000000000ull, ns % 1000000000ull); }

roce::WireDecode decode_frame(const CapFrame& f) {
  return f.ib ? roce::decode_wire_ib(f.bytes.data(), f.bytes.size())
              : roce::decode_wire(f.bytes.data(), f.bytes.size());
}

// Endpoint addresses as text: IP, GID or LID.
std::pair<std::string, std::string> endpoints(const roce::WireFrame& w) {
  if (w.encap == roce::Encap::RoceV2)
    return w.f.ipv6 ? std::make_pair(w.f.ip6.src.str(), w.f.ip6.dst.str())
                    : std::make_pair(w.f.ip4.src.str(), w.f.ip4.dst.str());
  if (w.grh) return {w.grh->sgid.str(), w.grh->dgid.str()};
  if (w.lrh) return {fmt("lid%u", w.lrh->slid), fmt("lid%u", w.lrh->dlid)};
  return {"?", "?"};
}

std::string encap_str(const roce::WireFrame& w) {
  std::string s = w.encap == roce::Encap::RoceV1 ? "RoCEv1"
                  : w.encap == roce::Encap::Ib   ? "IB"
                  : w.f.ipv6                     ? "RoCEv2/IPv6"
                                                 : "RoCEv2/IPv4";
  for (uint16_t tci : w.vlans) s += fmt(" vlan=%u", tci & 0xFFF);
  return s;
}

// The four ICRC bytes as on the wire, read big-endian (as tshark shows them).
uint32_t wire_order(uint32_t v) {
  return (v & 0xFF) << 24 | (v >> 8 & 0xFF) << 16 | (v >> 16 & 0xFF) << 8 | v >> 24;
}

std::string decode_line(const roce::WireFrame& w) {
  const roce::Frame& f = w.f;
  const roce::Bth& b = f.bth;
  const auto [src, dst] = endpoints(w);
  std::string s = encap_str(w) + " " + src + " -> " + dst + " " + w.op->name;
  s += fmt(" op=0x%02x qp=0x%06x psn=%u a=%d se=%d m=%d pad=%u tver=%u pkey=0x%04x", b.opcode, b.dest_qp, b.psn,
           int(b.ack_req), int(b.se), int(b.mig), unsigned(b.pad_cnt), unsigned(b.tver), b.pkey);
  if (b.fecn()) s += " fecn=1";
  if (b.becn()) s += " becn=1";
  if (w.rdeth) s += fmt(" eecnxt=0x%06x", *w.rdeth);
  if (f.deth) s += fmt(" qkey=0x%08x srcqp=0x%06x", f.deth->qkey, f.deth->src_qp);
  if (w.xrceth) s += fmt(" xrcsrq=0x%06x", *w.xrceth);
  if (f.reth) s += fmt(" va=0x%016" PRIx64 " rkey=0x%08x dmalen=%u", f.reth->va, f.reth->rkey, f.reth->dma_len);
  if (f.atomic_eth)
    s += fmt(" va=0x%016" PRIx64 " rkey=0x%08x swap=0x%016" PRIx64 " cmp=0x%016" PRIx64, f.atomic_eth->va,
             f.atomic_eth->rkey, f.atomic_eth->swap_add, f.atomic_eth->compare);
  if (f.aeth) s += fmt(" syndrome=0x%02x msn=%u", f.aeth->syndrome, f.aeth->msn);
  if (f.atomic_ack_eth) s += fmt(" orig=0x%016" PRIx64, f.atomic_ack_eth->orig);
  if (f.immdt) s += fmt(" imm=0x%08x", *f.immdt);
  if (f.ieth) s += fmt(" ieth=0x%08x", *f.ieth);
  s += fmt(" payload=%zu", f.payload.size());
  s += fmt(" icrc=0x%08x %s", wire_order(f.icrc),
           w.icrc_ok() ? "ok" : fmt("BAD(want 0x%08x)", wire_order(w.icrc_calc)).c_str());
  if (w.vcrc) s += fmt(" vcrc=0x%04x", *w.vcrc);
  if (w.trailing) s += fmt(" trailing=%zu", w.trailing);
  return s;
}

int decode_main(const Capture& c) {
  for (const CapFrame& f : c.frames) {
    std::string line = std::to_string(f.n) + " " + time_str(f.t_ns) + " ";
    if (!f.skip.empty()) {
      line += "- not RoCE: " + f.skip;
    } else {
      const roce::WireDecode d = decode_frame(f);
      if (d.status == roce::WireStatus::NotRoce) line += "- not RoCE: " + d.why;
      else if (d.status == roce::WireStatus::Malformed) line += "! malformed RoCE: " + d.why;
      else line += decode_line(d.w);
    }
    std::puts(line.c_str());
  }
  return 0;
}

// --- lint -------------------------------------------------------------------

struct Finding {
  uint64_t frame = 0;
  uint64_t t_ns = 0;
  std::string rule, what, flow;
};

struct FlowStats {
  std::string name;        // "10.1.16.62 -> 10.1.16.61 QP 0x00001b"
  std::string transports;  // "RC", "RC,UD", ...
  uint64_t frames = 0, bytes = 0, findings = 0;
  uint32_t psn_first = 0, psn_last = 0;
  std::map<std::string, uint64_t> opcodes;  // name -> count
  uint64_t first_frame = 0;
};

// UC requests (the wire monitor watches RC and UD): PSNs consecutive per
// destination QP, FIRST/MIDDLE*/LAST or ONLY without interleaving, pad
// only on LAST/ONLY and payload + pad a multiple of 4. UC has no answers.
class UcChecker {
 public:
  explicit UcChecker(bool mid_connection) : mid_(mid_connection) {}
  // Findings (rule, what) for one UC frame travelling on dir.
  std::vector<std::pair<std::string, std::string>> on_frame(const std::string& dir, const roce::WireFrame& w) {
    std::vector<std::pair<std::string, std::string>> out;
    const roce::Bth& b = w.f.bth;
    const roce::WireOpcode& o = *w.op;
    const char* n = o.name.c_str();
    State& s = qps_[{dir, b.dest_qp}];
    const int kind = o.kind == roce::OpKind::Send ? 0 : 1;
    const bool first_seen = !s.seen;
    if (s.seen && b.psn != s.next)
      out.push_back({"psn_sequence", fmt("%s psn=0x%06x: expected 0x%06x", n, b.psn, s.next)});
    switch (o.pos) {
      case roce::OpPos::First:
      case roce::OpPos::Only:
        if (s.open != -1)
          out.push_back({"opcode_sequence", fmt("%s psn=0x%06x while a %s message is unfinished", n, b.psn,
                                                s.open == 0 ? "SEND" : "WRITE")});
        s.open = o.pos == roce::OpPos::First ? kind : -1;
        break;
      case roce::OpPos::Middle:
      case roce::OpPos::Last:
        if (s.open != kind && !(first_seen && mid_))
          out.push_back({"opcode_sequence", fmt("%s psn=0x%06x: %s", n, b.psn,
                                                s.open == -1 ? "no message is open (FIRST missing)"
                                                             : s.open == 0 ? "inside a SEND message"
                                                                           : "inside a WRITE message")});
        s.open = o.pos == roce::OpPos::Last ? -1 : kind;
        break;
    }
    const bool last = o.pos == roce::OpPos::Last || o.pos == roce::OpPos::Only;
    if (!last && b.pad_cnt)
      out.push_back({"padcnt", fmt("%s psn=0x%06x has PadCnt %u: only a LAST or ONLY packet is padded", n, b.psn,
                                   unsigned(b.pad_cnt))});
    if ((w.f.payload.size() + b.pad_cnt) % 4)
      out.push_back({"padcnt", fmt("%s psn=0x%06x: payload %zu + pad %u is not a multiple of 4", n, b.psn,
                                   w.f.payload.size(), unsigned(b.pad_cnt))});
    s.seen = true;
    s.next = (b.psn + 1) & 0xFFFFFF;
    return out;
  }

 private:
  struct State {
    bool seen = false;
    uint32_t next = 0;
    int open = -1;  // message open: -1 none, 0 SEND, 1 WRITE
  };
  bool mid_;
  std::map<std::pair<std::string, uint32_t>, State> qps_;
};

int lint_main(const Capture& c, const std::string& path, bool from_start) {
  UcChecker uc(!from_start);
  ernic::monitor::WireMonitor mon;
  mon.set_mid_connection(!from_start);
  std::vector<Finding> findings;
  std::map<std::string, std::vector<uint64_t>> dir_frames;  // monitor direction -> frame numbers fed, in order
  std::map<uint64_t, std::string> flow_of;                  // frame -> flow key
  std::map<std::string, FlowStats> flows;
  uint64_t roce_frames = 0, other = 0, unchecked = 0;
  for (const CapFrame& cf : c.frames) {
    if (!cf.skip.empty()) {
      ++other;
      continue;
    }
    const roce::WireDecode d = decode_frame(cf);
    if (d.status == roce::WireStatus::NotRoce) {
      ++other;
      continue;
    }
    ++roce_frames;
    if (d.status == roce::WireStatus::Malformed) {
      findings.push_back({cf.n, cf.t_ns, "decode", "malformed RoCE frame: " + d.why, ""});
      continue;
    }
    const roce::WireFrame& w = d.w;
    const auto [src, dst] = endpoints(w);
    const std::string key = fmt("%s -> %s QP 0x%06x", src.c_str(), dst.c_str(), w.f.bth.dest_qp);
    flow_of[cf.n] = key;
    FlowStats& fs = flows[key];
    if (!fs.frames) {
      fs.name = key;
      fs.first_frame = cf.n;
      fs.psn_first = w.f.bth.psn;
    }
    ++fs.frames;
    fs.bytes += cf.bytes.size();
    fs.psn_last = w.f.bth.psn;
    ++fs.opcodes[w.op->name];
    const std::string tr = roce::wire_transport_name(w.op->transport);
    if (fs.transports.find(tr) == std::string::npos) fs.transports += (fs.transports.empty() ? "" : ",") + tr;
    const char* opn = w.op->name.c_str();
    if (!w.icrc_ok())
      findings.push_back({cf.n, cf.t_ns, "icrc",
                          fmt("%s psn=0x%06x: ICRC 0x%08x on the wire, the covered bytes give 0x%08x", opn,
                              w.f.bth.psn, wire_order(w.f.icrc), wire_order(w.icrc_calc)),
                          key});
    if (!w.ipv4_checksum_ok)
      findings.push_back({cf.n, cf.t_ns, "ip_checksum",
                          fmt("%s psn=0x%06x: IPv4 header checksum 0x%04x is wrong", opn, w.f.bth.psn,
                              w.f.ip4.checksum),
                          key});
    if (!w.op->known && w.op->transport != roce::WireTransport::Vendor)
      findings.push_back({cf.n, cf.t_ns, "opcode",
                          fmt("opcode 0x%02x is reserved in the %s transport", w.f.bth.opcode,
                              roce::wire_transport_name(w.op->transport)),
                          key});
    const std::string dir = src + "->" + dst;
    if (w.op->known && w.op->transport == roce::WireTransport::UC) {
      for (auto& [rule, what] : uc.on_frame(dir, w)) findings.push_back({cf.n, cf.t_ns, rule, what, key});
      continue;
    }
    const roce::Bytes plain = roce::as_plain_rocev2(cf.bytes.data(), cf.bytes.size(), w);
    if (plain.empty()) {
      ++unchecked;  // RD, XRC, vendor and reserved opcodes: decoded, not sequence-checked
      continue;
    }
    dir_frames[dir].push_back(cf.n);
    mon.on_frame(plain, cf.t_ns * 1000, dir);
  }
  for (const auto& v : mon.violations()) {
    const auto& fr = dir_frames[v.dir];
    const uint64_t n = v.frame_index < fr.size() ? fr[v.frame_index] : 0;  // frames are numbered 1..N in order
    const uint64_t t = n >= 1 && n <= c.frames.size() ? c.frames[n - 1].t_ns : 0;
    findings.push_back({n, t, v.rule, v.what, flow_of.count(n) ? flow_of[n] : ""});
  }
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Finding& a, const Finding& b) { return a.frame < b.frame; });
  for (const Finding& f : findings) {
    std::printf("frame %" PRIu64 " at %s s: %s: %s%s%s\n", f.frame, time_str(f.t_ns).c_str(), f.rule.c_str(),
                f.what.c_str(), f.flow.empty() ? "" : " [", f.flow.empty() ? "" : (f.flow + "]").c_str());
    if (flows.count(f.flow)) ++flows[f.flow].findings;
  }
  std::vector<const FlowStats*> order;
  for (const auto& [k, fs] : flows) order.push_back(&fs);
  std::sort(order.begin(), order.end(),
            [](const FlowStats* a, const FlowStats* b) { return a->first_frame < b->first_frame; });
  for (const FlowStats* fs : order) {
    std::string ops;
    for (const auto& [name, n] : fs->opcodes) ops += (ops.empty() ? "" : ", ") + name + fmt(" x%" PRIu64, n);
    std::printf("flow %s (%s): %" PRIu64 " frames, %" PRIu64 " bytes, PSN 0x%06x..0x%06x, %s; %" PRIu64
                " finding(s)\n",
                fs->name.c_str(), fs->transports.c_str(), fs->frames, fs->bytes, fs->psn_first, fs->psn_last,
                ops.c_str(), fs->findings);
  }
  std::printf("%s: %zu frames, %" PRIu64 " RoCE (%" PRIu64 " not sequence-checked: RD/XRC/unknown), %" PRIu64
              " other, %zu flow(s), %zu finding(s): %s\n",
              path.c_str(), c.frames.size(), roce_frames, unchecked, other, flows.size(), findings.size(),
              findings.empty() ? "clean" : "VIOLATION");
  return findings.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ernic-sim pcap: decode, lint or replay a real capture (pcap or pcapng)", "ernic-sim pcap"};
  app.require_subcommand(1);
  std::string file;
  bool from_start = false;
  auto* dec = app.add_subcommand("decode", "one line per frame: number, time since the first frame, our decode");
  dec->add_option("file", file, "capture (pcap or pcapng)")->required();
  auto* lint = app.add_subcommand(
      "lint", "decoder, ICRC and wire monitor per flow: one line per finding, a summary per flow; exit 1 on a "
              "violation, 2 for an unusable capture");
  lint->add_option("file", file, "capture (pcap or pcapng)")->required();
  lint->add_flag("--from-start", from_start,
                 "the capture holds every connection from its first packet (default: it may start mid-connection)");
  pcap_replay::ReplayOptions ro;  // replay: tools/pcap_replay.h
  auto* rep = pcap_replay::add_subcommand(app, file, ro);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  std::string why;
  const auto cap = ernic::read_capture(file, &why);
  const char* sub = dec->parsed() ? "decode" : rep->parsed() ? "replay" : "lint";
  if (!cap) {
    std::fprintf(stderr, "ernic-sim pcap %s: %s: %s\n", sub, file.c_str(), why.c_str());
    return 2;
  }
  std::fflush(stdout);
  if (rep->parsed()) {
    std::vector<pcap_replay::ReplayFrame> fr;
    for (const CapFrame& f : cap->frames) fr.push_back({f.n, f.t_ns, f.bytes, f.ib, f.skip});
    ro.file = file;
    return pcap_replay::replay_main(fr, ro);
  }
  return dec->parsed() ? decode_main(*cap) : lint_main(*cap, file, from_start);
}

}  // namespace pcap_cmd
