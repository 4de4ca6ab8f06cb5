// model/scenario: the host-memory steps (scenarios/README.md 5.3):
// mem_write and mem_expect at physical addresses.
#include "model/scenario/parse.h"

namespace ernic::scenario_parse {

void Parser::read_mem_access(const Field& f, std::string& node, uint64_t& addr, std::vector<uint8_t>& bytes,
                             bool* stray) {
  MapReader r(f, stray ? std::vector<std::string>{"node", "addr", "bytes", "u32", "u64", "stray"}
                       : std::vector<std::string>{"node", "addr", "bytes", "u32", "u64"});
  if (stray)
    if (auto x = r.take("stray")) *stray = read_bool(*x);
  const Field nf = r.req("node");
  node = ref_node(nf, false);
  if (program_node(node))
    nf.fail("node '" + node + "' has host: program: its memory is the program's, the scenario cannot reach it");
  const Field af = r.req("addr");
  addr = read_uint(af, 0, kMaxU64);
  static const std::pair<const char*, unsigned> kForms[] = {{"bytes", 1}, {"u32", 4}, {"u64", 8}};
  std::optional<Field> data;
  unsigned size = 0;
  for (const auto& form : kForms)
    if (auto x = r.take(form.first)) {
      if (data) later(*data, *x).fail_key("give exactly one of bytes, u32, u64");
      data = x;
      size = form.second;
    }
  if (!data) r.self().fail("needs the data: one of 'bytes', 'u32' or 'u64' (a list of values)");
  const std::vector<Field> items = read_list(*data);
  if (items.empty()) data->fail("at least one value is required");
  const uint64_t max = size == 8 ? kMaxU64 : (uint64_t(1) << (8 * size)) - 1;
  for (const Field& it : items) {
    const uint64_t v = read_uint(it, 0, max);
    for (unsigned b = 0; b < size; ++b) bytes.push_back(uint8_t(v >> (8 * b)));
  }
  r.finish();
  const uint32_t mib = sc_.nodes[node_index_[node]].memory_mib;
  const uint64_t mem = uint64_t(mib) << 20;
  if (addr >= mem || bytes.size() > mem - addr)
    af.fail(fmt::format("addr {:#x} + {} bytes is outside node {}'s memory ({:#x} bytes, memory_mib {})", addr,
                        bytes.size(), node, mem, mib));
}

void Parser::step_mem_write(const Field& f, const SourceLoc& loc) {
  MemWriteStep s;
  s.loc = loc;
  read_mem_access(f, s.node, s.addr, s.bytes, &s.stray);
  emit(std::move(s));
}

void Parser::step_mem_expect(const Field& f, const SourceLoc& loc) {
  MemExpectStep s;
  s.loc = loc;
  read_mem_access(f, s.node, s.addr, s.bytes);
  emit(std::move(s));
}

}  // namespace ernic::scenario_parse
