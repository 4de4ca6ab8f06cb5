// model/sim: the settled-point service (settle.h).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "model/sim/settle.h"

#include <algorithm>
#include <map>
#include <systemc>
#include <tuple>
#include <utility>
#include <vector>

namespace ernic::settle {
namespace {

class Service {
 public:
  void add(Client* c) { clients_.push_back(c); }
  void remove(Client* c) { clients_.erase(std::remove(clients_.begin(), clients_.end(), c), clients_.end()); }

  void poke() {
    if (!check_) start();
    check_->notify(sc_core::SC_ZERO_TIME);
  }

  void wait_settled(Stage s, uint64_t rank) {
    sc_core::sc_event released;
    const Key k{uint8_t(s), rank, seq_++};
    waiters_.emplace(k, &released);
    struct Leave {  // a thread killed while it waits leaves no dangling entry
      Service& v;
      Key k;
      ~Leave() { v.waiters_.erase(k); }
    } leave{*this, k};
    poke();
    sc_core::wait(released);
  }

 private:
  using Key = std::tuple<uint8_t, uint64_t, uint64_t>;  // (stage, rank, arrival)

  // The method is spawned at the first use, during the simulation: the
  // service outlives every kernel phase a test binary goes through.
  void start() {
    check_ = new sc_core::sc_event();
    sc_core::sc_spawn_options o;
    o.spawn_method();
    o.dont_initialize();
    o.set_sensitivity(check_);
    sc_core::sc_spawn([this] { on_check(); }, sc_core::sc_gen_unique_name("settle"), &o);
  }

  bool anything_left() const {
    if (!waiters_.empty()) return true;
    return std::any_of(clients_.begin(), clients_.end(), [](const Client* c) { return c->wants(); });
  }

  void on_check() {
    if (sc_core::sc_pending_activity_at_current_time()) {  // not settled yet: look again a delta cycle later
      check_->notify(sc_core::SC_ZERO_TIME);
      return;
    }
    bool acted = std::any_of(clients_.begin(), clients_.end(), [](Client* c) { return c->grant(); });
    if (!acted && !waiters_.empty()) {
      auto it = waiters_.begin();
      it->second->notify();  // it runs in this delta cycle; its entry goes when it returns
      waiters_.erase(it);
      acted = true;
    }
    if (acted && anything_left()) check_->notify(sc_core::SC_ZERO_TIME);
  }

  std::vector<Client*> clients_;
  std::map<Key, sc_core::sc_event*> waiters_;
  uint64_t seq_ = 0;
  sc_core::sc_event* check_ = nullptr;
};

Service& service() {
  static Service* s = new Service;  // never destroyed: clients may go after static destruction begins
  return *s;
}

}  // namespace

void add(Client* c) { service().add(c); }
void remove(Client* c) { service().remove(c); }
void poke() { service().poke(); }
void wait_settled(Stage s, uint64_t rank) { service().wait_settled(s, rank); }

}  // namespace ernic::settle
