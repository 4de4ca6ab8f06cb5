// tools/progress: one progress line on a terminal for the commands that run
// many child processes (`experiment`, `bench`, `regress`): runs done /
// total, elapsed wall time and an ETA (elapsed / done x what is left),
// redrawn in place with a carriage return. Nothing at all is written when
// stdout is not a terminal (isatty), so logs, pipes and CI output stay
// byte-for-byte what they were. clear() erases the line before the command
// prints something of its own; the next update() draws it again.
#pragma once
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace ernic {

class Progress {
 public:
  Progress(std::string what, size_t total, bool enabled = isatty(STDOUT_FILENO) != 0)
      : what_(std::move(what)), total_(total), on_(enabled), t0_(std::chrono::steady_clock::now()) {}
  ~Progress() { clear(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool enabled() const { return on_; }
  void set_total(size_t total) { total_ = total; }

  // Draws "what: done/total runs  elapsed 0:12  ETA 0:30".
  // Redrawn when `done` changed or half a second passed since the last draw.
  void update(size_t done) {
    const bool changed = done != done_ || !drawn_;
    done_ = done;
    if (!on_) return;
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    if (!changed && el - last_ < 0.5) return;
    last_ = el;
    std::string eta = "--:--";
    if (done > 0 && done <= total_) eta = clock(el / double(done) * double(total_ - done));
    std::fflush(stdout);
    std::fprintf(stdout, "\r\033[K%s: %zu/%zu runs  elapsed %s  ETA %s", what_.c_str(), done, total_, clock(el).c_str(),
                 eta.c_str());
    std::fflush(stdout);
    drawn_ = true;
  }
  void redraw() { update(done_); }
  // Erases the line (before other output).
  void clear() {
    if (!on_ || !drawn_) return;
    std::fprintf(stdout, "\r\033[K");
    std::fflush(stdout);
    drawn_ = false;
  }

 private:
  static std::string clock(double s) {
    const long t = long(s + 0.5);
    char b[32];
    if (t >= 3600)
      std::snprintf(b, sizeof b, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
      std::snprintf(b, sizeof b, "%ld:%02ld", t / 60, t % 60);
    return b;
  }
  std::string what_;
  size_t total_ = 0, done_ = 0;
  bool on_ = false, drawn_ = false;
  double last_ = -1;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace ernic
