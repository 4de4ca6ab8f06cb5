// rtl: Verilator's fatal-error hook (vl_fatal, compiled with VL_USER_FATAL
// into ernic_rtl: rtl/verilator_fatal.cpp). Verilator 5.006's own vl_fatal
// flushes every trace file before aborting; when the error comes from the
// VCD writer itself (a write that fails: disk full, RLIMIT_FSIZE) it is
// called under the writer's lock, the flush takes the lock again and the
// run hangs forever. The hook records a trace write error and returns (the
// writer then closes the file and writes no more); the run ends normally
// and the caller reports the error (exit 2, `ernic-sim run --vcd`). Every
// other Verilator fatal error behaves as Verilator's own.
#pragma once
#include <string>

namespace ernic::rtl {

// The first write error of a Verilated trace file in this process ("" if none).
std::string trace_write_error();

}  // namespace ernic::rtl
