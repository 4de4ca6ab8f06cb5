// model/scenario: the node key `extensions` (extensions.h): the ERNIC
// model's named extensions that are not PG332, with their ranges.
#include "model/scenario/parse_extensions.h"

namespace ernic::scenario_parse {

void read_node_extensions(const Field& f, NodeConfig& n) {
  MapReader r(f, {"shadow_doorbell", "qp_ctx_cache"});
  if (auto s = r.take("shadow_doorbell")) {
    // The driver writes the shadow copies: the built-in driver's, below
    // the first MiB a program's memory does not reach.
    if (n.host_program)
      s->fail("shadow_doorbell needs the built-in driver (it writes the doorbell copies); this node has host: program");
    MapReader sr(*s, {"poll_ns"});
    NodeExtensions::ShadowDoorbell d;
    d.poll_ns = sr.u64("poll_ns", d.poll_ns, 10, 10000000);
    sr.finish();
    n.ext.shadow_doorbell = d;
  }
  if (auto c = r.take("qp_ctx_cache")) {
    if (n.host_program)
      c->fail("qp_ctx_cache needs the built-in driver's memory (its context table lies below a program's memory); "
              "this node has host: program");
    MapReader cr(*c, {"entries", "context_bytes"});
    NodeExtensions::QpCtxCache q;
    q.entries = uint32_t(cr.u64("entries", q.entries, 1, 256));
    if (auto b = cr.take("context_bytes")) {
      const uint64_t v = read_uint(*b, 64, 1024);
      if (v % 64) b->fail(fmt::format("context_bytes must be a multiple of 64 (a 512-bit beat), got {}", v));
      q.context_bytes = uint32_t(v);
    }
    cr.finish();
    n.ext.qp_ctx_cache = q;
  }
  r.finish();
}

}  // namespace ernic::scenario_parse
