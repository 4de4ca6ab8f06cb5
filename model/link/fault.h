// model/link: the wire fault injector (one per link direction). Plain C++,
// no SystemC: the SystemC Wire calls on_frame() when a frame enters and
// schedules what comes back (the injector knows no time; a delay fault only
// says how much later its frame arrives).
//
// Frames are Ethernet header .. ICRC, without FCS (as on the AXI4-Stream and
// in the pcap taps). Header fields are located with the protocol library
// (model/roce): Ethernet 14 B, IPv4 20 B (IHL 5) or IPv6 40 B, UDP 8 B,
// BTH 12 B, then the opcode's extension headers, payload, pad, ICRC.
//
// Rules
// - Added rules apply to frames entering from then on, in the order added;
//   of the rules that select a frame, only the first (in order) is applied:
//   one fault a frame.
// - Selection: every given criterion must hold. opcodes (any of the list),
//   psn and dest_qp are read from the BTH; a frame without a readable BTH
//   (not UDP port 4791, or too short to hold the BTH) never matches a rule
//   that names any of them. A rule that names none of them matches every
//   frame, RoCE or not.
// - nth: the rule counts the frames that meet its opcode/psn/dest_qp
//   criteria since it was added (every such frame counts, even one that an
//   earlier rule takes), and selects only the n-th of them.
// - probability: drawn only for a frame that meets the criteria above (and
//   nth), can be faulted by the rule (see corrupt) and has not been taken by
//   an earlier rule, so the random stream is a function of the traffic and
//   of the rules: u = (rng() >> 11) * 2^-53 from a std::mt19937_64 seeded
//   with the injector's seed (no std::*_distribution: their output differs
//   between standard libraries); the rule selects the frame when u < p.
// - count: applications before the rule retires (0 = unlimited). It only
//   decrements when the rule is applied.
// - While the link is down, every frame entering is lost (recorded as kind
//   drop, rule "link", detail "link down"); rules are neither evaluated nor
//   counted, and the rng is not drawn. Frame indices still advance.
//
// Faults
// - drop: nothing leaves.
// - duplicate: the frame leaves twice, the second copy with duplicate=true.
// - reorder: the frame (input index k) is held until the input frame
//   k + reorder_after has entered, and leaves right after that frame's own
//   output (released=true). Every later frame counts, whatever happens to
//   it (dropped, held, lost to a down link). A held frame whose release
//   falls while the link is down is lost (recorded as drop/"link", detail
//   "link down while held"). Frames still held at the end of the run are
//   reported by held_indices() and count as lost.
// - corrupt: flips bit corrupt_bit (0..7) of one byte: corrupt_byte (an
//   offset from the first byte of the Ethernet header), or the first byte
//   of the named field corrupt_field. Fields (offsets for IPv4 / IPv6):
//     "bth.opcode"  BTH byte 0                      (42 / 62)
//     "bth.dest_qp" BTH byte 7, the QPN's LSB       (49 / 69)
//     "bth.psn"     BTH byte 11, the PSN's LSB      (53 / 73)
//     "ip.ttl"      IPv4 TTL (14+8) / IPv6 hop limit (14+7)
//     "ip.checksum" IPv4 header checksum, first byte (14+10); IPv6 has none
//     "icrc"        first ICRC byte (the ICRC's LSB)
//     "payload"     first payload byte after the extension headers
//     "bth.flags"   BTH byte 1: SE [7], M [6], PadCnt [5:4], TVer [3:0] (43 / 63)
//     "aeth.syndrome" the AETH's syndrome byte (frames whose opcode has an AETH)
//     "eth.dst"     the destination MAC's last byte (5); "eth.src" the source MAC's (11)
//     "ip.version"  IPv4 version/IHL byte (14), IPv6 version/traffic class (14)
//     "ip.flags"    IPv4 flags / fragment offset MSB (14+6)
//     "ip.src", "ip.dst"  the last byte of the IP source / destination address
//     "udp.length"  the UDP length's LSB
//   bth.* need a readable BTH; icrc, payload and aeth.* need a frame that
//   roce::decode accepts (and a non-empty payload); ip.* need an IPv4/IPv6
//   header. When the byte is beyond the frame or the field is absent, the
//   rule does not apply to that frame: it does not select it (a later rule
//   may), draws no random number and is not counted. No checksum or ICRC is
//   recomputed: the receiver sees the damage (the ICRC covers the BTH and
//   payload; TTL/hop limit, TOS and the IP checksum are masked out of it).
//   corrupt_value: the byte becomes this value instead (corrupt_bit unused).
//   repair: afterwards the IPv4 header checksum and the ICRC are computed
//   again over the frame as it now is (its IP length), as a sender that
//   built the frame that way would: the damage passes those checks and
//   reaches the receiver's later ones (MAC and IP addresses, TVer, QP,
//   opcode sequence, lengths, AETH). An IP header that is no longer IPv4
//   or IPv6 by its version nibble is not repaired.
// - delay: the frame leaves with extra_delay_ps = delay_ps; later frames are
//   not held back (the Wire may let them overtake it).
//
// Records: each application (and each frame lost to a down link) appends
// one FaultApplied, in the order they happen, with the BTH opcode and PSN
// of the frame as it entered (-1 when it has no readable BTH).
//
// add_rule() rejects an inconsistent rule with std::invalid_argument: nth
// 0, probability NaN or outside [0, 1], corrupt without exactly one of
// corrupt_byte / corrupt_field, an unknown field name, corrupt_bit > 7,
// reorder_after 0.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace ernic {

using FrameBytes = std::vector<uint8_t>;   // Ethernet header .. ICRC, no FCS

// ecn: what a congested switch does: the IP ECN field becomes CE (11) and
// the IPv4 header checksum is recomputed (the ICRC masks the field).
enum class FaultKind { drop, duplicate, reorder, corrupt, delay, ecn };

struct FaultRule {
  std::string name;
  // selection: every given criterion must hold
  std::vector<uint8_t> opcodes;      // empty = any; frames without a BTH never match a rule with opcodes/psn/dest_qp
  std::optional<uint32_t> psn, dest_qp;
  std::optional<uint32_t> nth;       // only the n-th (1-based) frame matching the criteria above
  std::optional<double> probability; // each candidate independently: u < p (see above)
  FaultKind kind = FaultKind::drop;
  uint32_t count = 1;                // applications before the rule retires; 0 = unlimited
  uint32_t reorder_after = 1;        // reorder: released right after this many later frames
  uint64_t delay_ps = 0;             // delay: extra latency of that frame
  std::optional<uint32_t> corrupt_byte;  // corrupt: flip bit corrupt_bit of this byte, or
  std::string corrupt_field;         //   of the first byte of a named field (see above)
  uint32_t corrupt_bit = 0;
  std::optional<uint8_t> corrupt_value;  // corrupt: set the byte to this value instead of flipping a bit
  bool repair = false;               // corrupt: recompute the IPv4 header checksum and the ICRC afterwards
};

struct FaultApplied {                // one record per application, for the transaction log
  std::string rule;
  FaultKind kind;
  uint64_t frame_index;              // 0-based index of the frame in this direction's input stream
  int opcode = -1;
  int64_t psn = -1;
  std::string detail;                // "byte 46 bit 3", "held until after frame 7", "+500000 ps", "link down"
};

struct WireOut {
  FrameBytes bytes;
  uint64_t extra_delay_ps = 0;
  uint64_t input_index;
  bool duplicate = false;
  bool released = false;
};

class FaultInjector {
 public:
  explicit FaultInjector(uint64_t seed);

  // Rules apply from now on, in the order added; the first rule that
  // selects a frame is applied (one fault a frame). Throws
  // std::invalid_argument for an inconsistent rule (nothing is added).
  void add_rule(FaultRule r);
  void set_link_up(bool up);
  bool link_up() const { return link_up_; }

  // A frame enters the wire. Returns what leaves, in order: nothing (drop,
  // held for reorder, link down), the frame (possibly corrupted, possibly
  // with extra delay), the frame twice (duplicate), then any held frames
  // released by this one (released=true), oldest first. `applied` may be
  // null.
  std::vector<WireOut> on_frame(FrameBytes f, std::vector<FaultApplied>* applied);

  // Input indices of the frames still held (reorder), oldest first: lost if
  // the run ends now.
  std::vector<uint64_t> held_indices() const;

  static const char* kind_name(FaultKind k);

  // --- additions -----------------------------------------------------------
  // "drop", "duplicate", ... -> kind; nullopt for an unknown name.
  static std::optional<FaultKind> kind_from_name(const std::string& name);
  // Empty when the rule is acceptable to add_rule, otherwise why not.
  static std::string check_rule(const FaultRule& r);
  // True for the corrupt_field names listed above.
  static bool is_field_name(const std::string& field);
  // Offset of the byte a corrupt rule with this field would flip in this
  // frame; nullopt when the frame lacks the field.
  static std::optional<size_t> field_offset(const uint8_t* data, size_t len, const std::string& field);
  static std::optional<size_t> field_offset(const FrameBytes& f, const std::string& field) {
    return field_offset(f.data(), f.size(), field);
  }
  // Frames that have entered so far (the index the next one gets).
  uint64_t frames_in() const { return next_index_; }
  // Rules added, and how many of them can still apply.
  size_t rule_count() const { return rules_.size(); }
  size_t active_rule_count() const;
  // Applications of the rule added i-th (0-based).
  uint32_t applications(size_t rule_index) const { return rules_.at(rule_index).applied; }

 private:
  struct RuleState {
    FaultRule r;
    uint64_t matched = 0;    // frames meeting opcode/psn/dest_qp since added (for nth)
    uint32_t applied = 0;    // applications so far
    bool retired = false;    // count used up, or its nth frame has gone by
  };
  struct Held {
    uint64_t index;          // input index of the held frame
    uint64_t release_after;  // input index of the frame it leaves behind
    FrameBytes bytes;
    int opcode;
    int64_t psn;
  };

  double draw();

  std::mt19937_64 rng_;
  bool link_up_ = true;
  uint64_t next_index_ = 0;
  std::vector<RuleState> rules_;
  std::vector<Held> held_;   // in input order
};

}  // namespace ernic
