// model/trace: the timeline view of a transaction log (see txlog_view.h).
#include "model/trace/txlog_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>

#include "model/regs/wqe.h"
#include "model/roce/opcodes.h"

namespace ernic {

namespace {

using nlohmann::json;

// A line that is not a valid record: the reason.
struct Bad {
  std::string what;
};

const json* find(const json& o, const char* key) {
  auto it = o.find(key);
  return it == o.end() ? nullptr : &*it;
}

const json& need(const json& o, const char* key) {
  if (const json* v = find(o, key)) return *v;
  throw Bad{fmt::format("missing key \"{}\"", key)};
}

uint64_t as_u(const json& v, const char* key) {
  if (!v.is_number_unsigned()) throw Bad{fmt::format("\"{}\" is not an unsigned integer", key)};
  return v.get<uint64_t>();
}

uint64_t get_u(const json& o, const char* key) { return as_u(need(o, key), key); }

int64_t get_i(const json& o, const char* key) {
  const json& v = need(o, key);
  if (v.is_number_unsigned() && v.get<uint64_t>() <= uint64_t(std::numeric_limits<int64_t>::max()))
    return int64_t(v.get<uint64_t>());
  if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<int64_t>();
  throw Bad{fmt::format("\"{}\" is not an integer", key)};
}

bool get_b(const json& o, const char* key) {
  const json& v = need(o, key);
  if (!v.is_boolean()) throw Bad{fmt::format("\"{}\" is not a boolean", key)};
  return v.get<bool>();
}

// Strings are printed with control characters made visible, so that one
// record stays one line.
std::string clean(const std::string& s) {
  std::string r;
  r.reserve(s.size());
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n')
      r += "\\n";
    else if (c == '\t')
      r += "\\t";
    else if (c == '\r')
      r += "\\r";
    else if (c < 0x20 || c == 0x7F)
      r += fmt::format("\\x{:02x}", c);
    else
      r += ch;
  }
  return r;
}

std::string get_s(const json& o, const char* key) {
  const json& v = need(o, key);
  if (!v.is_string()) throw Bad{fmt::format("\"{}\" is not a string", key)};
  return clean(v.get_ref<const std::string&>());
}

std::optional<uint64_t> opt_u(const json& o, const char* key) {
  if (const json* v = find(o, key)) return as_u(*v, key);
  return std::nullopt;
}

std::optional<std::string> opt_s(const json& o, const char* key) {
  if (find(o, key)) return get_s(o, key);
  return std::nullopt;
}

// The CQE opcode field is the WQE opcode (PG332 Table 2-1, model/regs/wqe.h).
std::string cqe_opcode_name(uint64_t op) {
  const char* n = op <= 0xFF ? pg332::wqe_opcode_log_name(uint8_t(op)) : "?";
  return fmt::format("{}({})", std::string(n) == "?" ? "UNKNOWN" : n, op);
}

const char* const kCommon[] = {"t_ps", "node", "kind", "domain", "cycle", "qp"};

// The kind's fields, read in record order (so that the first bad one is named).
std::string body_of(const std::string& kind, const json& o) {
  if (kind == "reg") {
    const std::string op = get_s(o, "op");
    const uint64_t addr = get_u(o, "addr");
    const std::string name = get_s(o, "name");
    const uint64_t value = get_u(o, "value");
    return fmt::format("{} {} = 0x{:08x}  (addr 0x{:x})", op, name, value, addr);
  }
  if (kind == "dma") {
    const std::string master = get_s(o, "master");
    const std::string op = get_s(o, "op");
    const uint64_t addr = get_u(o, "addr");
    const uint64_t len = get_u(o, "len");
    std::string s = fmt::format("{} {} addr=0x{:x} len={}", master, op, addr, len);
    if (o.contains("bursts")) s += fmt::format(" bursts={}", get_u(o, "bursts"));
    if (o.contains("tlps")) s += fmt::format(" tlps={}", get_u(o, "tlps"));
    if (o.contains("cpls")) s += fmt::format(" cpls={}", get_u(o, "cpls"));
    return s;
  }
  if (kind == "frame") {
    const std::string dir = get_s(o, "dir");
    const std::string link = get_s(o, "link");
    const uint64_t index = get_u(o, "index");
    const uint64_t len = get_u(o, "len");
    std::string s = fmt::format("{} {} #{}  ", dir, link, index);
    if (get_b(o, "roce")) {
      get_i(o, "opcode");  // checked; shown by name
      const std::string opname = get_s(o, "opname");
      const uint64_t psn = get_u(o, "psn");
      const uint64_t dest_qp = get_u(o, "dest_qp");
      const bool ack_req = get_b(o, "ack_req");
      s += fmt::format("{} psn=0x{:06x}", opname, psn);
      if (auto syn = opt_u(o, "syndrome")) s += fmt::format(" syn=0x{:02x}", *syn);
      if (auto msn = opt_u(o, "msn")) s += fmt::format(" msn={}", *msn);
      if (auto mad = opt_s(o, "mad")) s += fmt::format(" mad={}", *mad);
      s += fmt::format(" len={} dqp={}", len, dest_qp);
      if (ack_req) s += " ackreq";
    } else {
      s += fmt::format("non-RoCE len={}", len);
    }
    const std::string src = get_s(o, "src");
    const std::string dst = get_s(o, "dst");
    if (!get_b(o, "roce") && (!src.empty() || !dst.empty())) s += fmt::format(" {}->{}", src, dst);
    return s;
  }
  if (kind == "cqe") {
    const uint64_t idx = get_u(o, "cq_index");
    const uint64_t wr_id = get_u(o, "wr_id");
    const uint64_t opcode = get_u(o, "opcode");
    const bool error = get_b(o, "error");
    const uint64_t raw = get_u(o, "raw");
    return fmt::format("idx={} wr_id={} opcode={} {} raw=0x{:08x}", idx, wr_id,
                       cqe_opcode_name(opcode), error ? "ERROR" : "ok", raw);
  }
  if (kind == "intr") {
    const bool level = get_b(o, "level");
    const uint64_t intsts = get_u(o, "intsts");
    return fmt::format("level={} intsts=0x{:08x}", level ? 1 : 0, intsts);
  }
  if (kind == "fault") {
    const std::string link = get_s(o, "link");
    const uint64_t index = get_u(o, "index");
    const std::string rule = get_s(o, "rule");
    const std::string action = get_s(o, "action");
    const int64_t opcode = get_i(o, "opcode");
    const int64_t psn = get_i(o, "psn");
    const std::string detail = get_s(o, "detail");
    std::string s = fmt::format("{} rule={} frame {} #{}", action, rule, link, index);
    if (opcode >= 0 && opcode <= 0xFF)
      s += fmt::format(" {}", roce::opcode_name(uint8_t(opcode)));
    else if (opcode > 0xFF)
      s += fmt::format(" opcode={}", opcode);
    if (psn >= 0) s += fmt::format(" psn=0x{:06x}", psn);
    if (!detail.empty()) s += fmt::format(" ({})", detail);
    return s;
  }
  if (kind == "state") {
    const std::string what = get_s(o, "what");
    const std::string value = get_s(o, "value");
    return fmt::format("{} = {}", what, value);
  }
  if (kind == "step") {
    const std::string at = get_s(o, "at");
    const std::string step = get_s(o, "step");
    const std::string phase = get_s(o, "phase");
    const std::string detail = get_s(o, "detail");
    std::string s = fmt::format("{} {} at {}", phase, step, at);
    if (!detail.empty()) s += fmt::format(" ({})", detail);
    return s;
  }
  // A kind this viewer does not know: its other fields as key=value.
  std::string s;
  for (auto it = o.begin(); it != o.end(); ++it) {
    if (std::find_if(std::begin(kCommon), std::end(kCommon),
                     [&](const char* c) { return it.key() == c; }) != std::end(kCommon))
      continue;
    if (!s.empty()) s += ' ';
    s += clean(it.key()) + '=' +
         clean(it.value().is_string() ? it.value().get_ref<const std::string&>()
                                      : it.value().dump(-1, ' ', false,
                                                        json::error_handler_t::replace));
  }
  return s;
}

struct Row {
  uint64_t t_ps = 0;
  std::string node, domain, qp, kind, body;
  std::optional<uint64_t> cycle;  // shown only for records with a node
};

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool matches(const TimelineFilter& f, const Row& r, const std::optional<uint64_t>& qp,
             const std::string& link) {
  if (!f.nodes.empty() && !contains(f.nodes, r.node)) {
    bool by_link = false;
    if (r.kind == "fault" && r.node.empty()) {
      const size_t arrow = link.find("->");
      if (arrow != std::string::npos)
        by_link = contains(f.nodes, link.substr(0, arrow)) || contains(f.nodes, link.substr(arrow + 2));
    }
    if (!by_link) return false;
  }
  if (!f.kinds.empty() && !contains(f.kinds, r.kind)) return false;
  if (f.qp && (!qp || *qp != *f.qp)) return false;
  // t_ps / 1e6 is correctly rounded, so a bound written with the printed
  // digits (e.g. 12.345678) compares equal to the record it was copied from.
  const double t_us = double(r.t_ps) / 1e6;
  if (f.from_us && t_us < *f.from_us) return false;
  if (f.to_us && t_us > *f.to_us) return false;
  return true;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

std::string describe(const TimelineFilter& f) {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : " ") + part; };
  if (!f.nodes.empty()) add("node=" + join(f.nodes));
  if (f.qp) add(fmt::format("qp={}", *f.qp));
  if (!f.kinds.empty()) add("kind=" + join(f.kinds));
  if (f.from_us) add(fmt::format("from={}us", *f.from_us));
  if (f.to_us) add(fmt::format("to={}us", *f.to_us));
  return s.empty() ? "none" : s;
}

size_t digits(uint64_t v) { return fmt::formatted_size("{}", v); }

}  // namespace

int print_timeline(const std::string& path, const TimelineFilter& f, std::ostream& out,
                   std::ostream& err) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    err << fmt::format("{}: cannot read the transaction log: is a directory\n", path);
    return 2;
  }
  // A log is a regular file (as `run` asks of a scenario): /dev/zero or a
  // FIFO would be read forever.
  const auto st = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) {
    err << fmt::format("{}: cannot read the transaction log: not a regular file\n", path);
    return 2;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err << fmt::format("{}: cannot read the transaction log: {}\n", path, std::strerror(errno));
    return 2;
  }

  std::vector<Row> rows;
  uint64_t total = 0;
  std::string line;
  for (uint64_t lineno = 1; std::getline(in, line); ++lineno) {
    try {
      json o;
      try {
        o = json::parse(line);
      } catch (const json::parse_error& e) {
        throw Bad{fmt::format("not valid JSON (byte {})", e.byte)};
      } catch (const json::exception& e) {
        // e.g. out_of_range.406: a number such as 1e400 that no double holds.
        std::string what = e.what();
        if (const size_t b = what.find("] "); what.rfind("[json.exception.", 0) == 0 && b != std::string::npos)
          what.erase(0, b + 2);
        throw Bad{"not valid JSON (" + what + ")"};
      }
      if (!o.is_object()) throw Bad{"not a JSON object"};
      if (o.size() == 1 && o.contains("instant_ps")) continue;  // a split run node's instant mark (TxLog::mark_instants)
      Row r;
      r.t_ps = get_u(o, "t_ps");
      r.kind = get_s(o, "kind");
      r.node = opt_s(o, "node").value_or("");
      r.domain = opt_s(o, "domain").value_or("");
      r.cycle = opt_u(o, "cycle");
      const std::optional<uint64_t> qp = opt_u(o, "qp");
      r.body = body_of(r.kind, o);  // checks the kind's fields on every line
      ++total;
      std::string link;
      if (r.kind == "fault") link = get_s(o, "link");
      if (!matches(f, r, qp, link)) continue;
      r.qp = qp ? fmt::format("QP{}", *qp) : "-";
      if (r.node.empty()) r.cycle.reset();
      rows.push_back(std::move(r));
    } catch (const Bad& b) {
      err << fmt::format("{}:{}: malformed transaction log record: {}\n", path, lineno, b.what);
      return 2;
    } catch (const json::exception& e) {  // a value of a type body_of did not expect
      err << fmt::format("{}:{}: malformed transaction log record: {}\n", path, lineno, e.what());
      return 2;
    }
  }
  if (in.bad()) {
    err << fmt::format("{}: error reading the transaction log: {}\n", path, std::strerror(errno));
    return 2;
  }

  // The file is in the order records were written; a received frame is
  // written when its last byte is in but stamped with its first byte's
  // time. Shown in time order (stable: equal times keep the file's order).
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.t_ps < b.t_ps; });

  size_t w_time = 7, w_node = 1, w_clock = 1, w_qp = 1, w_kind = 1;
  for (const Row& r : rows) {
    w_time = std::max(w_time, digits(r.t_ps / 1000000));
    w_node = std::max(w_node, r.node.size());
    w_clock = std::max(w_clock, std::max<size_t>(r.domain.size(), 1) + (r.cycle ? 1 + digits(*r.cycle) : 0));
    w_qp = std::max(w_qp, r.qp.size());
    w_kind = std::max(w_kind, r.kind.size());
  }

  out << fmt::format("# timeline of {}  filter: {}\n", path, describe(f));
  std::string s;
  for (const Row& r : rows) {
    s.clear();
    const std::string& dom = r.domain.empty() ? std::string("-") : r.domain;
    // "core#  20": the cycle right-aligned to the column's end.
    const std::string clock =
        r.cycle ? fmt::format("{}#{:>{}}", dom, *r.cycle, w_clock - dom.size() - 1)
                : fmt::format("{:<{}}", dom, w_clock);
    fmt::format_to(std::back_inserter(s), "{:>{}}.{:06} us  {:<{}}  {}  {:<{}}  {:<{}}  {}",
                   r.t_ps / 1000000, w_time, r.t_ps % 1000000, r.node.empty() ? "-" : r.node,
                   w_node, clock, r.qp, w_qp, r.kind, w_kind, r.body);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    s += '\n';
    out << s;
  }
  out << fmt::format("# {} / {} records shown\n", rows.size(), total);
  out.flush();
  if (!out.good()) {
    err << fmt::format("{}: the timeline could not be written\n", path);
    return 2;
  }
  return 0;
}

}  // namespace ernic
