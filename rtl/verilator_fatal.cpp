// rtl: vl_fatal for the Verilated models (see rtl/verilator_fatal.h).
#include "rtl/verilator_fatal.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "verilated.h"

namespace {
std::mutex g_mu;
std::string g_trace_error;
// The message Verilator 5.006's VCD writer passes when write() fails
// (verilated_vcd_c.cpp, VerilatedVcd::bufferFlush); the writer closes the
// file itself once vl_fatal returns.
constexpr const char kVcdWriteError[] = "VerilatedVcd::bufferFlush: ";
}  // namespace

namespace ernic::rtl {
std::string trace_write_error() {
  std::lock_guard<std::mutex> g(g_mu);
  return g_trace_error;
}
}  // namespace ernic::rtl

void vl_fatal(const char* filename, int linenum, const char* hier, const char* msg) {
  (void)hier;
  Verilated::threadContextp()->gotError(true);
  if (msg && std::strncmp(msg, kVcdWriteError, sizeof kVcdWriteError - 1) == 0) {
    std::lock_guard<std::mutex> g(g_mu);
    if (g_trace_error.empty()) g_trace_error = msg + (sizeof kVcdWriteError - 1);
    return;
  }
  // As Verilator's own (verilated.cpp): report, flush the traces, abort.
  Verilated::threadContextp()->gotFinish(true);
  if (filename && filename[0])
    std::fprintf(stderr, "%%Error: %s:%d: %s\n", filename, linenum, msg ? msg : "");
  else
    std::fprintf(stderr, "%%Error: %s\n", msg ? msg : "");
  Verilated::runFlushCallbacks();
  std::fprintf(stderr, "Aborting...\n");
  Verilated::runExitCallbacks();
  std::abort();
}
