// model/system: the host-memory steps: fill, mem_write, mem_expect,
// check_memory.
#include "model/system/system.h"

#include <fmt/format.h>

#include <cstring>
#include <utility>

namespace ernic {

using namespace sc_core;

// fill: a pattern into an MR range (host stores, told to the scoreboard).
void System::handle(const FillStep& s, const SourceLoc& loc, Group*) {
  Node* n = node(s.node);
  const host::Mr* mr = n->find_mr(s.mr);
  if (!mr) return fail(loc, "no MR '" + s.mr + "' on " + s.node);
  fill_pattern(n->mem->data(mr->pa + s.offset, s.length), s.length, s.pattern, s.seed, s.value, s.offset);
  scoreboard.host_write(s.node, mr->pa + s.offset, n->mem->data(mr->pa + s.offset, s.length), s.length,
                        "fill at " + loc.str());
}

// mem_write
void System::handle(const MemWriteStep& s, const SourceLoc& loc, Group*) {
  Node* n = node(s.node);
  if (!n->mem->in_range(s.addr, s.bytes.size())) return fail(loc, "mem_write outside host memory");
  n->mem->write(s.addr, s.bytes);
  if (!s.stray) scoreboard.host_write(s.node, s.addr, s.bytes.data(), s.bytes.size(), "mem_write at " + loc.str());
}

// mem_expect
void System::handle(const MemExpectStep& s, const SourceLoc& loc, Group*) {
  Node* n = node(s.node);
  if (!n->mem->in_range(s.addr, s.bytes.size())) return fail(loc, "mem_expect outside host memory");
  const uint8_t* got = std::as_const(*n->mem).data(s.addr, s.bytes.size());  // a read: leaves the pages unwritten
  for (size_t i = 0; i < s.bytes.size(); ++i)
    if (got[i] != s.bytes[i])
      return fail(loc, fmt::format("{} memory at 0x{:x}: 0x{:02x}, expected 0x{:02x}", s.node, s.addr + i,
                                   got[i], s.bytes[i]));
}

// check_memory: an MR range against a pattern or another MR range.
void System::handle(const CheckMemoryStep& s, const SourceLoc& loc, Group*) {
  Node* n = node(s.node);
  const host::Mr* mr = n->find_mr(s.mr);
  if (!mr) return fail(loc, "no MR '" + s.mr + "' on " + s.node);
  const uint8_t* got = std::as_const(*n->mem).data(mr->pa + s.offset, s.length);
  std::vector<uint8_t> want(s.length);
  if (s.equals) {
    const host::Mr* om = find_mr_any(s.equals->node, s.equals->mr);  // a split run: the other process's too
    if (!om) return fail(loc, "no MR '" + s.equals->mr + "' on " + s.equals->node);
    if (s.equals->offset > om->length || s.length > om->length - s.equals->offset)
      return fail(loc, "check_memory: the range to compare with lies outside MR '" + s.equals->mr + "'");
    want = mem_bytes(s.equals->node, om->pa + s.equals->offset, s.length);
  } else {
    fill_pattern(want.data(), s.length, s.pattern->pattern, s.pattern->seed, s.pattern->value, s.offset);
  }
  uint64_t diffs = 0, first = 0;
  for (uint64_t i = 0; i < s.length; ++i)
    if (got[i] != want[i] && diffs++ == 0) first = i;
  if (diffs)
    fail(loc, fmt::format("memory of {} MR '{}' differs in {} of {} bytes; first at offset {}: 0x{:02x}, expected 0x{:02x}",
                          s.node, s.mr, diffs, s.length, s.offset + first, got[first], want[first]));
}

}  // namespace ernic
