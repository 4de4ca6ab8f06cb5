// model/host: the driver's memory regions: registration (the MR table,
// and the host-table copy for the MR cache CAM), the guards around every
// MR, lookup and deregistration.
#include "model/host/driver.h"

#include <fmt/format.h>

namespace ernic::host {

namespace R = regs;
namespace FLD = regs::fld;

// -------------------------------------------------------------------- MRs

const Mr& Driver::register_mr(const std::string& name, uint64_t length, uint32_t access, uint32_t pd) {
  if (!initialised_) fail("register_mr before init");
  if (mrs_.size() >= 256) fail("MR table full (256 entries)");
  if (length == 0 || length >> 48) fail(fmt::format("MR '{}': length {} not in 1..2^48-1", name, length));
  auto mr = std::make_unique<Mr>();
  mr->name = name;
  mr->pd = pd & 0xFFFFFF;
  // [guard 64 B][MR, page aligned][guard 64 B]: the leading guard ends at
  // the page boundary the MR starts on (at least its 64 bytes first, then
  // the MR and the trailing guard from the next page boundary).
  alloc(kMrGuardBytes, 1);
  mr->pa = alloc(length + kMrGuardBytes, 4096);
  mr->guard_before = mr->pa - kMrGuardBytes;
  mr->guard_after = mr->pa + length;
  std::vector<uint8_t> guard(kMrGuardBytes);
  for (uint64_t k = 0; k < kMrGuardBytes; ++k) guard[k] = mr_guard_byte(k);
  for (uint64_t g : {mr->guard_before, mr->guard_after}) mem_write(g, guard);
  mr->va = 0x00007F0000000000ull + mr->pa;  // a user-space-like VA, distinct from the PA
  mr->length = length;
  mr->access = access;
  return program_mr(std::move(mr));
}

const Mr& Driver::register_mr_at(const std::string& name, uint64_t pa, uint64_t va, uint64_t length, uint32_t access,
                                 uint32_t pd) {
  if (!initialised_) fail("register_mr before init");
  if (mrs_.size() >= 256) fail("MR table full (256 entries)");
  if (length == 0 || length >> 48) fail(fmt::format("MR '{}': length {} not in 1..2^48-1", name, length));
  if (!bus_.mem_valid(pa, length))
    fail(fmt::format("MR '{}': [0x{:x}, +{}) is not host memory ({} bytes)", name, pa, length, bus_.mem_size()));
  if (va + length < va) fail(fmt::format("MR '{}': VA 0x{:x} + {} wraps", name, va, length));
  auto mr = std::make_unique<Mr>();
  mr->name = name;
  mr->pd = pd & 0xFFFFFF;
  mr->pa = pa;
  mr->va = va;
  mr->length = length;
  mr->access = access;
  return program_mr(std::move(mr));
}

const Mr& Driver::program_mr(std::unique_ptr<Mr> mr) {
  mr->index = uint32_t(mrs_.size());
  mr->rkey = R::make_rkey(mr->index, uint32_t(rng_()));  // XIB: index << 8 | random key byte
  const uint32_t i = mr->index;
  const uint64_t length = mr->length;
  write_mr_ctx(*mr);  // host table first: the register writes invalidate the NIC's cached copy
  wr(mreg(i, R::m::PDPDNUM), mr->pd);
  wr(mreg(i, R::m::VIRTADDRLSB), uint32_t(mr->va));
  wr(mreg(i, R::m::VIRTADDRMSB), uint32_t(mr->va >> 32));
  wr(mreg(i, R::m::BUFBASEADDRLSB), uint32_t(mr->pa));
  wr(mreg(i, R::m::BUFBASEADDRMSB), uint32_t(mr->pa >> 32));
  wr(mreg(i, R::m::BUFRKEY), FLD::BUFRKEY_KEY.set(0, R::rkey_key(mr->rkey)));
  wr(mreg(i, R::m::WRRDBUFLEN), uint32_t(length));
  wr(mreg(i, R::m::ACCESSDESC), FLD::ACCESSDESC_LEN_HI.set(FLD::ACCESSDESC_ACCESS.set(0, mr->access), uint32_t(length >> 32)));
  mrs_.push_back(std::move(mr));
  return *mrs_.back();
}

void Driver::write_mr_ctx(const Mr& mr) {
  if (!cfg_.mr_ctx_table) return;
  const uint64_t a = *cfg_.mr_ctx_table + uint64_t(mr.index) * 32;
  const uint32_t w[8] = {mr.pd, uint32_t(mr.va), uint32_t(mr.va >> 32), uint32_t(mr.pa), uint32_t(mr.pa >> 32),
                         mr.rkey & 0xFF, uint32_t(mr.length),
                         // deregistered: 0xF alone, as the register write
                         mr.access == 0xF ? 0xFu : (mr.access & 0xF) | uint32_t(mr.length >> 32) << 16};
  for (uint32_t k = 0; k < 8; ++k) mem_write32(a + 4 * k, w[k]);  // host stores (A-HOST-1)
}

std::vector<std::string> Driver::check_mr_guards() const {
  std::vector<std::string> out;
  for (const auto& m : mrs_)
    for (int which = 0; which < 2 && (m->guard_before || m->guard_after); ++which) {  // register_mr_at: no guards
      const uint64_t g = which ? m->guard_after : m->guard_before;
      const std::vector<uint8_t> p = mem_read(g, kMrGuardBytes);
      for (uint64_t k = 0; k < kMrGuardBytes; ++k)
        if (p[k] != mr_guard_byte(k)) {
          uint64_t e = k;
          while (e + 1 < kMrGuardBytes && p[e + 1] != mr_guard_byte(e + 1)) ++e;
          out.push_back(fmt::format("node {}: MR '{}' guard {} the MR corrupted at offset {}{} (address 0x{:x}: 0x{:02x}, "
                                    "expected 0x{:02x})",
                                    cfg_.node, m->name, which ? "after" : "before", k,
                                    e > k ? fmt::format("..{}", e) : std::string(), g + k, p[k], mr_guard_byte(k)));
          k = e;
        }
    }
  return out;
}

const Mr* Driver::find_mr(const std::string& name) const {
  for (const auto& m : mrs_)
    if (m->name == name) return m.get();
  return nullptr;
}

void Driver::deregister_mr(const std::string& name) {
  for (auto it = mrs_.begin(); it != mrs_.end(); ++it) {
    if ((*it)->name != name || (*it)->access == 0xF) continue;
    (*it)->access = 0xF;
    write_mr_ctx(**it);
    wr(mreg((*it)->index, R::m::ACCESSDESC), 0xF);  // XIB: invalid access type
    (*it)->name = "";  // the name may be registered again (a new index)
    return;
  }
  fail("deregister_mr: no MR named '" + name + "'");
}

}  // namespace ernic::host
