// tools: `ernic-sim rtl-replay` (rtl_replay.h): a recorded stimulus into the
// Verilated datapath under SystemC.
#include "tools/rtl_replay.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "Vroce_datapath.h"
#include "Vroce_datapath___024root.h"
#include "model/datapath/sc/rtl_datapath_bind.h"
#include "tools/rtl_stim.h"

namespace ernic {

namespace {

using namespace sc_core;

struct Line {
  uint64_t t_ps = 0;
  int dom = 0;
  uint32_t first = 0, count = 0;  // into Stim::changes
};
struct Change {
  int idx;
  uint64_t v;
};
struct Stim {
  std::vector<Line> lines;
  std::vector<Change> changes;
};

// The whole file, parsed (the format: tools/rtl_stim.h). Throws on a bad line.
Stim load(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) throw std::runtime_error(path + ": " + std::strerror(errno));
  Stim s;
  std::string line;
  uint64_t no = 0;
  while (true) {
    line.clear();
    int c;
    while ((c = std::getc(f)) != EOF && c != '\n') line.push_back(char(c));
    if (line.empty() && c == EOF) break;
    ++no;
    const char* p = line.c_str();
    char* e = nullptr;
    Line l;
    l.dom = int(std::strtol(p, &e, 10));
    l.t_ps = std::strtoull(e, &e, 10);
    const unsigned long n = std::strtoul(e, &e, 10);
    if (l.dom < 1 || l.dom > 3 || n > unsigned(rtl_stim::kInputs))
      throw std::runtime_error(path + ":" + std::to_string(no) + ": not a stimulus line");
    l.first = uint32_t(s.changes.size());
    l.count = uint32_t(n);
    for (unsigned long k = 0; k < n; ++k) {
      Change ch;
      ch.idx = int(std::strtol(e, &e, 10));
      ch.v = std::strtoull(e, &e, 16);
      if (ch.idx < 0 || ch.idx >= rtl_stim::kInputs)
        throw std::runtime_error(path + ":" + std::to_string(no) + ": input index out of range");
      s.changes.push_back(ch);
    }
    if (!s.lines.empty() && l.t_ps < s.lines.back().t_ps)
      throw std::runtime_error(path + ":" + std::to_string(no) + ": time goes backwards");
    s.lines.push_back(l);
    if (c == EOF) break;
  }
  std::fclose(f);
  return s;
}

// Drives the top line by line, with the timing of the Icarus testbench
// (tb/rtl/roce_datapath_replay_tb.sv): the inputs change halfway between
// the previous edge and this one, the outputs are sampled and the clocks
// rise at the edge's time. The top is a --cc model: each change of inputs
// and each edge is one eval() at its SystemC time; lines at the same time
// follow one another in order.
class Replayer : public sc_module {
 public:
  SC_HAS_PROCESS(Replayer);
  Replayer(sc_module_name n, const Stim& s, std::FILE* out) : sc_module(n), s_(s), out_(out) {
    top_ = bind_roce_datapath<Vroce_datapath>("replay.rtl", p_);
    SC_METHOD(step);
  }
  uint64_t lines_done() const { return i_; }

 private:
  void step() {
    while (i_ < s_.lines.size()) {
      const uint64_t now = sc_time_stamp().value();
      const Line& l = s_.lines[i_];
      if (apply_) {
        if (l.dom & 1) p_.core_clk.write(false);
        if (l.dom & 2) p_.cmac_clk.write(false);
        for (uint32_t k = 0; k < l.count; ++k) {
          const Change& c = s_.changes[l.first + k];
          rtl_stim::write_input(p_, c.idx, c.v);
        }
        top_.eval();
        apply_ = false;
        if (l.t_ps > now) {
          next_trigger(sc_time::from_value(l.t_ps - now));
          return;
        }
      }
      rtl_stim::write_beats(out_, i_, l.dom, p_);
      if (l.dom & 1) p_.core_clk.write(true);
      if (l.dom & 2) p_.cmac_clk.write(true);
      top_.eval();
      ++i_;
      apply_ = true;
      if (i_ < s_.lines.size()) {
        const uint64_t a = l.t_ps + (s_.lines[i_].t_ps - l.t_ps) / 2;
        if (a > now) {
          next_trigger(sc_time::from_value(a - now));
          return;
        }
      }
    }
    rtl_stim::write_end(out_, i_, p_);
    sc_stop();
  }

  const Stim& s_;
  std::FILE* out_;
  RoceDatapathPorts p_;
  RoceDatapathTop top_;
  size_t i_ = 0;
  bool apply_ = true;
};

}  // namespace

int rtl_replay_main(const std::string& stim_path, const std::string& out_path) {
  sc_set_time_resolution(1, SC_PS);
  Stim s;
  try {
    s = load(stim_path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ernic-sim rtl-replay: %s\n", e.what());
    return 2;
  }
  std::FILE* out = std::fopen(out_path.c_str(), "w");
  if (!out) {
    std::fprintf(stderr, "ernic-sim rtl-replay: cannot write %s: %s\n", out_path.c_str(), std::strerror(errno));
    return 2;
  }
  uint64_t core = 0, cmac = 0;
  for (const Line& l : s.lines) core += l.dom & 1, cmac += (l.dom >> 1) & 1;
  Replayer r("replay", s, out);
  const auto t0 = std::chrono::steady_clock::now();
  sc_start();
  const auto t1 = std::chrono::steady_clock::now();
  const bool ok = std::fclose(out) == 0;
  if (!ok) {
    std::fprintf(stderr, "ernic-sim rtl-replay: write error on %s\n", out_path.c_str());
    return 2;
  }
  std::printf("rtl-replay: %zu lines (%llu core, %llu CMAC edges) in %.3f s of wall time\n", s.lines.size(),
              (unsigned long long)core, (unsigned long long)cmac, std::chrono::duration<double>(t1 - t0).count());
  return 0;
}

}  // namespace ernic
