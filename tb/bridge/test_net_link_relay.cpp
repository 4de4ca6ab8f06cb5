// model/bridge/net_link: a star's switch process relays the nodes' SYNC
// extension (eth_proto.h; NetLink::errors_for, net_link_hub.cpp): a node's
// model error had (lax_ps, flags bit 2) reaches the other nodes still
// flagged as one, so their processes arm the run's stop from it
// (System::stop_after_error). The processes are forked children meeting
// over Unix sockets (tb/bridge/net_link_progress_harness.h).
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tb/bridge/net_link_progress_harness.h"

using namespace net_link_progress;
using namespace net_link_test;

// A star, both nodes written by hand: node 0 states a model error it
// has had at 1 us (its SYNC's lax_ps flagged, bit 2) while its next
// activity is 3 us. The switch's process relays it to node 1 as an error
// had (its lax_ps 1 us, flagged), not as a possible one: node 1's process
// arms its stop from it (NetLink::peer_error_ps, System::stop_after_error)
// and enters the stop instant at once. Unflagged, node 1 would be held 1 ps
// short of it until node 0's RunEnd came (the split stop, tb/data/split e7,
// passes either way: this pins the relay itself).
TEST(NetLinkProgress, TheSwitchRelaysANodesModelErrorAsAnErrorHad) {
  const std::string s0 = sock("laxerr0"), s1 = sock("laxerr1");
  Proc sw;
  sw.listen = {s0, s1}, sw.hub = true, sw.progress = 1, sw.watch_ends = true;
  RawAct erring = [](NetPeer& p, std::ostream& log) {
    NetSyncInfo info{3 * kUs, p.taken_in(), kDelay, std::nullopt, 1 * kUs};
    info.lax_error = true;
    try {
      p.promise(3 * kUs + kDelay, info);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      NetControl e;  // its run ends there (no after_error_us in this harness)
      e.kind = NetControl::RunEnd, e.time_ps = 1 * kUs, e.a = 1, e.b = 1;
      p.send_control(e);
      // Then it says nothing more of it: this harness's switch runs on to
      // kRunTo (a System's stops at once), held while a lax_ps binds it.
      info = NetSyncInfo{kFar, 0, kDelay, std::nullopt, std::nullopt};
      while (!p.peer_ended()) {  // what it took in acknowledged, as a node's process does
        info.acked = p.taken_in();
        p.promise(kFar, info);
        p.recv_one(kTo);
        while (p.pop_control()) {
        }
      }
      p.terminate(kFar);
    } catch (const NetPeerError& e) {
      log << "error " << e.what() << "\n";
    }
  };
  RawAct listening = [](NetPeer& p, std::ostream& log) {
    std::optional<NetSyncInfo> last;
    try {
      p.promise(kFar, NetSyncInfo{kFar, 0, kDelay, std::nullopt, std::nullopt});
      while (!p.peer_ended()) {
        p.recv_one(kTo);
        while (p.pop_control()) {
        }
        p.promise(kFar, NetSyncInfo{kFar, p.taken_in(), kDelay, std::nullopt, std::nullopt});  // what it took in
        const auto& i = p.peer_info();
        if (!i || !i->lax_ps || i == last) continue;
        last = i;
        log << "lax " << *i->lax_ps << (i->lax_error ? " had" : " possible") << "\n";
      }
      p.terminate(kFar);
    } catch (const NetPeerError& e) {
      log << "error " << e.what() << "\n";
    }
  };
  const auto r = run_all("laxerr", {proc(sw), raw(s0, false, erring), raw(s1, false, listening)});
  EXPECT_EQ(r[0].rc, 0) << r[0].err;
  EXPECT_EQ(lines(r[1].log + r[2].log, "error"), std::vector<std::string>{}) << r[1].log << r[2].log;
  const std::vector<std::string> heard = lines(r[2].log, "lax ");
  ASSERT_FALSE(heard.empty()) << r[2].log;
  for (const std::string& l : heard) EXPECT_EQ(l, "lax 1000000 had") << r[2].log;
  EXPECT_LT(r[0].wall_s, 10.0);
}
