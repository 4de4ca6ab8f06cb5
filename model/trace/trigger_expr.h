// model/trace: a trigger expression as parsed and as bound, internal to
// model/trace (trigger_parse.cpp builds it, trigger_bind.cpp binds it,
// trigger.cpp evaluates it): the expression tree (Expr, Term) and what its
// names resolved to (Bound: signal slots, stall trackers, link directions,
// register-write watches).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace ernic::trigger {

enum class Tok { End, Ident, Number, LParen, RParen, Comma, Dot, LBrack, RBrack, Arrow, Eq, Ne, Lt, Le, Gt, Ge, And, Or, Not };

// ---------------------------------------------------------------- AST
struct Term {
  enum Kind { Number, Symbol, Signal, Qp, Axis, Frame, PsnGap, RegWrite } kind = Number;
  size_t col = 0, field_col = 0;
  uint64_t num = 0;
  std::string sym;
  std::string node, field, from, to, reg, stream;
  std::vector<std::string> path;
  uint64_t qpn = 0;
  std::optional<uint64_t> index;
  // bound
  std::string full;       // Signal / Qp / Axis valid|ready
  int slot = -1;          // Signal / Qp / Axis valid|ready
  int tracker = -1;       // Axis stall
  int dir = -1;           // Frame / PsnGap
  int regw = -1;          // RegWrite
};

struct Expr {
  enum Kind { Or, And, Not, Cmp, Leaf } kind = Leaf;
  Tok op = Tok::Eq;
  std::unique_ptr<Expr> a, b;
  std::unique_ptr<Term> ta, tb;
  size_t col = 0;
};

// ---------------------------------------------------------------- bound
struct Tracker {  // one stream's stall count
  int valid = -1, ready = -1;
  uint64_t period = 1;
  std::set<uint64_t> counts;  // counts at which a comparison may change
};
struct DirSlots {
  std::string name;  // "A->B"
  int tx_frames = -1, tx_opcode = -1, tx_psn = -1, tx_dest_qp = -1, tx_syndrome = -1, tx_aeth = -1;
  int rx_frames = -1, rx_psn_gap = -1;
};
struct RegWatch {
  int bvalid = -1, awaddr = -1, wdata = -1;
  uint32_t addr = 0;
};

struct Bound {
  std::vector<std::string> slots;
  std::unordered_map<std::string, int> slot_of;
  std::vector<Tracker> trackers;
  std::map<std::string, int> tracker_of;
  std::vector<DirSlots> dirs;
  std::vector<RegWatch> regws;
};

}  // namespace ernic::trigger
