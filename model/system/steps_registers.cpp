// model/system: the register-level steps: debug_preset, reg_write,
// reg_read, reg_expect, reg_poll; register addresses and names of a
// scenario's register references, timed reads through a node's host port.
#include "model/system/system.h"

#include <fmt/format.h>

#include <algorithm>

namespace ernic {

using namespace sc_core;

namespace {
// Register writes after which the scoreboard cannot know where data lands:
// the SQ doorbell (WQEs posted by hand), where the NIC's queues and buffers
// are and where a QP sends to. The MR table is checked by block.
bool places_memory(const std::string& reg, bool* qp_level) {
  static const char* const kQp[] = {"SQPIi", "SQBAi", "SQBAMSBi", "RQBAi", "RQBAMSBi", "QDEPTHi", "QPCONFi",
                                    "DESTQPCONFi", "IPDESADDR1i", "CQBAi", "CQBAMSBi", "CQDBADDi", "CQDBADDMSBi",
                                    "RQWPTRDBADDi", "RQWPTRDBADDMSBi"};
  static const char* const kGlobal[] = {"ERRBUFBA", "ERRBUFBAMSB", "ERRBUFSZ", "IPKTERRQBA", "IPKTERRQBAMSB",
                                        "IPKTERRQSZ", "DATBUFBA", "DATBUFBAMSB", "DATBUFSZ", "RESPERRPKTBA",
                                        "RESPERRPKTBAMSB", "RESPERRSZ"};
  for (const char* r : kQp)
    if (reg == r) return *qp_level = true;
  *qp_level = false;
  for (const char* r : kGlobal)
    if (reg == r) return true;
  return regs::find_register(reg)->block == regs::Block::Mr;
}
}  // namespace

uint32_t System::reg_addr(const RegRef& r) const {
  const regs::RegInfo* ri = regs::find_register(r.reg);
  const Node* n = nullptr;
  for (auto& x : nodes)
    if (x->cfg.name == r.node) n = x.get();
  const regs::Layout& L = n->ernic->config().layout;
  switch (ri->block) {
    case regs::Block::Global: return L.global(ri->offset);
    case regs::Block::Qp: return L.qp(*r.qp, ri->offset);
    case regs::Block::Mr: return L.mr(*r.mr, ri->offset);
  }
  return 0;
}

std::string System::reg_name(const RegRef& r) const {
  std::string o = r.node + " " + r.reg;
  if (r.qp) o += fmt::format("[{}]", *r.qp);
  if (r.mr) o += fmt::format("[{}]", *r.mr);
  if (!r.field.empty()) o += "." + r.field;
  return o;
}

// Timed AXI4-Lite read of the register (through the node's host port);
// returns the field's value when a field is named.
uint32_t System::reg_read_value(const RegRef& r, uint32_t* raw) {
  const uint32_t v = node(r.node)->axil->read(reg_addr(r));
  if (raw) *raw = v;
  if (r.field.empty()) return v;
  return regs::find_field(r.reg, r.field, reg_layout(scenario.layout))->get(v);
}

// debug_preset: a register set behind the model (no bus transaction).
void System::handle(const DebugPresetStep& s, const SourceLoc&, Group*) {
  node(s.ref.node)->ernic->backdoor_write(reg_addr(s.ref), s.value);
}

// reg_write: a timed register write (a field by read-modify-write, W1C
// fields alone); the scoreboard stands aside where it can no longer tell
// where data lands.
void System::handle(const RegWriteStep& s, const SourceLoc& loc, Group*) {
  Node* n = node(s.ref.node);
  bool qp_level = false;
  if (places_memory(s.ref.reg, &qp_level)) {
    const std::string why = fmt::format("register-level write of {} at {} (the scoreboard cannot see where data "
                                        "lands, e.g. WQEs posted by hand)", reg_name(s.ref), loc.str());
    // A QP reaches its peers' memory too; their CQEs still answer their own
    // posts (matched also where this step does not run: a split run's
    // other processes).
    for (auto& o : nodes)
      if (o.get() == n || qp_level) scoreboard.stand_aside(o->cfg.name, why, /*cqes_too=*/o.get() == n);
  }
  const uint32_t addr = reg_addr(s.ref);
  if (s.ref.field.empty()) {
    n->axil->write(addr, s.value);
  } else {
    const regs::FieldInfo* f = regs::find_field(s.ref.reg, s.ref.field, reg_layout(scenario.layout));
    // W1C registers: write only the field's bits (a read-modify-write would
    // clear every other pending bit).
    const bool w1c = regs::find_register(s.ref.reg)->access == regs::Access::W1C;
    const uint32_t old = w1c ? 0 : n->axil->read(addr);
    n->axil->write(addr, f->set(old, s.value));
  }
}

// reg_read: a timed register read, logged.
void System::handle(const RegReadStep& s, const SourceLoc&, Group*) {
  uint32_t raw = 0;
  const uint32_t v = reg_read_value(s.ref, &raw);
  ctx.event(reg_name(s.ref), fmt::format("read 0x{:08x} ({})", v, v));
}

// reg_expect
void System::handle(const RegExpectStep& s, const SourceLoc& loc, Group*) {
  uint32_t raw = 0;
  const uint32_t v = reg_read_value(s.ref, &raw);
  const bool eq = (v & s.mask) == (s.value & s.mask);
  if (eq == s.negate)
    fail(loc, fmt::format("{} is 0x{:x} (register 0x{:08x}); expected {}0x{:x}{}", reg_name(s.ref), v, raw,
                          s.negate ? "anything but " : "", s.value & s.mask,
                          s.mask == 0xFFFFFFFF ? "" : fmt::format(" under mask 0x{:x}", s.mask)));
}

// reg_poll: reads until the value matches or the timeout passes.
void System::handle(const RegPollStep& s, const SourceLoc& loc, Group*) {
  const uint64_t deadline = sc_time_stamp().value() + s.timeout_us * 1000000ull;
  ++bounded_;
  uint32_t v = 0, raw = 0;
  for (;;) {
    v = reg_read_value(s.ref, &raw);
    if ((v & s.mask) == (s.value & s.mask)) break;
    if (sc_time_stamp().value() >= deadline) break;
    wait(sc_time(double(std::max<uint64_t>(s.interval_ns, 1)), SC_NS));
  }
  --bounded_;
  if ((v & s.mask) != (s.value & s.mask)) {
    snapshot_qps();
    fail(loc, fmt::format("{} did not become 0x{:x} within {} us (last read 0x{:x}, register 0x{:08x})",
                          reg_name(s.ref), s.value & s.mask, s.timeout_us, v, raw));
  }
}

}  // namespace ernic
