// model/bridge: SimBricks' Ethernet protocol (lib/simbricks/network/
// proto.h, on the base layer of simbricks_base.h, protocol version 1;
// implemented from its description, no code taken): what two link ends
// exchange when a node runs in its own process (issue 16). Plain C++.
//
// The protocol is symmetric. Besides the base SYNC and TERMINATE, one
// message: PACKET 0x40, an Ethernet frame (without preamble and FCS):
//   len u16 @0 (bytes of the frame), port u8 @2 (the sender's port, for
//   multi-port peers such as a switch), timestamp @48 (ps: when the frame's
//   first byte reaches the receiver), own_type @63, the frame from @64.
// The upper-layer intro is empty (SimbricksProtoNetIntro has no fields):
// the base intro's upper-layer offset is its own size.
// Two extensions in bytes SimBricks leaves as padding (an unmodified
// SimBricks peer neither writes nor reads them; ours write zeros there
// otherwise):
//   - PACKET byte 3 bit 0: the frame's FCS is bad (its transmitter aborted
//     it); the receiving MAC counts and drops it as a real one would.
//   - SYNC bytes 0-3 "ERN1", then next_ps u64 @8, acked u64 @16 and
//     lookahead_ps u64 @24: the sender's next local activity (ps; ~0 =
//     none) as of this SYNC, not counting input it has not received, how
//     many PACKETs of the receiver's it had taken in, and the delay of its
//     line to the receiver (its PACKETs are stamped at least that far after
//     it acts; the two directions of a line may differ; 0 = not given: the
//     receiver cannot use next_ps). Two ERNIC processes use them to jump
//     over quiet time together (net_link.h); without them the SYNC's stamp
//     alone is the promise, as SimBricks has it. In a split run also
//     ctl_ps u64 @32: the earliest instant the sender may send a CONTROL
//     the receiver must take at that instant (a step's end, a fact, a read)
//     or end its run at once, not counting what the receiver's CONTROLs
//     make it do (~0: none; every step the sender runs waits on the
//     receiver), and lax_ps u64 @40: the earliest instant of a model error
//     or wire monitor event of the sender's (a monitor event it has not
//     judged yet included), whose effect on the run comes
//     limits.after_error_us later at the soonest (net_link.h); flags u8 @4
//     say which are given (bit 0 ctl_ps, bit 1 lax_ps) and bit 2 that
//     lax_ps is a model error the sender has had (its run ends slack after
//     it, whatever comes), not one it may still have; next_ps stands for
//     one not given.
// And one message type of ours, sent only to a peer that is an ERNIC
// process of the same split run (never to a SimBricks component, whose
// decoder refuses unknown types):
//   - CONTROL 0x7E: a split run's scenario control, with zero lookahead
//     (model/system/split.h): len u16 @0 (the data's bytes, where a PACKET
//     has its len: SimBricks' shared-memory queues take an upper-layer
//     message's length from there), "ERNC" @40-43, kind u8 @4 (1 a step's end,
//     2 a fact a step produced, 3 a memory read request, 4 its reply, 5 the
//     sender's run is over (b: its exit code; data: why it failed, when a
//     peer of its failed it, as text), before its TERMINATE, 6 an
//     event for a wire monitor in another process: model/system/split.h,
//     7 a watchdog progress request, 8 its reply, 9 a StepQuery, 10 a
//     StepUnderway: below), node u8 @5 (a read's
//     node, a watch's monitor's node, by scenario index; a progress
//     request's: that node's process, or 0xFF the process that gets it), time_ps u64 @8 (the
//     sender's simulated time: the step's end, the read's instant), id u64
//     @16 (the step's sequence number; a read's number), a u64 @24 and b u64
//     @32 (a read's address and length; a progress reply's a: the latest
//     progress in ps before the request's instant), timestamp @48 = the sender's
//     latest stamp (a CONTROL makes no promise of its own), data after the
//     header (a fact's bytes, a reply's bytes).
// SimBricks' own components use 1536 + 64-byte queue entries; ERNIC's
// largest frame is 4,170 bytes (PMTU 4096 with headers), so an ERNIC
// listener announces entries of at least kNetEntryBytes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/bridge/simbricks_base.h"

namespace ernic::bridge {

constexpr uint8_t kNetTypePacket = 0x40;
constexpr uint8_t kNetTypeControl = 0x7E;                // ours, between ERNIC processes (above)
constexpr size_t kNetMaxFrame = 0xFFFF;                  // len is u16 on the wire
constexpr size_t kNetEntryBytes = kHeaderBytes + 4352;   // a 4,170-byte frame fits, rounded to 256

// A SYNC's extension (see above).
struct NetSyncInfo {
  uint64_t next_ps = ~uint64_t(0);
  uint64_t acked = 0;
  uint64_t lookahead_ps = 0;
  std::optional<uint64_t> ctl_ps, lax_ps;  // not given: next_ps stands for them
  bool lax_error = false;                  // lax_ps is a model error had (flags bit 2)
  bool operator==(const NetSyncInfo& o) const {
    return next_ps == o.next_ps && acked == o.acked && lookahead_ps == o.lookahead_ps && ctl_ps == o.ctl_ps &&
           lax_ps == o.lax_ps && lax_error == o.lax_error;
  }
  uint64_t ctl() const { return ctl_ps.value_or(next_ps); }
  uint64_t lax() const { return lax_ps.value_or(next_ps); }
};

// A CONTROL message's fields (above).
struct NetControl {
  enum Kind : uint8_t {
    StepEnd = 1,
    Fact = 2,
    ReadRequest = 3,
    ReadReply = 4,
    RunEnd = 5,           // b = the exit code, data = why; a = how it stopped (RunEndHow)
    Watch = 6,
    ProgressRequest = 7,  // the watchdog's: the answering process's latest progress
    ProgressReply = 8,    // a = that progress (ps); b = 1: refused, data the reason
    // id = a step's (lane << 32 | its number, System::split_tag): is its
    // part in another process still under way at this instant? Asked by a
    // process whose lane behind that step may go on at this instant only
    // if the step does not end at it (issue 16: one process lets the lane
    // ahead go first when its step ends now). Every process hears it (a
    // star's switch process relays it to every node's and answers too).
    StepQuery = 9,
    // The answer, stamped at the query's instant once this process's
    // instant has settled, only from a process whose part of that step is
    // still under way then (its StepEnd is not stamped at that instant);
    // a process whose part has ended says nothing more (its StepEnd is in).
    // Relayed by a star's switch process to every other process.
    StepUnderway = 10,
  };
  // A progress request's node kNodeHere: the process that gets it answers
  // (a star's switch process too); a node's index: that node's process
  // (relayed by the switch's).
  static constexpr uint8_t kNodeHere = 0xFF;
  // A RunEnd's a: how its run stopped. Early stops end the other processes
  // at that instant even where the run has failed already, as one process
  // stops there.
  enum RunEndHow : uint8_t {
    kEndedItself = 0,   // its steps ended, or its time limit (every process stops there by itself)
    kStopAfterError = 1,  // limits.after_error_us after a model error
    kStopWatchdog = 2,    // its watchdog, or a livelock
  };
  Kind kind = StepEnd;
  uint8_t node = 0;
  uint64_t time_ps = 0, id = 0, a = 0, b = 0;
  std::vector<uint8_t> data;
};

struct NetMsg {
  enum Kind : uint8_t {
    Sync = kTypeSync,
    Terminate = kTypeTerminate,
    Packet = kNetTypePacket,
    Control = kNetTypeControl
  };
  Kind kind = Sync;
  uint64_t timestamp_ps = 0;
  uint8_t port = 0;            // PACKET
  bool bad_fcs = false;        // PACKET (extension)
  std::vector<uint8_t> frame;  // PACKET
  std::optional<NetSyncInfo> sync_info;  // SYNC (extension)
  NetControl control;                    // CONTROL
};

// Throws std::invalid_argument for a frame longer than kNetMaxFrame, a
// frame on a SYNC / TERMINATE / CONTROL, a CONTROL of an unknown kind.
std::vector<uint8_t> encode_net(const NetMsg& m);
// One whole message: nullopt with `why` for a short header, the ownership
// bit, an unknown type, bytes after a SYNC / TERMINATE header, a PACKET
// whose len is not the bytes it carries, a CONTROL without its magic or of
// an unknown kind. Never reads outside [p, p+n).
std::optional<NetMsg> decode_net(const uint8_t* p, size_t n, std::string* why);

// The intros: the base intro with protocol id NET (1) and no upper-layer
// bytes. A listener announces its entry size in both directions (on a
// stream: the largest message it accepts).
std::vector<uint8_t> encode_net_listener_intro(uint64_t entry_bytes, uint64_t flags = 0);
std::vector<uint8_t> encode_net_connecter_intro(uint64_t flags = 0);
std::optional<ListenerIntro> decode_net_listener_intro(const uint8_t* p, size_t n, std::string* why);
std::optional<ConnecterIntro> decode_net_connecter_intro(const uint8_t* p, size_t n, std::string* why);

}  // namespace ernic::bridge
