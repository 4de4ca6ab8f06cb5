// model/trace: a readable timeline of a transaction log (txlog.h), e.g.
//
// # timeline of run.log  filter: qp=2
//      12.345678 us  A  core#2469  QP2  frame  tx A->B #5  RC_WRITE_MIDDLE psn=0xedc9a1 len=4154 dqp=3
//      13.000000 us  A  core#2600  QP2  cqe    idx=0 wr_id=1 opcode=WRITE(0) ok raw=0x00000001
// # 2 / 57 records shown
//
// Columns: time (us, ps resolution), node ("-" for none), clock (domain#cycle;
// only the domain for records without a node: faults on the wire, scenario
// steps), QP ("-" for none), kind, then the kind's fields. Column widths fit
// the records shown.
//
// Filters (all given ones must match):
//  - nodes: the record's node is one of them; a fault (no node) matches when
//    either end of its link "X->Y" is one of them;
//  - kinds: the record's kind is one of them;
//  - qp: the record has a "qp" equal to it (records without one, e.g. intr,
//    fault, step, are shown only when no QP filter is set);
//  - from_us / to_us: inclusive bounds on t_ps / 1e6.
// The whole file is read and checked before anything is printed: on an error
// nothing goes to `out`.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace ernic {

struct TimelineFilter {
  std::vector<std::string> nodes, kinds;
  std::optional<uint32_t> qp;
  std::optional<double> from_us, to_us;
};

// 0 on success; 2 if the file cannot be read or a line is not a valid record
// (the message on `err` names the path and the 1-based line number).
int print_timeline(const std::string& path, const TimelineFilter& f, std::ostream& out,
                   std::ostream& err);

}  // namespace ernic
