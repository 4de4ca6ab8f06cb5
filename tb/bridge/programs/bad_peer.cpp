// tb/bridge/programs/bad_peer.cpp: a host that speaks the bridge's
// protocol wrongly, one way per mode (argv[1]), written against the raw
// messages (model/bridge/pcie_proto.h) instead of the C library.
//   bad-bar          an MMIO read of BAR 1 (the device has BAR0 only)
//   bad-offset       an MMIO read beyond BAR0
//   unaligned        an MMIO read at an offset not a multiple of 4
//   bad-size         a 2-byte register write
//   unknown-type     a message of type 0x7E
//   truncated        a 10-byte frame
//   wrong-direction  a D2H READ sent to the device
//   stray-completion a READCOMP that answers nothing
//   wrong-version    a connecter intro of protocol version 2
//   stop-reading     20,000 pipelined register reads, then sleeps without
//                    reading an answer (the device's sends find no room)
//   sync-flags       a SYNC with flag bit 2 (the extension knows bits 0, 1)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "model/bridge/channel.h"
#include "model/bridge/pcie_proto.h"

using namespace ernic::bridge;

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const char* addr = std::getenv("ERNIC_BRIDGE");
  if (!addr) return 2;
  auto ch = Channel::connect(Endpoint::parse(addr), std::chrono::milliseconds(10000));
  ch->recv(std::chrono::milliseconds(10000));  // the device intro
  std::vector<uint8_t> intro = encode_host_intro();
  if (mode == "wrong-version") intro[0] = 2;
  ch->send(intro);
  Msg m;
  m.type = MsgType::H2DRead;
  m.req_id = 1;
  m.len = 4;
  if (mode == "bad-bar") m.bar = 1;
  if (mode == "bad-offset") m.offset = 0x10000000;
  if (mode == "unaligned") m.offset = 0x20002;
  if (mode == "bad-size") {
    m.type = MsgType::H2DWritePosted;
    m.offset = 0x20000;
    m.data = {1, 2};
  }
  if (mode == "wrong-direction") m.type = MsgType::D2HRead;
  if (mode == "stray-completion") {
    m = Msg{};
    m.type = MsgType::H2DReadComp;
    m.req_id = 77;
    m.data = {0, 0, 0, 0};
  }
  if (mode == "sync-flags") {
    m = Msg{};
    m.type = MsgType::Sync;
    m.flags = 4;
    m.timestamp_ps = 1000000;
  }
  std::vector<uint8_t> f = encode(m);
  if (mode == "unknown-type") f[63] = 0x7E;
  if (mode == "truncated") f.resize(10);
  if (mode == "stop-reading") {
    for (int i = 0; i < 20000; ++i) {
      m.req_id = uint64_t(i + 1);
      ch->send(encode(m));
    }
    std::this_thread::sleep_for(std::chrono::seconds(120));
    return 0;
  }
  if (mode != "wrong-version") ch->send(f);
  try {  // the device ends the session; wait for it to go
    for (;;) ch->recv(std::chrono::milliseconds(10000));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bad_peer: %s\n", e.what());
  }
  return 0;
}
