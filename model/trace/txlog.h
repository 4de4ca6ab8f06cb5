// model/trace: the transaction log written by `ernic-sim run S.yaml --log FILE`.
//
// One JSON object per line (JSON Lines), compact, keys in a fixed order:
//   {"t_ps":N,"node":"A","kind":K,"domain":"core","cycle":N,"qp":N, <kind fields>}
// "qp" is omitted when the record has no QP. Kind fields, in order
// (parenthesised keys are omitted when absent):
//   reg:   "op":"write"|"read","addr","name","value"
//   dma:   "master","op":"write"|"read","addr","len",("bursts"),("tlps"),("cpls")
//          (bursts: AXI bursts, cut at 4 KiB; tlps: PCIe MWr or MRd TLPs;
//          cpls: read completions, cut at MPS and the RCB; model/dma/pcie.h)
//   frame: "dir":"tx"|"rx","link":"A->B","index","len","roce",
//          if roce: "opcode","opname","psn","dest_qp","ack_req",("syndrome"),("msn"),("mad");
//          then always "src","dst" (IP strings, "" when the frame has none)
//   cqe:   "cq_index","wr_id","opcode","error","raw"
//   intr:  "level","intsts"
//   fault: "link","index","rule","action","opcode","psn","detail"
//          (node "", domain "wire", cycle 0, no qp; opcode/psn -1 when unknown)
//   state: "what","value"
//   step:  "at","step","phase":"start"|"end","detail"
//          (node "", domain "scenario", cycle 0, no qp)
// Numbers are JSON numbers; strings are escaped as nlohmann::json::dump does
// (\" \\ \b \f \n \r \t, other control characters as \u00XX, UTF-8 as is,
// invalid UTF-8 replaced by U+FFFD).
//
// The typed calls (reg, dma, ...) format straight into a buffer with fmt and
// produce exactly the bytes that write() gives for the equivalent json
// object. Output is a function of the calls only (no wall clock, no
// addresses). Records written at one simulated instant are sorted by node
// name (order_node below: a fault record's is the sending end of its link,
// after that node's own records), then by their text (records without one, scenario steps, stay where they
// were and separate the sorted runs): the order in which
// the kernel runs simultaneous processes is arbitrary and must not show in
// the log (idle skipping on and off give the same file). Steps of a
// `parallel`'s branches run concurrently, so an instant that has one
// (step(..., branch = true)) puts its step records last, ordered by their
// `order` (the step's place in the scenario, model/system's runner), after
// the instant's other records ordered as above without them: the same file
// whichever branch the kernel (or, split over processes, the link) let run
// first. Not thread-safe: one writer per TxLog (the SystemC kernel is
// single-threaded). The file is flushed by flush() and by the destructor.
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ernic {

struct FrameFields {
  uint32_t len = 0;                  // frame length in bytes
  bool roce = false;                 // RoCEv2 frame (BTH present)
  int opcode = 0;                    // BTH opcode
  std::string opname;                // e.g. "RC_WRITE_MIDDLE"
  uint32_t psn = 0;
  uint32_t dest_qp = 0;
  bool ack_req = false;
  std::optional<uint8_t> syndrome;   // AETH syndrome (ACK/NAK)
  std::optional<uint32_t> msn;       // AETH MSN
  std::string mad;                   // CM attribute name, "" when not a CM MAD
  std::string src, dst;              // IP addresses as text
};

// The node a record is ordered under in its instant: its "node"; for a
// "fault" record (node "") the sending end of its "link" ("B" of "B->A": the
// node whose frame it is, written when that node sent it, in the order of
// that node's records whether it ran with others in one process or alone);
// empty for a record that keeps its place (a step, an instant mark).
std::string_view order_node(std::string_view record);
// The order of one instant's records between two that keep their place: by
// order_node, a node's own records before the fault records of its link,
// then by text.
bool record_before(std::string_view x, std::string_view y);

class TxLog {
 public:
  // Opens (truncates) the file; throws std::runtime_error naming the path.
  explicit TxLog(const std::string& path);
  ~TxLog();  // flushes; errors at this point are swallowed
  TxLog(const TxLog&) = delete;
  TxLog& operator=(const TxLog&) = delete;

  // One record from a json object: keys re-ordered into the layout above
  // (keys it does not know follow, in the object's order), compact, one line.
  // Throws std::invalid_argument if rec is not an object.
  void write(const nlohmann::json& rec);

  // Writes buffered records to the file; throws std::runtime_error naming the
  // path on an I/O error (so does any call that fills the buffer).
  void flush();
  uint64_t records() const { return records_; }
  // The simulated time of writing (ps), which groups simultaneous records;
  // without it, each record's own t_ps does.
  std::function<uint64_t()> clock;
  // A split run's node process (model/system/split.h): before the first
  // record of each instant of writing (needs `clock`), a line
  // {"instant_ps":N}, so that the parts' records can be merged by the
  // instant they were written at (tools/split_merge.h drops these lines).
  bool mark_instants = false;
  const std::string& path() const { return path_; }

  // --- typed API (hot path) ---
  void reg(uint64_t t_ps, const std::string& node, const char* domain, uint64_t cycle,
           std::optional<uint32_t> qp, bool write, uint32_t addr, const std::string& name,
           uint32_t value);
  void dma(uint64_t t_ps, const std::string& node, const char* domain, uint64_t cycle,
           std::optional<uint32_t> qp, const char* master, bool write, uint64_t addr, uint64_t len,
           int64_t bursts = -1, int64_t tlps = -1, int64_t cpls = -1);  // negative: omitted
  void frame(uint64_t t_ps, const std::string& node, const char* domain, uint64_t cycle,
             std::optional<uint32_t> qp, const char* dir, const std::string& link, uint64_t index,
             const FrameFields& f);
  void cqe(uint64_t t_ps, const std::string& node, const char* domain, uint64_t cycle, uint32_t qp,
           uint32_t cq_index, uint16_t wr_id, uint8_t opcode, bool error, uint32_t raw);
  void intr(uint64_t t_ps, const std::string& node, const char* domain, uint64_t cycle, bool level,
            uint32_t intsts);
  void fault(uint64_t t_ps, const std::string& link, uint64_t index, const std::string& rule,
             const char* action, int opcode, int64_t psn, const std::string& detail);
  void state(uint64_t t_ps, const std::string& node, const char* domain, uint64_t cycle,
             std::optional<uint32_t> qp, const std::string& what, const std::string& value);
  // order: the step's place in the scenario (compared as bytes: a step's
  // start < what runs inside it < its end; siblings in file order); branch:
  // the step is inside a `parallel` (see above). Neither is written.
  void step(uint64_t t_ps, const std::string& at, const char* kind, const char* phase,
            const std::string& detail, const std::string& order = {}, bool branch = false);

  // The JSON text of s (with quotes) exactly as nlohmann::json::dump writes it.
  static std::string quote(const std::string& s);

 private:
  struct Buf;
  char* begin(size_t bound);  // room for one record of at most `bound` bytes
  void commit(char* end);     // the record ends at `end` (after its '\n')
  void drain();               // buffer -> file (all but the open group of records of one instant)
  void close_group();         // orders the open group's records (see above)
  uint64_t grp_t_ = ~uint64_t(0);
  size_t grp_start_ = 0;
  std::vector<std::pair<size_t, size_t>> grp_;  // offset, length of each record of the open group
  std::vector<std::string> grp_order_;          // each one's step order ("" for other records)
  bool grp_branch_ = false;                     // the open group has a parallel branch's step
  std::string next_order_;                      // step(): for commit()
  bool next_branch_ = false;
  void order_branch_group();                    // close_group() of a group with a branch's step

  std::string path_;
  std::FILE* file_ = nullptr;
  std::unique_ptr<Buf> buf_;
  uint64_t records_ = 0;
};

}  // namespace ernic
