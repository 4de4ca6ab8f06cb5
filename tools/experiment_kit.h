// tools: what `ernic-sim experiment` (experiment.h) and its sweeps
// (experiment_sweeps.cpp) share: a run and its outcome, the report
// document, the CSV, the claim and the Experiment interface, helpers for
// figures.
#pragma once
#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "model/dma/pcie.h"
#include "tools/bench.h"

namespace ernic::experiment {

namespace fs = std::filesystem;
using json = nlohmann::json;

// ------------------------------------------------------------------ runs

struct RunSpec {
  std::string id;          // file stem, unique within the experiment
  std::string yaml;        // generated scenario text, or
  std::string path;        // an existing scenario file
  bool log = false;        // keep a transaction log (--log)
  std::string datapath = "rtl";
};

struct RunOut {
  bool ok = false;
  json report;             // the run's --json
  std::string scen, json_file, log_file, out_file;
  std::string why;         // when not ok
};

inline std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// ------------------------------------------------------------------ report

inline std::string html_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    switch (c) {
      case '&': r += "&amp;"; break;
      case '<': r += "&lt;"; break;
      case '>': r += "&gt;"; break;
      case '"': r += "&quot;"; break;
      default: r += c;
    }
  }
  return r;
}

// `code` spans of Markdown, as HTML.
inline std::string inline_html(const std::string& s) {
  std::string r, cur;
  bool code = false;
  for (char c : s) {
    if (c == '`') {
      r += code ? "<code>" + html_escape(cur) + "</code>" : html_escape(cur);
      cur.clear();
      code = !code;
    } else {
      cur += c;
    }
  }
  r += code ? "`" + html_escape(cur) : html_escape(cur);
  return r;
}

// One document written twice: Markdown and HTML.
struct Doc {
  std::string md, html;
  void h(int level, const std::string& t, const std::string& anchor = "") {
    md += std::string(size_t(level), '#') + " " + t + "\n\n";
    html += fmt::format("<h{0}{2}>{1}</h{0}>\n", level, inline_html(t), anchor.empty() ? "" : " id=\"" + anchor + "\"");
  }
  void p(const std::string& t) {
    md += t + "\n\n";
    html += "<p>" + inline_html(t) + "</p>\n";
  }
  void quote(const std::string& t) {
    md += "> " + t + "\n\n";
    html += "<blockquote>" + inline_html(t) + "</blockquote>\n";
  }
  void kv(const std::string& k, const std::string& v) {
    md += "**" + k + ":** " + v + "\n\n";
    html += "<p><b>" + inline_html(k) + ":</b> " + inline_html(v) + "</p>\n";
  }
  void bullets(const std::vector<std::string>& v) {
    html += "<ul>\n";
    for (const auto& t : v) {
      md += "- " + t + "\n";
      html += "<li>" + inline_html(t) + "</li>\n";
    }
    md += "\n";
    html += "</ul>\n";
  }
  void code(const std::string& t) {
    md += "```\n" + t + "\n```\n\n";
    html += "<pre>" + html_escape(t) + "</pre>\n";
  }
  void table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows) {
    md += "|";
    for (const auto& c : head) md += " " + c + " |";
    md += "\n|";
    for (size_t i = 0; i < head.size(); ++i) md += "---|";
    md += "\n";
    html += "<table>\n<tr>";
    for (const auto& c : head) html += "<th>" + inline_html(c) + "</th>";
    html += "</tr>\n";
    for (const auto& r : rows) {
      md += "|";
      html += "<tr>";
      for (const auto& c : r) {
        md += " " + c + " |";
        html += "<td>" + inline_html(c) + "</td>";
      }
      md += "\n";
      html += "</tr>\n";
    }
    md += "\n";
    html += "</table>\n";
  }
  void img(const std::string& file, const std::string& alt) {
    md += "![" + alt + "](" + file + ")\n\n";
    html += "<p><img src=\"" + html_escape(file) + "\" alt=\"" + html_escape(alt) + "\" style=\"max-width:100%\"></p>\n";
  }
};

// ------------------------------------------------------------------ helpers

inline std::string f1(double v) { return fmt::format("{:.1f}", v); }
inline std::string f2(double v) { return fmt::format("{:.2f}", v); }
inline std::string f3(double v) { return fmt::format("{:.3f}", v); }
inline std::string pct(double ratio) { return fmt::format("{:+.1f} %", (ratio - 1) * 100); }

// Goodput limit of a 100 Gb/s Ethernet link for one message of `size`
// bytes at PMTU 4096 in the data's direction: every packet costs preamble/
// SFD 8 + Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 + IFG 12
// = 82 bytes besides its payload; a WRITE's first packet adds RETH 16, a
// READ response's first and last (or only) packet AETH 4; an Ethernet frame
// is at least 64 bytes (padding). Gb/s of payload.
inline double wire_limit_gbps(const std::string& op, uint64_t size) {
  const uint64_t pmtu = 4096;
  const uint64_t n = std::max<uint64_t>(1, (size + pmtu - 1) / pmtu);
  double line = 0;
  for (uint64_t k = 0; k < n; ++k) {
    const uint64_t pay = std::min(pmtu, size - k * pmtu);
    uint64_t ext = 0;
    if (op == "write" && k == 0) ext = 16;
    if (op == "read" && (k == 0 || k + 1 == n)) ext = 4;
    const uint64_t frame = std::max<uint64_t>(64, 14 + 20 + 8 + 12 + ext + pay + 4 + 4);
    line += double(frame + 8 + 12);
  }
  return 100.0 * double(size) / line;
}

// The formula of model/dma/pcie.h: payload Gb/s of a stream of P-byte TLPs.
inline double pcie_gbps(uint32_t gen, uint32_t lanes, uint32_t payload) {
  PcieParams p;
  p.gen = gen;
  p.lanes = lanes;
  return p.payload_rate(payload) * 8.0;
}

// The window of a run from its JSON report's steps: the first `post`'s
// start to the last `wait_completions`' end, in ps.
inline bool step_window(const json& rep, uint64_t* t0, uint64_t* t1) {
  *t0 = UINT64_MAX;
  *t1 = 0;
  if (!rep.contains("steps")) return false;
  for (const auto& s : rep["steps"]) {
    if (s.value("step", "") == "post") *t0 = std::min(*t0, s.value("start_ps", uint64_t(0)));
    if (s.value("step", "") == "wait_completions") *t1 = std::max(*t1, s.value("end_ps", uint64_t(0)));
  }
  return *t0 < *t1;
}

// Every record of a run's --log (JSON lines), in order.
inline void for_each_log_record(const std::string& log, const std::function<void(const json&)>& f) {
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    const json o = json::parse(line, nullptr, false);
    if (!o.is_discarded()) f(o);
  }
}

struct Csv {
  std::string header;
  std::vector<std::string> rows;
  std::string text() const {
    std::string t = header + "\n";
    for (const auto& r : rows) t += r + "\n";
    return t;
  }
};

// ------------------------------------------------------------------ experiments

struct Claim {
  std::string seed, original, translation;
};

struct Experiment {
  virtual ~Experiment() = default;
  virtual std::string name() const = 0;
  virtual std::string title() const = 0;
  virtual std::vector<RunSpec> plan(bool full) const = 0;
  // The CSV from the runs (false: a run's figures are missing; *why says).
  virtual bool analyse(const std::vector<RunSpec>& specs, const std::vector<RunOut>& outs, Csv* csv,
                       std::string* why) = 0;
  // The report's section, from what analyse() kept.
  virtual void report(Doc& d, bool full) const = 0;
};

inline std::string nodes_yaml(uint32_t num_qp, uint32_t mib, const std::string& b_extra = "") {
  return fmt::format(
      "nodes:\n  A: {{ mac: \"02:00:00:00:00:0a\", ip: 10.0.0.1, num_qp: {0}, memory_mib: {1} }}\n"
      "  B: {{ mac: \"02:00:00:00:00:0b\", ip: 10.0.0.2, num_qp: {0}, memory_mib: {1}{2} }}\n",
      num_qp, mib, b_extra);
}

// Seed 003's doorbell-batching claim, quoted by doorbell_batch (its
// throughput side) and doorbell_latency (its latency side).
inline constexpr const char* kClaimSeed003DoorbellBatching =
    "seed 003 (`003_427c70dbe97496c8.txt`, section 4.4): 「Doorbell合并（Doorbell Batching）：软件可以连续放入多个WQE，然后只写一次"
    "Doorbell。……虽然Doorbell开销降低了，但WQE的提交延迟反而增加了」 — \"Doorbell batching: software queues several WQEs, then "
    "writes the doorbell once. ... the doorbell overhead fell, but the WQEs' submission latency rose.\"";

// Of the rows of one operation (Row has `op` and `batch`), the one with a
// batch of 1 and the one with the largest batch; null where there is none.
template <class Row>
std::pair<const Row*, const Row*> one_and_largest_batch(const std::vector<Row>& rows, const std::string& op) {
  const Row* one = nullptr;
  const Row* most = nullptr;
  for (const auto& r : rows)
    if (r.op == op) {
      if (r.batch == 1) one = &r;
      if (!most || r.batch > most->batch) most = &r;
    }
  return {one, most};
}

// The experiments built (experiment_sweeps.cpp), in report order.
std::vector<std::unique_ptr<Experiment>> registry();
// The MR cache, QP count and doorbell sweeps (experiment_sweeps_queues.cpp).
void add_queue_sweeps(std::vector<std::unique_ptr<Experiment>>& v);
// Doorbell batching's latency side (experiment_sweeps_submit.cpp).
void add_submit_sweeps(std::vector<std::unique_ptr<Experiment>>& v);
// CQE batches and doorbell lines (experiment_sweeps_host.cpp).
void add_host_sweeps(std::vector<std::unique_ptr<Experiment>>& v);
// Connection set-up (experiment_sweeps_cm.cpp).
void add_cm_sweeps(std::vector<std::unique_ptr<Experiment>>& v);
// Shadow doorbells and the QP-context cache, model extensions
// (experiment_sweeps_shadow.cpp, experiment_sweeps_qpc.cpp).
void add_shadow_sweeps(std::vector<std::unique_ptr<Experiment>>& v);
void add_qpc_sweeps(std::vector<std::unique_ptr<Experiment>>& v);

}  // namespace ernic::experiment
