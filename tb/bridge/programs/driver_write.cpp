// A program that runs the simulator's own driver (model/host/driver.h)
// over the bridge (BridgeBus): the same calls, in the same order, that the
// steps of tb/bridge/equivalence/builtin.yaml make the built-in host do.
// Node A: init, an MR "src" of 64 KiB filled with the incrementing
// pattern, an RC QP established out of band towards B (ERNIC_PEER_*), then
// at ERNIC_POST_AT_US one 64 KiB RDMA WRITE into B's MR, and its CQE.
// tb/bridge/equivalence/check.py compares the two runs' outputs.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "model/bridge/client/bridge_bus.h"
#include "model/bridge/client/ernic_bridge.h"
#include "model/host/driver.h"
#include "model/host/driver_env.h"
#include "model/regs/wqe.h"

using namespace ernic;

namespace {

uint64_t env_u64(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) throw std::runtime_error(std::string(name) + " is not set");
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 0);
  if (*end) throw std::runtime_error(std::string(name) + "='" + v + "' is not a number");
  return n;
}

roce::Ipv4Addr env_ip(const char* name) {
  const char* v = std::getenv(name);
  auto a = v ? roce::Ipv4Addr::parse(v) : std::nullopt;
  if (!a) throw std::runtime_error(std::string(name) + " is not an IPv4 address");
  return *a;
}

}  // namespace

int main() {
  ernic_bridge* br = ernic_open(nullptr);
  if (!br) {
    std::fprintf(stderr, "driver_write: %s\n", ernic_open_error());
    return 1;
  }
  int rc = 0;
  try {
    bridge::BridgeBus bus(br);
    host::Driver d(bus, host::driver_config_from_env([](const char* k) { return std::getenv(k); }));
    bus.attach(&d);
    d.init();                                                          // steps: init: [A]
    const uint64_t len = 65536;
    const host::Mr& src = d.register_mr("src", len, regs::u(regs::val::ACCESSDESC_ACCESS::READ_WRITE), 1);  // register_mr
    std::vector<uint8_t> pattern(len);                                 // fill: incrementing
    for (uint64_t i = 0; i < len; ++i) pattern[i] = uint8_t(i & 0xFF);
    bus.mem_write(src.pa, pattern.data(), len);
    const roce::Ipv4Addr peer = env_ip("ERNIC_PEER_IP");               // connect: { client: A, server: B, cm: false }
    auto mac = roce::MacAddr::parse(std::getenv("ERNIC_PEER_MAC") ? std::getenv("ERNIC_PEER_MAC") : "");
    if (!mac) throw std::runtime_error("ERNIC_PEER_MAC is not a MAC address");
    d.add_neighbour(peer, *mac);
    host::QpParams p;
    p.pmtu = uint32_t(env_u64("ERNIC_PMTU"));
    p.sq_depth = uint32_t(env_u64("ERNIC_SQ_DEPTH"));
    p.rq_depth = uint32_t(env_u64("ERNIC_RQ_DEPTH"));
    p.rq_elem_bytes = uint32_t(env_u64("ERNIC_RQ_ELEMENT_BYTES"));
    p.qpn = uint32_t(env_u64("ERNIC_QPN"));
    p.start_psn = uint32_t(env_u64("ERNIC_PSN"));
    host::Connection& c = d.prepare(p);
    const roce::cm::MrInfo remote{env_u64("ERNIC_PEER_VA"), uint32_t(env_u64("ERNIC_PEER_RKEY")),
                                  env_u64("ERNIC_PEER_LEN")};
    d.establish(c, uint32_t(env_u64("ERNIC_PEER_QPN")), uint32_t(env_u64("ERNIC_PEER_PSN")), peer, remote);
    const uint64_t at_ps = env_u64("ERNIC_POST_AT_US") * 1000000;     // wait: { until_us: N }
    if (bus.now_ps() > at_ps) throw std::runtime_error("ERNIC_POST_AT_US has already passed");
    bus.sleep_until(at_ps, host::HostBus::kNone);
    host::Wqe w;                                                       // post: one WRITE, wr_id 1
    w.wr_id = 1;
    w.opcode = uint8_t(pg332::WqeOpcode::write);
    w.laddr = src.pa;
    w.length = uint32_t(len);
    w.remote_va = remote.va;
    w.rkey = remote.rkey;
    d.post(c, {w}, false);
    const auto cqes = d.poll(c, 1, 1000ull * 1000000);                // wait_completions: 1, timeout 1000 us
    if (cqes.size() != 1 || cqes[0].wr_id != 1 || cqes[0].error ||
        cqes[0].opcode != uint8_t(pg332::WqeOpcode::write)) {
      std::fprintf(stderr, "driver_write: expected one good WRITE completion with wr_id 1, got %zu%s\n", cqes.size(),
                   cqes.empty() ? "" : (cqes[0].error ? " (error)" : " (other)"));
      rc = 1;
    } else {
      std::printf("driver_write: WRITE of %llu bytes completed at %llu ps (wr_id %u)\n", (unsigned long long)len,
                  (unsigned long long)cqes[0].time_ps, cqes[0].wr_id);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "driver_write: %s\n", e.what());
    rc = 1;
  }
  if (ernic_close(br) != 0 && rc == 0) rc = 1;
  return rc;
}
