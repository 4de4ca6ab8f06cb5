// model/system: see report_peer.h.
#include "model/system/report_peer.h"

#include <fmt/format.h>

#include "model/roce/opcodes.h"

namespace ernic {

using json = nlohmann::json;

namespace {
json counts(const OpcodeCounts& c) {
  json by = json::object();
  for (const auto& [op, v] : c.by_opcode)
    by[op == 0x100 ? "NON_ROCE" : roce::opcode_name(uint8_t(op))] = {{"packets", v.packets}, {"bytes", v.bytes}};
  return {{"packets", c.packets}, {"bytes", c.bytes}, {"by_opcode", by}};
}
}  // namespace

json peer_node_json(const Node& n) {
  const peer::PeerNode& p = *n.peer;
  const peer::PeerStats& s = p.stats();
  json qps = json::array();
  for (const auto& [qpn, q] : p.qps()) {
    const peer::PeerQpStats& t = q.stats;
    qps.push_back({{"qpn", qpn}, {"remote_qpn", q.remote_qpn}, {"epsn", q.epsn}, {"msn", q.msn},
                   {"error", q.error}, {"error_why", q.error_why}, {"requests", t.requests},
                   {"duplicates", t.duplicates}, {"out_of_sequence", t.out_of_sequence},
                   {"dropped_in_error", t.dropped_in_error}, {"messages", t.messages}, {"acks", t.acks},
                   {"naks_psn", t.naks_psn}, {"naks_invalid", t.naks_invalid}, {"naks_access", t.naks_access},
                   {"read_responses", t.read_responses}, {"bytes_written", t.bytes_written},
                   {"bytes_read", t.bytes_read}, {"sends_received", t.sends_received},
                   {"requester",
                    {{"npsn", q.req.npsn}, {"packets", q.req.packets}, {"retries", q.req.retries},
                     {"timeouts", q.req.timeouts}, {"naks", q.req.naks}, {"rnr_naks", q.req.rnr_naks},
                     {"outstanding", q.req.sq.size()}, {"error", q.req.error}}}});
  }
  const peer::PeerConfig& c = p.config();
  json out = {{"tx", counts(n.cmac->tx_counts())},
          {"rx", counts(n.cmac->rx_counts())},
          {"peer",
           {{"latency_ns", c.latency_ps / 1000}, {"ack_every_packets", c.ack_every_packets},
            {"credits", c.credits_invalid ? "invalid" : "rq"}, {"frames_in", s.frames_in},
            {"frames_out", s.frames_out}, {"dropped_decode", s.dropped_decode}, {"dropped_icrc", s.dropped_icrc},
            {"dropped_address", s.dropped_address}, {"dropped_cm", s.dropped_cm},
            {"dropped_no_qp", s.dropped_no_qp}, {"dropped_answers", s.dropped_answers}, {"qps", qps}}}};
  if (s.replay_in || s.replay_out) {  // a replay step's frames (the key only then)
    out["peer"]["replay_in"] = s.replay_in;
    out["peer"]["replay_out"] = s.replay_out;
  }
  if (!n.replays.empty()) {  // the replay steps it played (steps_replay.cpp)
    json rs = json::array();
    for (const Node::ReplayRecord& r : n.replays)
      rs.push_back({{"at", r.at}, {"capture", r.capture}, {"side", r.side}, {"against", r.against},
                    {"code", r.code}, {"summary", r.summary}, {"lines", r.lines}});
    out["peer"]["replays"] = rs;
  }
  return out;
}

std::string peer_node_text(const std::string& name, const json& n) {
  const json& p = n["peer"];
  std::string o;
  for (const auto& q : p["qps"])
    o += fmt::format("node {} peer QP{}: {} request(s), {} duplicate(s), {} out of sequence, {} message(s), {} ACK(s), "
                     "NAKs {} PSN / {} invalid / {} access, {} READ response(s){}; requester {} packet(s), {} retr{}, {} "
                     "timeout(s)\n",
                     name, q["qpn"].get<uint32_t>(), q["requests"].get<uint64_t>(), q["duplicates"].get<uint64_t>(),
                     q["out_of_sequence"].get<uint64_t>(), q["messages"].get<uint64_t>(), q["acks"].get<uint64_t>(),
                     q["naks_psn"].get<uint64_t>(), q["naks_invalid"].get<uint64_t>(),
                     q["naks_access"].get<uint64_t>(), q["read_responses"].get<uint64_t>(),
                     q["error"].get<bool>() ? "; in Error: " + q["error_why"].get<std::string>() : std::string(),
                     q["requester"]["packets"].get<uint64_t>(), q["requester"]["retries"].get<uint64_t>(),
                     q["requester"]["retries"].get<uint64_t>() == 1 ? "y" : "ies",
                     q["requester"]["timeouts"].get<uint64_t>());
  if (p.contains("replays"))
    for (const auto& r : p["replays"])
      o += fmt::format("node {} replay of {} against {} ({} side): {}\n", name, r["capture"].get<std::string>(),
                       r["against"].get<std::string>(), r["side"].get<std::string>(),
                       r["code"].get<int>() == 2 ? "not replayed" : r["summary"].get<std::string>());
  return o;
}

}  // namespace ernic
