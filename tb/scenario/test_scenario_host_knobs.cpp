// Tests for the scenario keys that change how the built-in host driver works
// (issue 19's experiments cqe_batch, doorbell_line, cm_setup; scenarios/
// README.md): wait_completions' `batch` and `cq_head`, the node key
// `doorbell_layout`, and `connect` with `batch` (the names it makes, and the
// combinations it refuses). Defaults are checked too: without the keys a
// file parses to what it did before they existed.
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "model/scenario/scenario.h"

using namespace ernic;

namespace {

const char* kTop = R"(scenario: t
nodes:
  A: { mac: "02:00:00:00:00:0a", ip: 10.0.0.1, num_qp: 32 }
  B: { mac: "02:00:00:00:00:0b", ip: 10.0.0.2, num_qp: 32 }
steps:
  - init: [A, B]
  - register_mr: { node: A, name: a, length: 4096 }
  - register_mr: { node: B, name: b, length: 4096 }
)";

Scenario parse(const std::string& steps) { return parse_scenario(std::string(kTop) + steps, "t.yaml"); }

// The ScenarioError's key and message, or "" when the text parses.
std::string error_of(const std::string& text) {
  try {
    parse_scenario(text, "t.yaml");
  } catch (const ScenarioError& e) {
    return e.key() + ": " + e.message();
  }
  return "";
}

}  // namespace

TEST(ScenarioHostKnobs, WaitCompletionsBatchAndCqHead) {
  const Scenario s = parse(R"(  - connect: { name: c, client: A, server: B, server_mr: b }
  - wait_completions: { conn: c, node: A, count: 4 }
  - wait_completions: { conn: c, node: A, count: 4, batch: 2, cq_head: mmio }
  - wait_completions: { conn: c, node: A, batch: 65535, cq_head: mirror }
)");
  const auto& d = std::get<WaitCompletionsStep>(s.steps[4]);
  EXPECT_EQ(d.batch, 0u);  // every CQE found at each look: the driver's usual way
  EXPECT_FALSE(d.cq_head_mmio);
  const auto& m = std::get<WaitCompletionsStep>(s.steps[5]);
  EXPECT_EQ(m.batch, 2u);
  EXPECT_TRUE(m.cq_head_mmio);
  const auto& r = std::get<WaitCompletionsStep>(s.steps[6]);
  EXPECT_EQ(r.batch, 65535u);
  EXPECT_FALSE(r.cq_head_mmio);
  const std::string c = "  - connect: { name: c, client: A, server: B, server_mr: b }\n";
  EXPECT_NE(error_of(std::string(kTop) + c + "  - wait_completions: { conn: c, node: A, batch: 0 }\n")
                .find("out of range [1, 65535]"),
            std::string::npos);
  EXPECT_NE(error_of(std::string(kTop) + c + "  - wait_completions: { conn: c, node: A, cq_head: register }\n")
                .find("expected one of: mirror, mmio"),
            std::string::npos);
}

TEST(ScenarioHostKnobs, DoorbellLayout) {
  auto layout = [](const std::string& v) {
    const Scenario s = parse_scenario(
        "scenario: t\nnodes:\n  A: { mac: '02:00:00:00:00:0a', ip: 10.0.0.1" + v + " }\nsteps:\n  - init: [A]\n", "t.yaml");
    return s.nodes.at(0).doorbell_layout;
  };
  EXPECT_EQ(layout(""), 0u);  // qp_line
  EXPECT_EQ(layout(", doorbell_layout: qp_line"), 0u);
  EXPECT_EQ(layout(", doorbell_layout: shared_line"), 1u);
  EXPECT_EQ(layout(", doorbell_layout: spread"), 2u);
  EXPECT_NE(error_of("scenario: t\nnodes:\n  A: { mac: '02:00:00:00:00:0a', ip: 10.0.0.1, doorbell_layout: packed }\n"
                     "steps:\n  - init: [A]\n")
                .find("nodes.A.doorbell_layout: unknown value 'packed'"),
            std::string::npos);
  EXPECT_NE(error_of("scenario: t\nnodes:\n  A: { mac: '02:00:00:00:00:0a', ip: 10.0.0.1, host: program, "
                     "doorbell_layout: spread }\nsteps:\n  - wait: { us: 1 }\n")
                .find("host: program"),
            std::string::npos);
}

TEST(ScenarioHostKnobs, ConnectBatchMakesNumberedConnections) {
  const Scenario s = parse(R"(  - connect: { name: g, batch: 3, client: A, server: B, client_mr: a, server_mr: b }
  - connect: { name: c, client: A, server: B }
  - post: { conn: g3, node: A, wqes: [ { opcode: write, wr_id: 1, local_mr: a, length: 64 } ] }
  - wait_completions: { conn: g1, node: A }
)");
  const auto& g = std::get<ConnectStep>(s.steps[3]);
  EXPECT_EQ(g.name, "g");
  EXPECT_EQ(g.batch, 3u);
  EXPECT_TRUE(g.cm);
  EXPECT_EQ(std::get<ConnectStep>(s.steps[4]).batch, 0u);  // one connection, named c
  EXPECT_EQ(std::get<PostStep>(s.steps[5]).conn, "g3");
}

TEST(ScenarioHostKnobs, ConnectBatchRefusals) {
  auto err = [](const std::string& steps) { return error_of(std::string(kTop) + steps); };
  EXPECT_NE(err("  - connect: { name: g, batch: 2, client: A, server: B, cm: false }\n").find("needs cm: true"),
            std::string::npos);
  EXPECT_NE(err("  - connect: { name: g, batch: 2, client: A, server: B, client_qp: 2 }\n").find("choose the QPNs"),
            std::string::npos);
  EXPECT_NE(err("  - connect: { name: g, batch: 16, client: A, server: B }\n").find("out of range [1, 15]"),
            std::string::npos);
  // A name the batch makes that exists already.
  EXPECT_NE(err("  - connect: { name: g2, client: A, server: B }\n"
                "  - connect: { name: g, batch: 2, client: A, server: B }\n")
                .find("connection 'g2' already exists"),
            std::string::npos);
  // The batch counts against the QPs: 31 connections fit num_qp 32, one more does not.
  EXPECT_EQ(err("  - connect: { name: g, batch: 15, client: A, server: B }\n"
                "  - connect: { name: h, batch: 15, client: A, server: B }\n"
                "  - connect: { name: i, client: A, server: B }\n"),
            "");
  EXPECT_NE(err("  - connect: { name: g, batch: 15, client: A, server: B }\n"
                "  - connect: { name: h, batch: 15, client: A, server: B }\n"
                "  - connect: { name: i, batch: 2, client: A, server: B }\n")
                .find("no free QP for these connections"),
            std::string::npos);
}
