// model/monitor: an independent, passive RoCEv2 wire monitor.
//
// Written apart from the ERNIC model: it shares only model/roce (decode,
// opcode table, PSN arithmetic) and knows nothing of the NIC's internals.
// It is fed every frame a node transmits (the CMAC tx tap of each
// direction of a link) and checks the RC protocol as IBTA states it
// (../shared/spec/ernic-pg332.md section 9):
//
//   decode           a frame to UDP port 4791 that does not decode
//   psn_sequence     request PSN = previous + 1 (+ ceil(L/PMTU) after a
//                    READ), or a go-back-N retransmission to a PSN that the
//                    requester has not yet seen acknowledged (after a NAK or
//                    an implied NAK: from what was unacknowledged when that
//                    arrived, for one pass; an ACK that overtakes the
//                    go-back does not make the packets already committed
//                    to it illegal)
//   retransmit       a retransmitted PSN carries the opcode first sent there
//                    (a READ may be re-issued from inside its PSN range)
//   opcode_sequence  FIRST, MIDDLE*, LAST or ONLY; SEND and WRITE packets of
//                    different messages do not interleave
//   ackreq           AckReq set on every LAST/ONLY and READ_REQUEST
//   padcnt           pad only on LAST/ONLY packets, payload + pad a multiple of 4
//   pmtu             FIRST/MIDDLE payloads equal one PMTU (256..4096, inferred
//                    from the first FIRST packet of the connection), LAST/ONLY
//                    payloads are at most one PMTU
//   read_resp        READ responses: PSNs from the request's PSN, ceil(L/PMTU)
//                    of them, FIRST/MIDDLE/LAST or ONLY, lengths adding up to
//                    L, AETH on FIRST/LAST/ONLY an ACK
//   ack_psn          an ACK/NAK/response PSN is not beyond the highest request
//                    PSN sent on that connection
//   aeth_syndrome    AETH bit 7 clear, type not the reserved 10b
//   nak_code         NAK codes 0..4
//   msn              the MSN never decreases on a connection and grows by at
//                    most the number of messages the ACK acknowledges (the
//                    responses of a re-executed duplicate READ: of every
//                    message sent so far),
//                    modulo 2^24 (it wraps from 0xFFFFFF to 0). It starts at
//                    0, except that a first MSN in [0x800000, 0xFFFFFF] is
//                    taken as a preset start (a responder preset below the
//                    wrap) and checked only from there on
//   ud_send          UD SEND_ONLY goes to QP1 with a DETH carrying the GSI Q_Key
//
// A connection is a request stream (direction, destination QP) and the
// answers travelling the other way to the requester's QP. The pairing of
// the two QPNs is learnt from CM ConnectRequest/ConnectReply when they are
// on the wire, otherwise from the first answer whose PSN falls inside the
// PSNs a request stream has sent.
//
// What the requester has seen acknowledged (the floor of a legal go-back)
// comes from the answers it took (on_delivered: in the simulator, when its
// response handler accepted them) when the monitor is built with
// acks_from_delivery; otherwise from the answers as they leave the
// responder (on_frame), which is exact on a lossless wire. A request is
// judged against what its requester had taken before it committed to the
// request (on_frame's t_committed: when the NIC handed it to its TX
// datapath), not before the request reached the wire: an answer taken
// while the request crossed the TX pipeline could not have stopped it.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace roce {
struct Frame;
}

namespace ernic::monitor {

struct Violation {
  uint64_t t_ps = 0;
  std::string dir;            // "A->B"
  uint64_t frame_index = 0;   // position in that direction's frame stream
  std::string rule;           // e.g. "psn_sequence"
  std::string what;           // readable description
  std::string str() const;    // "rule: what (A->B frame #n at t us)"
};

class WireMonitor {
 public:
  explicit WireMonitor(bool acks_from_delivery = false) : acks_from_delivery_(acks_from_delivery) {}

  // A frame as transmitted on direction dir ("A->B"); frames of every
  // direction in time order. t_committed (<= t_ps): when its sender
  // committed to it; requests are judged against the answers taken before
  // then (default: t_ps).
  // decoded: roce::decode(frame) when the caller has it already (else
  // decoded here).
  void on_frame(const std::vector<uint8_t>& frame, uint64_t t_ps, const std::string& dir,
                std::optional<uint64_t> t_committed = std::nullopt, const roce::Frame* decoded = nullptr);
  // A frame taken at the far end of dir at t_ps (used only with
  // acks_from_delivery: what the requester has seen acknowledged). Calls in
  // time order per direction; an answer taken at t counts for requests
  // committed strictly after t. The bytes form drops a frame that does not
  // decode or whose ICRC is wrong (the receiver drops it).
  void on_delivered(const std::vector<uint8_t>& frame, uint64_t t_ps, const std::string& dir);
  void on_delivered(const roce::Frame& f, uint64_t t_ps, const std::string& dir);

  // A capture that starts mid-connection (pcap lint): a stream's first
  // request may continue a message begun before it (MIDDLE/LAST), answers
  // to requests before a stream's first one are not judged (nor answers
  // on a connection none of whose requests was seen), and a stream's first
  // MSN is taken as its start whatever its value. Off in the simulator,
  // which sees every connection begin.
  void set_mid_connection(bool on) { mid_connection_ = on; }

  // A connection set up out of band (no CM on the wire: `connect` with
  // cm: false, `qp_adopt`): requests travel dir_cs to QP qp_s, answers
  // dir_sc to QP qp_c. Whatever ran on these QPs before is over, as at a
  // ConnectReply: a reused QPN starts again from the new PSNs and MSN 0.
  void new_connection(const std::string& dir_cs, uint32_t qp_s, const std::string& dir_sc, uint32_t qp_c);

  const std::vector<Violation>& violations() const { return violations_; }
  uint64_t frames_seen() const { return frames_; }

 private:
  struct SentPkt {
    uint8_t opcode = 0;
    int kind_before = -1;     // message kind open before this packet (-1 none, 0 SEND, 1 WRITE)
  };
  struct ReadReq {
    uint32_t len = 0;
    bool done_wire = false, done_view = false;  // its last response sent / delivered
    bool answered = false;    // a FIRST or ONLY response was sent for it
  };
  // One RC connection seen from its request direction.
  struct Stream {
    std::string dir;          // requests travel here
    uint32_t dest_qp = 0;     // responder's QP
    bool paired = false;      // responses' dest QP known
    uint32_t req_qp = 0;      // requester's QP (dest QP of the answers)
    // PSNs, unwrapped to 64 bits (u & 0xFFFFFF is the wire PSN)
    int64_t first = 0;        // first request PSN seen
    int64_t cursor = 0;       // PSN the next consecutive request carries
    int64_t high = 0;         // one past the highest PSN used
    int64_t high_bound = 0;   // one past the highest PSN an answer may carry (a READ's unknown span kept)
    int64_t acked_view = 0;   // PSNs below: acknowledged as the requester saw it
    int64_t ack_reach_view = 0;  // PSNs below: covered by an answer it took (a READ before them may be unfinished)
    int64_t acked_wire = 0;   // PSNs below: acknowledged by what the responder sent
    // A go-back the requester was asked for (a NAK-PSN, an RNR NAK or an
    // implied NAK delivered to it): it may resend from goback_floor (the
    // retransmission floor when the NAK arrived) in one pass, even packets
    // that an ACK delivered meanwhile covers (it may have committed to them
    // before it saw that ACK). 0 none, 1 asked, 2 under way; a new PSN after
    // a resent one ends it.
    int goback = 0;
    int64_t goback_floor = 0;
    // a READ sent before the PMTU was known: its span is [span_min, span_max]
    bool span_uncertain = false;
    int64_t span_read = 0, span_min = 0, span_max = 0, span_prev_high = 0;
    int msg_kind = -1;
    uint32_t pmtu = 0;
    std::map<int64_t, SentPkt> sent;
    std::map<int64_t, ReadReq> reads;
    std::set<int64_t> msg_ends;
    // responder's answers
    bool msn_seen = false;
    uint32_t msn = 0;
    int64_t msn_bound = 0;    // highest PSN the MSN so far accounts for
    bool in_resp = false;
    bool resp_dup = false;    // the responses under way answer a READ answered before
    int64_t resp_read = 0, resp_next = 0, resp_n = 0;
    uint64_t resp_bytes = 0;
    // READ responses as the requester received them
    bool vr_active = false;
    int64_t vr_read = 0, vr_next = 0;
  };

  // An answer taken by the requester, kept until a request committed
  // after it is judged (apply_deliveries).
  struct Delivery {
    uint64_t t_ps = 0;
    uint8_t opcode = 0;
    uint32_t dest_qp = 0, psn = 0;
    bool has_aeth = false;
    uint8_t syndrome = 0;
  };
  void apply_deliveries(const std::string& dir, uint64_t before_ps);
  void apply_delivery(const Delivery& d, const std::string& dir);

  int64_t unwrap(Stream& s, uint32_t raw) const;
  Stream* stream_for_response(const std::string& resp_dir, uint32_t qp, uint32_t psn);
  // A request, in order: PSN sequence (a resent PSN: request_resent), opcode
  // sequence, AckReq / pad / PMTU, where the stream goes next
  // (wire_monitor_request.cpp).
  void request(Stream& s, const roce::Frame& f, const std::string& dir);
  void request_psn(Stream& s, const roce::Frame& f, const std::string& dir, int64_t u);
  void request_resent(Stream& s, const roce::Frame& f, const std::string& dir, int64_t u);
  void request_opcode(Stream& s, const roce::Frame& f, const std::string& dir, int64_t u);
  void request_format(Stream& s, const roce::Frame& f, const std::string& dir);
  void request_advance(Stream& s, const roce::Frame& f, int64_t u);
  // An answer: PSN, syndrome, what it acknowledges, then its MSN and, for a
  // READ response, the READ's responses (wire_monitor_response.cpp).
  void response(Stream& s, const roce::Frame& f, const std::string& dir);
  void response_msn(Stream& s, const roce::Frame& f, const std::string& dir, int64_t bound, int64_t count_to);
  void read_response(Stream& s, const roce::Frame& f, const std::string& dir, int64_t u, bool syn_ok, int type);
  void read_response_first(Stream& s, const roce::Frame& f, const std::string& dir, int64_t u);  // FIRST / ONLY
  void read_response_rest(Stream& s, const roce::Frame& f, const std::string& dir, int64_t u);   // MIDDLE / LAST
  void set_pmtu(Stream& s, uint32_t pmtu, const std::string& dir, const char* from);
  void resolve_span(Stream& s, int64_t next_psn);
  int64_t read_span(const Stream& s, uint32_t len) const;  // 0 when the PMTU is unknown
  // PSNs below the result are acknowledged by an answer that acknowledges
  // below `acked`: an ACK past a READ still unanswered does not cover it.
  int64_t acked_by(Stream& s, uint8_t opcode, bool ack_aeth, int64_t u, bool view);
  int64_t retransmit_floor(const Stream& s) const;
  bool rest_acknowledged(const Stream& s) const;  // (wire_monitor_request.cpp)
  void settle_view(Stream& s);
  void cm(const roce::Frame& f, const std::string& dir);
  void reset_qp(const std::string& dir, uint32_t dest_qp);
  void flag(const std::string& dir, const std::string& rule, const std::string& what);
  static std::string reverse(const std::string& dir);

  bool acks_from_delivery_;
  bool mid_connection_ = false;
  uint64_t frames_ = 0;
  std::map<std::string, uint64_t> index_;   // next frame index per direction
  uint64_t cur_t_ = 0, cur_index_ = 0;
  std::map<std::pair<std::string, uint32_t>, Stream> streams_;                   // (request dir, dest QP)
  std::map<std::pair<std::string, uint32_t>, std::pair<std::string, uint32_t>> answers_;  // (answer dir, dest QP) -> stream key
  // CM: ConnectRequest seen, by local comm id: (dir it travelled, requester's QPN)
  std::map<uint32_t, std::pair<std::string, uint32_t>> cm_req_;
  std::vector<Violation> violations_;
  std::map<std::string, std::deque<Delivery>> pending_;  // by the direction the answers travelled
};

}  // namespace ernic::monitor
