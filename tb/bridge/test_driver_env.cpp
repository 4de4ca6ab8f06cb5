// The driver's configuration through the environment (model/host/
// driver_env.h): what the simulator writes for a program host, the client
// reads back to the same DriverConfig; a malformed value names its variable.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "model/host/driver_env.h"

using namespace ernic;
using namespace ernic::host;

namespace {

struct Env {
  std::map<std::string, std::string> v;
  const char* operator()(const char* k) const {
    auto it = v.find(k);
    return it == v.end() ? nullptr : it->second.c_str();
  }
};

std::string error_of(const Env& e) {
  try {
    driver_config_from_env(std::cref(e));
  } catch (const DriverError& x) {
    return x.what();
  }
  return "";
}

}  // namespace

TEST(DriverEnv, RoundTripKeepsEveryField) {
  DriverConfig c;
  c.node = "A";
  c.mac = *roce::MacAddr::parse("02:00:00:00:00:0a");
  c.ip = *roce::Ipv4Addr::parse("10.0.0.1");
  c.ip6 = *roce::Ipv6Addr::parse("fd00::1");
  c.num_qp = 300;
  c.core_mhz = 250;
  c.layout = regs::kLayout4x;
  c.seed = 0xFEEDFACECAFEBEEFull;
  c.ack_mode = 2;
  c.cm_timeout_us = 123;
  c.mr_ctx_table = 0x40000000;
  Env e;
  for (auto& [k, v] : driver_env(c)) e.v[k] = v;
  EXPECT_EQ(e.v.at("ERNIC_MAC"), "02:00:00:00:00:0a");
  EXPECT_EQ(e.v.at("ERNIC_LAYOUT"), "4.x");
  EXPECT_EQ(e.v.at("ERNIC_SEED"), "18369614221190020847");
  const DriverConfig r = driver_config_from_env(std::cref(e));
  EXPECT_EQ(r.node, "A");
  EXPECT_EQ(r.mac, c.mac);
  EXPECT_EQ(r.ip.v, 0x0A000001u);
  ASSERT_TRUE(r.ip6.has_value());
  EXPECT_EQ(*r.ip6, *c.ip6);
  EXPECT_EQ(r.num_qp, 300u);
  EXPECT_DOUBLE_EQ(r.core_mhz, 250.0);
  EXPECT_STREQ(r.layout.name, "4.x");
  EXPECT_EQ(r.layout.gcsr_base, regs::kLayout4x.gcsr_base);
  EXPECT_EQ(r.seed, 0xFEEDFACECAFEBEEFull);
  EXPECT_EQ(r.ack_mode, 2u);
  EXPECT_EQ(r.cm_timeout_us, 123u);
  ASSERT_TRUE(r.mr_ctx_table.has_value());
  EXPECT_EQ(*r.mr_ctx_table, 0x40000000u);
}

TEST(DriverEnv, DefaultsWhereUnsetAndMacRequired) {
  Env e;
  EXPECT_NE(error_of(e).find("ERNIC_MAC is not set"), std::string::npos);
  e.v["ERNIC_MAC"] = "02:00:00:00:00:0b";
  const DriverConfig r = driver_config_from_env(std::cref(e));
  EXPECT_STREQ(r.layout.name, "3.1");
  EXPECT_EQ(r.num_qp, DriverConfig{}.num_qp);
  EXPECT_FALSE(r.ip6.has_value());
  EXPECT_FALSE(r.mr_ctx_table.has_value());
}

TEST(DriverEnv, MalformedValuesNameTheVariable) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"ERNIC_MAC", "02:00:00:00:00"},  {"ERNIC_IP", "10.0.0.300"}, {"ERNIC_IP6", "fd00::g"},
      {"ERNIC_LAYOUT", "5.0"},          {"ERNIC_NUM_QP", "257"},     {"ERNIC_NUM_QP", "-1"},
      {"ERNIC_CORE_MHZ", "0"},          {"ERNIC_SEED", "12x"},       {"ERNIC_ACK_MODE", "3"},
      {"ERNIC_CM_TIMEOUT_US", ""},      {"ERNIC_MR_CTX_TABLE", "0x"}, {"ERNIC_NUM_QP", "0"},
      {"ERNIC_IP", ""},                 {"ERNIC_CORE_MHZ", "1e-300"}, {"ERNIC_CM_TIMEOUT_US", "0"}};
  for (const auto& [k, v] : bad) {
    Env e;
    e.v["ERNIC_MAC"] = "02:00:00:00:00:0b";
    e.v[k] = v;
    const std::string err = error_of(e);
    EXPECT_EQ(err.rfind(k + "='" + v + "'", 0), 0u) << k << "=" << v << ": " << err;
  }
}
