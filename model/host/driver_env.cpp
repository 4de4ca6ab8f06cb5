// model/host: DriverConfig <-> environment (driver_env.h).
#include "model/host/driver_env.h"

#include <cerrno>
#include <cstdlib>
#include <fmt/format.h>

namespace ernic::host {

std::vector<std::pair<std::string, std::string>> driver_env(const DriverConfig& c) {
  std::vector<std::pair<std::string, std::string>> e = {
      {"ERNIC_NODE", c.node},
      {"ERNIC_MAC", c.mac.str()},
      {"ERNIC_IP", c.ip.str()},
      {"ERNIC_NUM_QP", std::to_string(c.num_qp)},
      {"ERNIC_CORE_MHZ", fmt::format("{}", c.core_mhz)},
      {"ERNIC_LAYOUT", c.layout.name},
      {"ERNIC_SEED", std::to_string(c.seed)},
      {"ERNIC_ACK_MODE", std::to_string(c.ack_mode)},
      {"ERNIC_CM_TIMEOUT_US", std::to_string(c.cm_timeout_us)}};
  if (c.ip6) e.emplace_back("ERNIC_IP6", c.ip6->str());
  if (c.mr_ctx_table) e.emplace_back("ERNIC_MR_CTX_TABLE", std::to_string(*c.mr_ctx_table));
  return e;
}

namespace {

[[noreturn]] void bad(const char* var, const char* v, const char* want) {
  throw DriverError(fmt::format("{}='{}': not {}", var, v, want));
}

uint64_t number(const char* var, const char* v, uint64_t max) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(v, &end, 0);
  if (!*v || *end || errno || n > max || *v == '-') bad(var, v, fmt::format("a number up to {}", max).c_str());
  return n;
}

}  // namespace

DriverConfig driver_config_from_env(const std::function<const char*(const char*)>& get) {
  DriverConfig c;
  if (const char* v = get("ERNIC_NODE")) c.node = v;
  const char* mac = get("ERNIC_MAC");
  if (!mac) throw DriverError("ERNIC_MAC is not set (the program step sets it; by hand: `ernic-sim serve` prints it)");
  if (auto m = roce::MacAddr::parse(mac)) c.mac = *m;
  else bad("ERNIC_MAC", mac, "a MAC address");
  if (const char* v = get("ERNIC_IP")) {  // set and empty is malformed, not unset
    if (auto a = roce::Ipv4Addr::parse(v); a && *v) c.ip = *a;
    else bad("ERNIC_IP", v, "an IPv4 address");
  }
  if (const char* v = get("ERNIC_IP6")) {
    if (auto a = roce::Ipv6Addr::parse(v)) c.ip6 = *a;
    else bad("ERNIC_IP6", v, "an IPv6 address");
  }
  if (const char* v = get("ERNIC_LAYOUT")) {
    if (std::string(v) == regs::kLayout31.name) c.layout = regs::kLayout31;
    else if (std::string(v) == regs::kLayout4x.name) c.layout = regs::kLayout4x;
    else bad("ERNIC_LAYOUT", v, fmt::format("'{}' or '{}'", regs::kLayout31.name, regs::kLayout4x.name).c_str());
  }
  if (const char* v = get("ERNIC_NUM_QP")) {
    c.num_qp = uint32_t(number("ERNIC_NUM_QP", v, c.layout.max_qps));
    if (c.num_qp < 2) bad("ERNIC_NUM_QP", v, "at least 2 (QP1 and one RC QP)");
  }
  if (const char* v = get("ERNIC_CORE_MHZ")) {
    char* end = nullptr;
    const double f = std::strtod(v, &end);
    if (!*v || *end || !(f >= 1 && f < 100000)) bad("ERNIC_CORE_MHZ", v, "a clock in MHz (1..99999)");
    c.core_mhz = f;
  }
  if (const char* v = get("ERNIC_SEED")) c.seed = number("ERNIC_SEED", v, ~uint64_t(0));
  if (const char* v = get("ERNIC_ACK_MODE")) c.ack_mode = uint32_t(number("ERNIC_ACK_MODE", v, 2));
  if (const char* v = get("ERNIC_CM_TIMEOUT_US")) {
    c.cm_timeout_us = uint32_t(number("ERNIC_CM_TIMEOUT_US", v, 1000000000));
    if (!c.cm_timeout_us) bad("ERNIC_CM_TIMEOUT_US", v, "at least 1 us");
  }
  if (const char* v = get("ERNIC_MR_CTX_TABLE")) c.mr_ctx_table = number("ERNIC_MR_CTX_TABLE", v, ~uint64_t(0));
  return c;
}

}  // namespace ernic::host
