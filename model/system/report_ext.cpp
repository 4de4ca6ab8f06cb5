// model/system: the named extensions in the run's report (report_ext.h).
#include "model/system/report_ext.h"

#include <fmt/format.h>

#include "model/system/assumptions.h"

namespace ernic {

using nlohmann::json;

void add_extension_json(json& j, const Node& n) {
  if (const ShadowDb* d = n.ernic->shadow_db()) {
    const ShadowDb::Counters& c = d->counters();
    j["shadow_doorbell"] = {{"poll_ns", d->config().poll_ns},
                            {"table_base", d->config().table_base},
                            {"bytes_per_poll", d->bytes_per_poll()},
                            {"polls", c.polls},
                            {"doorbells", c.doorbells},
                            {"read_requests", d->read_requests()},
                            {"read_completions", d->read_completions()},
                            {"bytes_read", d->bytes_read()}};
  }
  if (const QpCtxCache* q = n.ernic->qp_ctx_cache()) {
    const QpCtxCache::Counters& c = q->counters();
    json by = json::object();
    for (size_t u = 0; u < QpCtxCache::kUses; ++u)
      by[QpCtxCache::use_name(QpCtxCache::Use(u))] = {{"lookups", c.use_lookups[u]}, {"misses", c.use_misses[u]}};
    j["qp_ctx_cache"] = {{"entries", q->config().entries},
                         {"context_bytes", q->config().context_bytes},
                         {"table_base", q->config().table_base},
                         {"lookups", c.lookups},
                         {"hits", c.hits},
                         {"misses", c.misses},
                         {"merged", c.merged},
                         {"hit_rate", c.lookups ? double(c.hits) / double(c.lookups) : 0.0},
                         {"installs", c.installs},
                         {"fetches", c.fetches},
                         {"writebacks", c.writebacks},
                         {"bytes_read", q->bytes_read()},
                         {"bytes_written", q->bytes_written()},
                         {"read_requests", q->read_requests()},
                         {"read_completions", q->read_completions()},
                         {"write_tlps", q->write_tlps()},
                         {"by_use", by}};
  }
}

std::string extension_text(const std::string& name, const json& n) {
  std::string o;
  auto u = [](const json& o2, const char* k) { return o2[k].get<uint64_t>(); };
  if (n.contains("shadow_doorbell")) {
    const json& d = n["shadow_doorbell"];
    o += fmt::format("node {} shadow_doorbell (extension), poll every {} ns: {} polls of {} bytes ({} read requests, "
                     "{} completions), {} doorbells taken\n",
                     name, u(d, "poll_ns"), u(d, "polls"), u(d, "bytes_per_poll"), u(d, "read_requests"),
                     u(d, "read_completions"), u(d, "doorbells"));
  }
  if (n.contains("qp_ctx_cache")) {
    const json& q = n["qp_ctx_cache"];
    o += fmt::format("node {} qp_ctx_cache (extension), {} entries of {} bytes: {} lookups, {} hits, {} misses, {} "
                     "merged, hit rate {:.1f}%, {} fetches, {} write-backs\n",
                     name, u(q, "entries"), u(q, "context_bytes"), u(q, "lookups"), u(q, "hits"), u(q, "misses"),
                     u(q, "merged"), 100.0 * q["hit_rate"].get<double>(), u(q, "fetches"), u(q, "writebacks"));
  }
  return o;
}

void add_extension_assumptions(json& as, const System& sys) {
  bool shadow = false, qpc = false;
  for (const auto& n : sys.nodes) {
    if (!n->ernic) continue;  // kind: peer
    shadow = shadow || n->ernic->shadow_db();
    qpc = qpc || n->ernic->qp_ctx_cache();
  }
  for (const Assumption& a : extension_assumptions()) {
    const std::string id = a.id;
    if ((shadow && id.rfind("X-SHADOW-DB-", 0) == 0) || (qpc && id.rfind("X-QPC-CACHE-", 0) == 0))
      as.push_back({{"id", a.id}, {"text", a.text}, {"reason", a.reason}});
  }
}

}  // namespace ernic
