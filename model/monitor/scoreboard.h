// model/monitor: a shadow-memory scoreboard, apart from the ERNIC model (it
// includes nothing of model/ernic, model/host or SystemC).
//
// It keeps a copy (the shadow) of every registered buffer, as the completed
// operations imply it should be, and compares host memory with it byte for
// byte, with the canary (guard) bytes around each MR. It is fed by whoever
// drives the system (the scenario runner):
//
// - register_mr(): a buffer and its guards; the shadow starts as the memory's
//   contents at that moment, the guards as the canaries found there.
// - add_qp() / pair_qps(): RC QPs and their receive queues (SEND payloads
//   land in RQ elements; each RQ is tracked as a buffer too).
// - host_write(): the host program wrote memory (fill, mem_write): the
//   shadow follows.
// - post(): a WQE (opcode, local range, remote VA and R_Key, length); the
//   source bytes are taken from the shadow at post time.
// - complete(): a polled CQE of that QP (RC completes in order: the CQE
//   belongs to the oldest outstanding WQE). Success: the target range's
//   shadow becomes the source bytes (WRITE/WRITE_IMM: the remote MR range;
//   READ: the local range; SENDs: the next element of the peer's RQ, from
//   its byte 0). ERRFLAG: the target range becomes undefined (any value is
//   accepted from then on). Then the target and source ranges and the
//   guards of their buffers are compared, leaving out bytes that an
//   operation still in flight may write.
// - stand_aside(): something the scoreboard cannot see may write a node's
//   buffers (WQEs posted by register writes, a hand-programmed MR table):
//   their contents are no longer compared (the guards still are), nor are
//   its CQEs matched to its posts (WQEs the driver did not post). With
//   cqes_too false only the contents stand aside (a split run: the other
//   node's operations on the memory run in another process, but this node's
//   posts and CQEs are all here, so an RC QP's in-order completion is still
//   checked).
// - check_all(): every buffer, at the end of a run; the targets of
//   operations that never completed are undefined.
//
// Unordered writers: two operations on different QPs whose targets overlap
// and that are in flight together leave the overlap undefined; a host write
// into the target of an operation in flight, or into its source, does the
// same for that operation's target. Operations on one QP are ordered.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/monitor/shadow_bytes.h"
#include "model/regs/wqe.h"

namespace ernic::monitor {

using SbOpcode = pg332::WqeOpcode;  // PG332 Table 2-1 (model/regs/wqe.h)
inline const char* sb_opcode_name(SbOpcode o) { return pg332::wqe_opcode_log_name(uint8_t(o)); }

struct SbMismatch {
  std::string node, buffer;   // buffer: "MR 'dst'", "RQ of QP2", "guard after MR 'dst'"
  uint64_t offset = 0;        // within the buffer (or the guard)
  uint64_t addr = 0;          // physical address
  uint8_t expected = 0, actual = 0;
  uint64_t count = 0;         // differing bytes in the compared range
  std::string defined_by;     // the operation (or host write) that last defined the byte
  std::string str() const;    // one line
};

class Scoreboard {
 public:
  // Reads `len` bytes of a node's memory at a physical address; nullptr when
  // outside it.
  using Reader = std::function<const uint8_t*(uint64_t pa, uint64_t len)>;
  // Whether anything may have written a byte of the range (false: it is all
  // zero, and the shadows set up from it do not read it: HostMemory::written).
  using Written = std::function<bool(uint64_t pa, uint64_t len)>;

  void add_node(const std::string& node, Reader rd, Written written = {});

  // An MR: [pa, pa+length) at virtual address va with R_Key rkey, guards of
  // guard_len bytes at guard_before and guard_after (guard_len 0: none).
  void register_mr(const std::string& node, const std::string& name, uint64_t pa, uint64_t length, uint64_t va,
                   uint32_t rkey, uint64_t guard_before, uint64_t guard_after, uint64_t guard_len,
                   const std::string& where);
  // The MR can no longer be the target of new operations; its memory is
  // still compared.
  void deregister_mr(const std::string& node, const std::string& name);

  // An RC QP of `node` with its RQ (depth elements of elem_bytes at rq_pa).
  // Returns its handle.
  int add_qp(const std::string& node, uint32_t qpn, uint64_t rq_pa, uint32_t rq_depth, uint32_t rq_elem_bytes);
  void pair_qps(int a, int b);
  // The QP's RQ producer index was set to `index` (PG332's switch to HW
  // handshake rewrites STATRQPIDBi): the next SEND lands in that element.
  void rq_restart(int qp, uint32_t index);

  void host_write(const std::string& node, uint64_t pa, const uint8_t* data, uint64_t len, const std::string& where);

  struct Post {
    int qp = -1;
    SbOpcode opcode = SbOpcode::write;
    uint16_t wr_id = 0;
    uint64_t local_pa = 0;
    uint64_t length = 0;
    uint64_t remote_va = 0;   // WRITE, WRITE_IMM, READ
    uint32_t rkey = 0;
    std::string where;        // the post step
  };
  void post(const Post& p);

  // A polled CQE of QP `qp`. Returns the mismatches found (empty: fine) and
  // messages for CQEs that match no outstanding WQE.
  // opcode: the CQE's, nullopt when it is none of the six.
  std::vector<std::string> complete(int qp, uint16_t wr_id, std::optional<SbOpcode> opcode, bool error,
                                    const std::string& when);

  void stand_aside(const std::string& node, const std::string& reason, bool cqes_too = true);

  // Everything, at the end of a run.
  std::vector<std::string> check_all();

  // Figures for the run report.
  uint64_t bytes_checked() const { return bytes_checked_; }
  uint64_t guard_bytes_checked() const { return guard_bytes_checked_; }
  uint64_t operations_tracked() const { return ops_tracked_; }
  uint64_t operations_completed() const { return ops_completed_; }
  uint64_t operations_in_flight() const { return inflight_.size(); }
  uint64_t buffers() const { return bufs_.size(); }
  uint64_t mismatches() const { return mismatches_; }
  const std::vector<std::string>& stood_aside() const { return aside_msgs_; }
  const std::vector<std::string>& notes() const { return notes_; }   // what it could not check, once each
  std::string summary() const;                                       // one line

  // Up to this many mismatch lines per comparison (the count says the rest).
  static constexpr size_t kMaxReported = 4;

 private:
  struct Range {
    uint64_t a, b;  // [a, b)
  };
  // offset -> origin, one contiguous segment from each key to the next.
  struct Segments {
    std::map<uint64_t, int> starts;
    void assign(uint64_t a, uint64_t b, int origin);
    int at(uint64_t off) const;
  };
  struct Guard {
    uint64_t pa = 0;
    std::vector<uint8_t> canary;
  };
  struct Buffer {
    std::string node, label;       // label: "MR 'dst'" or "RQ of QP2"
    bool mr = true, live = true;
    uint64_t pa = 0, len = 0, va = 0;
    uint32_t rkey = 0;
    ShadowBytes val;                // the shadow
    Segments prov;
    std::vector<Guard> guards;     // before, after
    // The target ranges of the operations in flight, as +1 at each start and
    // -1 at each end (offset -> sum; no zero entries): their union without
    // visiting every operation in flight (inflight_targets).
    std::map<uint64_t, int64_t> inflight_cover;
    uint64_t shared_sources = 0;   // operations in flight whose source is this shadow, not copied (keep_sources)
  };
  struct Origin {
    std::string what;
    bool defined = true;
  };
  struct Qp {
    std::string node;
    uint32_t qpn = 0;
    int peer = -1;
    int rq = -1;                   // buffer index of its RQ
    uint32_t rq_depth = 0, rq_elem = 0;
    uint64_t sends_posted = 0;     // SENDs posted towards this QP's RQ (element index)
    std::vector<uint64_t> outstanding;  // op ids, oldest first
    uint32_t reads_outstanding = 0;     // READs among them (post(): a later WRITE may race with one)
  };
  struct Op {
    uint64_t id = 0;
    int qp = -1;
    SbOpcode opcode = SbOpcode::write;
    uint16_t wr_id = 0;
    std::string desc;              // "WRITE wr_id 1 on A QP2 (post at f:l:c)"
    int tbuf = -1;                 // target buffer, -1 unknown (the remote range matches no MR)
    uint64_t toff = 0, tlen = 0;   // target range
    uint64_t tpad = 0;             // SENDs under 16 bytes: element bytes [tlen, tlen+tpad) may change (inline SDATA)
    int sbuf = -1;                 // source buffer (-1 unknown)
    uint64_t soff = 0;
    // The source bytes at post time: bytes [soff, soff + slen) of buffer
    // sbuf's shadow for as long as that range stays unchanged, then a copy
    // (copy on write: keep_sources()). Copying at every post cost 17 % of a
    // model run of 1,000 posted 16-KiB WRITEs (16 MB of fresh pages).
    uint64_t slen = 0;
    bool copied = false;
    std::vector<uint8_t> copy;
    std::vector<Range> undef;      // relative ranges of data that are not determined
    std::vector<Range> taint;      // relative target ranges another writer races with
  };

  int find_buffer(const std::string& node, uint64_t pa, uint64_t len) const;
  int find_mr_by_key(const std::string& node, uint32_t rkey, uint64_t va, uint64_t len) const;
  int origin(const std::string& what, bool defined);
  bool aside(const Buffer& b) const;
  // Ranges of buffer `bi` that operations in flight (but `except`) may write.
  std::vector<Range> inflight_targets(int bi, uint64_t except) const;
  void compare_span(const Buffer& buf, const uint8_t* mem, uint64_t a, uint64_t b, int org, SbMismatch& first,
                    uint64_t& diffs, std::vector<Range>& bad) const;
  void note_races(Op& op, const Qp& q);  // post(): op's races with the operations in flight
  void cover(const Op& op, int64_t sign);  // op's target range into (+1) or out of (-1) its buffer's inflight_cover
  // Before bytes [lo, hi) of buffer bi's shadow change: the operations in
  // flight whose source they are keep their own copy.
  void keep_sources(int bi, uint64_t lo, uint64_t hi);
  const uint8_t* source_of(const Op& op) const {
    return op.copied ? op.copy.data() : bufs_[size_t(op.sbuf)].val.data() + op.soff;
  }
  void compare(int bi, uint64_t a, uint64_t b, const std::vector<Range>& skip, std::vector<std::string>& out);
  void compare_guards(int bi, std::vector<std::string>& out);
  static void add_range(std::vector<Range>& v, uint64_t a, uint64_t b);
  static bool overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1, uint64_t& lo, uint64_t& hi);
  void note(const std::string& n);

  std::map<std::string, Reader> readers_;
  std::map<std::string, Written> written_;
  // Buffer `node`'s [pa, pa + len)'s pages known never written, for ShadowBytes::assign.
  std::function<bool(uint64_t, uint64_t)> unwritten(const std::string& node, uint64_t pa) const;
  std::vector<Buffer> bufs_;
  std::vector<Origin> origins_;
  std::vector<Qp> qps_;
  std::map<uint64_t, Op> inflight_;       // by id
  std::map<std::string, std::string> aside_;   // node -> reason: contents not compared
  std::map<std::string, bool> aside_cqes_;     // node -> its CQEs not matched to its posts either
  std::vector<std::string> aside_msgs_, notes_;
  uint64_t next_op_ = 1;
  uint64_t bytes_checked_ = 0, guard_bytes_checked_ = 0, ops_tracked_ = 0, ops_completed_ = 0, mismatches_ = 0;
};

}  // namespace ernic::monitor
