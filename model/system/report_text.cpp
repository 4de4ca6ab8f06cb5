// model/system: the run's summary printed on stdout (summary_text, report.h),
// read from the JSON report, one function a part.
#include <fmt/format.h>

#include "model/system/report.h"
#include "model/system/report_ext.h"
#include "model/system/report_peer.h"

namespace ernic {

using nlohmann::json;

// ", 1 TX, 2 RX frame(s) still inside at the end (not checked)" or "".
static std::string unchecked_text(const json& u) {
  if (!u.is_object()) return "";
  std::string parts;
  for (const char* k : {"tx", "rx", "bypass"}) {
    const uint64_t v = u.value(k, uint64_t(0));
    if (v) parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", v, k == std::string("bypass") ? "bypass" : (k == std::string("tx") ? "TX" : "RX"));
  }
  return parts.empty() ? "" : "; " + parts + " frame(s) still inside at the end (not checked)";
}

namespace {
// Failures, the last frames, model errors, events, the stall report.
std::string failures_text(const json& r) {
  std::string o;
  for (const auto& f : r["failures"])
    o += fmt::format("  FAILED  at {:.6f} us (core cycle {}){}{}: {}\n", f["time_ps"].get<uint64_t>() / 1e6,
                     f["core_cycle"].get<uint64_t>(), f["step"].get<std::string>().empty() ? "" : ", ",
                     f["step"].get<std::string>(), f["what"].get<std::string>());
  if (r.contains("last_frames"))
    for (const auto& [dir, l] : r["last_frames"].items()) {
      o += fmt::format("  last frames {}:{}\n", dir, l.empty() ? " none" : "");
      for (const auto& x : l) o += "    " + x.get<std::string>() + "\n";
    }
  for (const auto& e : r["model_errors"])
    o += fmt::format("  MODEL ERROR {} at {:.3f} us: {}\n", e["where"].get<std::string>(),
                     e["time_ps"].get<uint64_t>() / 1e6, e["what"].get<std::string>());
  for (const auto& e : r["events"])
    o += fmt::format("  event   {} at {:.3f} us: {}\n", e["where"].get<std::string>(),
                     e["time_ps"].get<uint64_t>() / 1e6, e["what"].get<std::string>());
  if (r.contains("stall_report"))
    for (const auto& s : r["stall_report"]) o += fmt::format("  stalled {}\n", s.get<std::string>());
  return o;
}

std::string idle_skip_text(const json& r) {
  std::string o;
  const auto& is = r["idle_skip"];
  const uint64_t core = r["clocks"]["core"]["cycles"].get<uint64_t>();
  std::string rtl;
  for (const auto& [name, v] : is["rtl_clocked_core_cycles"].items())
    rtl += fmt::format(" {} {}", name, v.get<uint64_t>());
  if (is["enabled"].get<bool>())
    o += fmt::format("idle skip on: RTL clocked on{} of {} core cycles, the rest skipped\n", rtl, core);
  else
    o += fmt::format("idle skip off: every cycle evaluated (RTL clocked on{}; tickers core {}, cmac {})\n", rtl,
                     is["ticker_cycles"].value("core", uint64_t(0)), is["ticker_cycles"].value("cmac", uint64_t(0)));
  return o;
}

// A node's lines: frames each way, datapath, MR cache, QP-setup offload,
// and the link when something happened on it.
std::string node_text(const std::string& name, const json& n) {
  std::string o;
  for (const char* dir : {"tx", "rx"}) {
    const auto& d = n[dir];
    o += fmt::format("node {} {} {:>6} packets {:>10} bytes:", name, dir, d["packets"].get<uint64_t>(),
                     d["bytes"].get<uint64_t>());
    for (const auto& [op, v] : d["by_opcode"].items())
      o += fmt::format(" {} {}/{}B", op, v["packets"].get<uint64_t>(), v["bytes"].get<uint64_t>());
    o += "\n";
  }
  if (n.contains("peer")) return o + peer_node_text(name, n);  // kind: peer (report_peer.h)
  {
    const auto& d = n["datapath"];
    auto u = [&](const char* k) { return d[k].get<uint64_t>(); };
    if (d["scoreboard"].get<bool>())
      o += fmt::format("node {} datapath {}: {} TX, {} RX, {} bypass frames checked against the reference models, "
                       "{} mismatch(es){}\n",
                       name, d["kind"].get<std::string>(), u("tx_checked"), u("rx_checked"), u("bypass_checked"),
                       u("mismatches"), unchecked_text(d["unchecked_at_end"]));
    else
      o += fmt::format("node {} datapath {}: {} TX, {} RX, {} bypass frames\n", name, d["kind"].get<std::string>(),
                       u("tx_frames"), u("rx_frames"), u("bypass_frames"));
  }
  if (n.contains("bridge")) {  // host: program
    const auto& b = n["bridge"];
    auto u = [&](const char* k) { return b[k].get<uint64_t>(); };
    std::string who = "no program step ran";
    if (n.contains("program")) {
      const auto& p = n["program"];
      who = (p["argv"].empty() ? std::string("a program started by hand") : p["argv"][0].get<std::string>()) +
            ", " + (p["status"].get<std::string>().empty() ? std::string("session ended") : p["status"].get<std::string>());
    }
    o += fmt::format("node {} host program ({}): {} MMIO reads, {} MMIO writes, {} syncs, {} DMA reads ({} bytes), "
                     "{} DMA writes ({} bytes), {} interrupts, {} refused\n",
                     name, who, u("mmio_reads"), u("mmio_writes"), u("syncs"), u("dma_reads"), u("dma_read_bytes"),
                     u("dma_writes"), u("dma_write_bytes"), u("interrupts"), u("refused"));
  }
  if (n.contains("mr_lookup") && n["mr_lookup"]["mode"] == "cam") {
    const auto& m = n["mr_lookup"];
    o += fmt::format("node {} mr_cache: cam, {} entries: {} lookups, {} hits, {} misses ({} compulsory, {} capacity, "
                     "{} after invalidation), hit rate {:.1f}% ({:.1f}% after first use), {} evictions, {} invalidations\n",
                     name, m["entries"].get<uint32_t>(), m["lookups"].get<uint64_t>(), m["hits"].get<uint64_t>(),
                     m["misses"].get<uint64_t>(), m["compulsory_misses"].get<uint64_t>(),
                     m["capacity_misses"].get<uint64_t>(), m["invalidation_misses"].get<uint64_t>(),
                     100.0 * m["hit_rate"].get<double>(), 100.0 * m["warm_hit_rate"].get<double>(),
                     m["evictions"].get<uint64_t>(), m["invalidations"].get<uint64_t>());
  }
  o += extension_text(name, n);  // named extensions, when on (report_ext.h)
  if (n.contains("qp_setup_fsm")) {
    const auto& q = n["qp_setup_fsm"];
    std::string codes;
    for (const auto& [code, cnt] : q["status_counts"].items()) codes += fmt::format(" {} x{}", code, cnt.get<uint64_t>());
    o += fmt::format("node {} qp_setup_fsm ({}): {} command(s){}{}; state {}, status 0x{:02x}\n", name,
                     q["datapath"].get<std::string>(), q["commands"].get<uint64_t>(), codes.empty() ? "" : ":", codes,
                     q["state"].get<std::string>(), q["status"].get<uint32_t>());
  }
  // The link line only when flow control, an overflow or an underflow happened.
  const auto& l = n["link"];
  auto u = [&](const char* k) { return l[k].get<uint64_t>(); };
  if (u("rx_xoff") + u("pfc_xoff_sent") + u("pause_frames_received") + u("rx_overflow_drops") +
          u("tx_underflows") + u("rx_bad_fcs") > 0)
    o += fmt::format("node {} link: RX buffer peak {}/{} B, {} frame(s) lost to overflow; PFC sent {} XOFF {} XON, "
                     "{} pause frame(s) received, TX held {} time(s) for {} ns; {} TX underflow(s), {} bad FCS\n",
                     name, u("rx_buffer_peak"), u("rx_buffer_bytes"), u("rx_overflow_drops"), u("pfc_xoff_sent"),
                     u("pfc_xon_sent"), u("pause_frames_received"), u("tx_held"), u("tx_held_ns"), u("tx_underflows"),
                     u("rx_bad_fcs"));
  return o;
}

// The switch's line: totals, and the port with the deepest queue.
std::string switch_text(const json& sw) {
  const auto& t = sw["totals"];
  auto u = [&](const char* k) { return t[k].get<uint64_t>(); };
  std::string deepest;
  uint64_t peak = 0;
  for (const auto& [name, p] : sw["ports"].items())
    if (p["max_queue_bytes"].get<uint64_t>() > peak || deepest.empty()) {
      peak = p["max_queue_bytes"].get<uint64_t>();
      deepest = name;
    }
  return fmt::format("switch    {} ports: {} frames in, {} out; {} dropped (buffer), {} no route, {} flooded; {} ECN "
                     "mark(s); PFC {} XOFF {} XON sent, {} pause frame(s) received; max queue {} B (port {})\n",
                     sw["ports"].size(), u("frames_in"), u("frames_out"), u("dropped"), u("no_route"), u("flooded"),
                     u("ecn_marked"), u("pfc_xoff_sent"), u("pfc_xon_sent"), u("pause_rx"), peak, deepest);
}

std::string protocol_text(const json& r) {
  std::string o;
  uint64_t axis = 0, axil = 0, beats = 0, frames = 0, accesses = 0, stalls = 0, viol = 0;
  for (const auto& [name, m] : r["protocol_monitors"].items()) {
    if (m["kind"] == "axi4-lite") {
      ++axil;
      accesses += m["writes"].get<uint64_t>() + m["reads"].get<uint64_t>();
    } else {
      ++axis;
      beats += m["beats"].get<uint64_t>();
      frames += m["frames"].get<uint64_t>();
    }
    stalls += m["stalls"].get<uint64_t>();
    viol += m["violations"].get<uint64_t>();
  }
  o += fmt::format("protocol  {} AXI4-Stream + {} AXI4-Lite interfaces monitored: {} beats ({} frames), {} register "
                   "accesses, {} stall edges, {} violation(s)\n",
                   axis, axil, beats, frames, accesses, stalls, viol);
  return o;
}
}  // namespace

std::string summary_text(const json& r) {
  std::string o;
  o += fmt::format("scenario  {} ({})\n", r["scenario"].get<std::string>(), r["file"].get<std::string>());
  o += fmt::format("result    {} (exit {})\n", r["result"].get<std::string>(), r["exit_code"].get<int>());
  o += failures_text(r);
  if (r.contains("scoreboard")) o += fmt::format("scoreboard {}\n", r["scoreboard"]["summary"].get<std::string>());
  o += fmt::format("sim time  {:.3f} us\n", r["sim_time_us"].get<double>());
  if (r.contains("stopped_after_error"))
    o += fmt::format("stopped   {} us after the first model error (limits.after_error_us), before the last step\n",
                     r["stopped_after_error"]["after_error_us"].get<uint64_t>());
  if (r.contains("pcie")) o += fmt::format("pcie      {}\n", r["pcie"]["summary"].get<std::string>());
  for (const auto& [name, c] : r["clocks"].items())
    o += fmt::format("cycles    {:<5} {:>12} ({} MHz, {} ps)\n", name, c["cycles"].get<uint64_t>(),
                     c["mhz"].get<double>(), c["period_ps"].get<uint64_t>());
  if (r.contains("idle_skip")) o += idle_skip_text(r);
  for (const auto& [name, n] : r["nodes"].items()) o += node_text(name, n);
  if (r.contains("switch")) o += switch_text(r["switch"]);
  if (r.contains("protocol_monitors") && !r["protocol_monitors"].empty()) o += protocol_text(r);
  if (r.contains("handshake_random"))
    for (const auto& [scope, h] : r["handshake_random"].items())
      o += fmt::format("handshake random {}: seed {}, READY high {}%, VALID raised {}%: {} stall cycles inserted\n", scope,
                       h["seed"].get<uint64_t>(), h["ready_pct"].get<uint32_t>(), h["valid_pct"].get<uint32_t>(),
                       h["total_stall_cycles"].get<uint64_t>());
  const auto& w = r["wall"];
  o += fmt::format("wall      {:.3f} s, {:.0f} simulated core cycles per wall second\n", w["seconds"].get<double>(),
                   w["sim_core_cycles_per_wall_second"].get<double>());
  return o;
}

}  // namespace ernic
