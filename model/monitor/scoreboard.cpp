#include "model/monitor/scoreboard.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace ernic::monitor {

std::string SbMismatch::str() const {
  std::string o = fmt::format("node {} {} offset {} (address 0x{:x}): expected 0x{:02x}, found 0x{:02x}; last defined by {}",
                              node, buffer, offset, addr, expected, actual, defined_by);
  if (count > 1) o += fmt::format(" ({} bytes differ in the range compared)", count);
  return o;
}

// ------------------------------------------------------------ segments

void Scoreboard::Segments::assign(uint64_t a, uint64_t b, int origin) {
  if (a >= b) return;
  // The origin in force at b continues after b.
  const int at_b = at(b);
  auto it = starts.lower_bound(a);
  while (it != starts.end() && it->first <= b) it = starts.erase(it);
  starts[a] = origin;
  if (at_b >= 0) starts[b] = at_b;
}

int Scoreboard::Segments::at(uint64_t off) const {
  auto it = starts.upper_bound(off);
  if (it == starts.begin()) return -1;
  return std::prev(it)->second;
}

// ------------------------------------------------------------ helpers

void Scoreboard::add_range(std::vector<Range>& v, uint64_t a, uint64_t b) {
  if (a < b) v.push_back({a, b});
}

bool Scoreboard::overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1, uint64_t& lo, uint64_t& hi) {
  lo = std::max(a0, b0);
  hi = std::min(a1, b1);
  return lo < hi;
}

int Scoreboard::origin(const std::string& what, bool defined) {
  origins_.push_back({what, defined});
  return int(origins_.size() - 1);
}

bool Scoreboard::aside(const Buffer& b) const { return aside_.count(b.node) != 0; }

void Scoreboard::note(const std::string& n) {
  if (std::find(notes_.begin(), notes_.end(), n) == notes_.end()) notes_.push_back(n);
}

int Scoreboard::find_buffer(const std::string& node, uint64_t pa, uint64_t len) const {
  for (size_t i = 0; i < bufs_.size(); ++i) {
    const Buffer& b = bufs_[i];
    if (b.node == node && pa >= b.pa && pa - b.pa <= b.len && len <= b.len - (pa - b.pa)) return int(i);
  }
  return -1;
}

int Scoreboard::find_mr_by_key(const std::string& node, uint32_t rkey, uint64_t va, uint64_t len) const {
  for (size_t i = 0; i < bufs_.size(); ++i) {
    const Buffer& b = bufs_[i];
    if (b.node == node && b.mr && b.live && b.rkey == rkey && va >= b.va && va - b.va <= b.len &&
        len <= b.len - (va - b.va))
      return int(i);
  }
  return -1;
}

// ------------------------------------------------------------ feeding

void Scoreboard::add_node(const std::string& node, Reader rd, Written written) {
  readers_[node] = std::move(rd);
  written_[node] = std::move(written);
}

std::function<bool(uint64_t, uint64_t)> Scoreboard::unwritten(const std::string& node, uint64_t pa) const {
  const auto it = written_.find(node);
  if (it == written_.end() || !it->second) return {};
  const Written& w = it->second;
  return [&w, pa](uint64_t at, uint64_t k) { return !w(pa + at, k); };
}

void Scoreboard::register_mr(const std::string& node, const std::string& name, uint64_t pa, uint64_t length,
                             uint64_t va, uint32_t rkey, uint64_t guard_before, uint64_t guard_after,
                             uint64_t guard_len, const std::string& where) {
  Buffer b;
  b.node = node;
  b.label = "MR '" + name + "'";
  b.pa = pa;
  b.len = length;
  b.va = va;
  b.rkey = rkey;
  const Reader& rd = readers_.at(node);
  const uint8_t* m = rd(pa, length);
  b.val.assign(m, length, unwritten(node, pa));
  b.prov.assign(0, length, origin("its contents at register_mr (" + where + ")", true));
  if (guard_len)
    for (uint64_t g : {guard_before, guard_after}) {
      const uint8_t* p = rd(g, guard_len);
      if (p) b.guards.push_back({g, std::vector<uint8_t>(p, p + guard_len)});
    }
  bufs_.push_back(std::move(b));
}

void Scoreboard::deregister_mr(const std::string& node, const std::string& name) {
  for (Buffer& b : bufs_)
    if (b.node == node && b.mr && b.live && b.label == "MR '" + name + "'") {
      b.live = false;
      b.label += " (deregistered)";
      return;
    }
}

void Scoreboard::rq_restart(int qp, uint32_t index) {
  if (qp >= 0 && size_t(qp) < qps_.size()) qps_[qp].sends_posted = index;
}

int Scoreboard::add_qp(const std::string& node, uint32_t qpn, uint64_t rq_pa, uint32_t rq_depth,
                       uint32_t rq_elem_bytes) {
  Qp q;
  q.node = node;
  q.qpn = qpn;
  q.rq_depth = rq_depth;
  q.rq_elem = rq_elem_bytes;
  const uint64_t len = uint64_t(rq_depth) * rq_elem_bytes;
  if (len) {
    Buffer b;
    b.node = node;
    b.label = fmt::format("RQ of QP{}", qpn);
    b.mr = false;
    b.pa = rq_pa;
    b.len = len;
    const uint8_t* m = readers_.at(node)(rq_pa, len);
    b.val.assign(m, len, unwritten(node, rq_pa));
    b.prov.assign(0, len, origin(fmt::format("its contents when QP{} was set up", qpn), true));
    bufs_.push_back(std::move(b));
    q.rq = int(bufs_.size() - 1);
  }
  qps_.push_back(std::move(q));
  return int(qps_.size() - 1);
}

void Scoreboard::pair_qps(int a, int b) {
  qps_.at(a).peer = b;
  qps_.at(b).peer = a;
}

void Scoreboard::host_write(const std::string& node, uint64_t pa, const uint8_t* data, uint64_t len,
                            const std::string& where) {
  if (!len) return;
  int org = -1;
  for (size_t i = 0; i < bufs_.size(); ++i) {
    Buffer& b = bufs_[i];
    uint64_t lo, hi;
    if (b.node != node || !overlap(pa, pa + len, b.pa, b.pa + b.len, lo, hi)) continue;
    if (org < 0) org = origin("the host write " + where, true);
    keep_sources(int(i), lo - b.pa, hi - b.pa);
    std::memcpy(b.val.write(lo - b.pa, hi - lo), data + (lo - pa), hi - lo);
    b.prov.assign(lo - b.pa, hi - b.pa, org);
    // Operations in flight on this range race with the host.
    for (auto& [id, op] : inflight_) {
      uint64_t l2, h2;
      if (op.tbuf == int(i) && overlap(lo - b.pa, hi - b.pa, op.toff, op.toff + op.tlen + op.tpad, l2, h2))
        add_range(op.taint, l2 - op.toff, h2 - op.toff);
      if (op.sbuf == int(i) && overlap(lo - b.pa, hi - b.pa, op.soff, op.soff + op.slen, l2, h2))
        add_range(op.undef, l2 - op.soff, h2 - op.soff);
    }
  }
}

void Scoreboard::post(const Post& p) {
  Qp& q = qps_.at(p.qp);
  Op op;
  op.id = next_op_++;
  op.qp = p.qp;
  op.opcode = p.opcode;
  op.wr_id = p.wr_id;
  op.desc = fmt::format("{} wr_id {} of {} bytes on {} QP{} ({})", sb_opcode_name(p.opcode), p.wr_id, p.length, q.node,
                        q.qpn, p.where);
  const Qp* peer = q.peer >= 0 ? &qps_[q.peer] : nullptr;
  const int local = find_buffer(q.node, p.local_pa, p.length);
  uint64_t local_off = local >= 0 ? p.local_pa - bufs_[local].pa : 0;
  switch (p.opcode) {
    case SbOpcode::write:
    case SbOpcode::write_imm:
      op.sbuf = local;
      op.soff = local_off;
      op.tbuf = peer ? find_mr_by_key(peer->node, p.rkey, p.remote_va, p.length) : -1;
      op.toff = op.tbuf >= 0 ? p.remote_va - bufs_[op.tbuf].va : 0;
      op.tlen = p.length;
      break;
    case SbOpcode::read:
      op.tbuf = local;
      op.toff = local_off;
      op.tlen = p.length;
      op.sbuf = peer ? find_mr_by_key(peer->node, p.rkey, p.remote_va, p.length) : -1;
      op.soff = op.sbuf >= 0 ? p.remote_va - bufs_[op.sbuf].va : 0;
      break;
    case SbOpcode::send:
    case SbOpcode::send_imm:
    case SbOpcode::send_inv:
      op.sbuf = local;
      op.soff = local_off;
      if (peer && peer->rq >= 0) {
        Qp& pq = qps_[q.peer];
        // SENDs fill the peer's RQ elements in order, each from its byte 0.
        const uint64_t k = pq.sends_posted++ % pq.rq_depth;
        op.tbuf = pq.rq;
        op.toff = k * pq.rq_elem;
        op.tlen = std::min<uint64_t>(p.length, pq.rq_elem);
        // An inline SEND (16 bytes or less) keeps its real LENGTH
        // (A-ERNIC-21): exactly tlen bytes of the element change. tpad
        // stays 0 (XIB's LENGTH-16 padding would set it to 16 - tlen).
      }
      break;
  }
  // The source bytes, from the shadow; undetermined where the shadow is, or
  // where an operation in flight may write.
  if (op.sbuf >= 0) {
    const Buffer& s = bufs_[op.sbuf];
    op.slen = p.length;  // the shadow's bytes until they change (keep_sources)
    if (aside(s)) {
      add_range(op.undef, 0, p.length);
    } else {
      const uint64_t a = op.soff, b = op.soff + p.length;
      auto it = s.prov.starts.upper_bound(a);
      if (it != s.prov.starts.begin()) --it;
      for (; it != s.prov.starts.end() && it->first < b; ++it) {
        const uint64_t sa = std::max(a, it->first);
        const auto nx = std::next(it);
        const uint64_t sb = std::min(b, nx == s.prov.starts.end() ? s.len : nx->first);
        if (!origins_[it->second].defined) add_range(op.undef, sa - a, sb - a);
      }
      for (const Range& r : inflight_targets(op.sbuf, 0)) {
        uint64_t lo, hi;
        if (overlap(r.a, r.b, a, b, lo, hi)) add_range(op.undef, lo - a, hi - a);
      }
    }
  } else {
    op.slen = p.length;
    op.copied = true;
    op.copy.assign(p.length, 0);
    add_range(op.undef, 0, p.length);
  }
  note_races(op, q);
  if (!op.copied && op.slen) ++bufs_[size_t(op.sbuf)].shared_sources;
  if (op.opcode == SbOpcode::read) ++q.reads_outstanding;
  q.outstanding.push_back(op.id);
  cover(op, +1);
  inflight_.emplace(op.id, std::move(op));
  ++ops_tracked_;
}

// Operations in flight that op (being posted on q) races with: those of
// other QPs, and a READ of q (when every operation in flight is q's and none
// is a READ, there is none to visit).
void Scoreboard::note_races(Op& op, const Qp& q) {
  const bool others_in_flight = inflight_.size() > q.outstanding.size();
  for (auto& [id, x] : inflight_) {
    if (!others_in_flight && !q.reads_outstanding) break;
    uint64_t lo, hi;
    if (op.tbuf < 0) break;
    // This one writes what x still has to read: x on another QP (unordered),
    // or a READ of this QP, which the responder executes again, from memory
    // as it is then, when its response is lost (IBTA 9.9.4.2; only a fenced WR
    // would make this one wait for it): rc_read_reexecuted_sees_later_write.
    if (x.sbuf == op.tbuf && (x.qp != op.qp || x.opcode == SbOpcode::read) &&
        overlap(x.soff, x.soff + x.slen, op.toff, op.toff + op.tlen + op.tpad, lo, hi))
      add_range(x.undef, lo - x.soff, hi - x.soff);
    // Both write the same bytes from different QPs: either may land last.
    if (x.tbuf == op.tbuf && x.qp != op.qp &&
        overlap(x.toff, x.toff + x.tlen + x.tpad, op.toff, op.toff + op.tlen + op.tpad, lo, hi)) {
      add_range(x.taint, lo - x.toff, hi - x.toff);
      add_range(op.taint, lo - op.toff, hi - op.toff);
    }
  }
}

void Scoreboard::cover(const Op& op, int64_t sign) {
  const uint64_t a = op.toff, b = op.toff + op.tlen + op.tpad;
  if (op.tbuf < 0 || a >= b) return;
  auto& c = bufs_[op.tbuf].inflight_cover;
  for (const auto& [at, d] : {std::pair<uint64_t, int64_t>{a, sign}, {b, -sign}}) {
    auto it = c.try_emplace(at, 0).first;
    if ((it->second += d) == 0) c.erase(it);
  }
}

// The union of the target ranges of buffer bi's operations in flight (but
// `except`'s), as disjoint ranges in order. Every user merges the ranges it
// gets (compare() skips their union, post() marks their overlap with its
// source undetermined), so the union is what the list of each operation's
// range would give.
std::vector<Scoreboard::Range> Scoreboard::inflight_targets(int bi, uint64_t except) const {
  std::vector<Range> v;
  if (except) {
    for (const auto& [id, op] : inflight_)
      if (id != except && op.tbuf == bi) add_range(v, op.toff, op.toff + op.tlen + op.tpad);
    return v;
  }
  int64_t depth = 0;
  uint64_t start = 0;
  for (const auto& [at, d] : bufs_[size_t(bi)].inflight_cover) {
    if (depth == 0) start = at;
    depth += d;
    if (depth == 0) add_range(v, start, at);
  }
  return v;
}

std::vector<std::string> Scoreboard::complete(int qpi, uint16_t wr_id, std::optional<SbOpcode> opcode, bool error,
                                              const std::string& when) {
  const char* opname = opcode ? sb_opcode_name(*opcode) : "an unknown opcode";
  std::vector<std::string> out;
  Qp& q = qps_.at(qpi);
  const bool q_aside = aside_cqes_.count(q.node) != 0;
  if (q.outstanding.empty()) {
    if (!q_aside)
      out.push_back(fmt::format("scoreboard: {} QP{} completed wr_id {} ({}) {}, but no WQE posted through the "
                                "driver is outstanding there",
                                q.node, q.qpn, wr_id, opname, when));
    return out;
  }
  Op op = std::move(inflight_.at(q.outstanding.front()));
  inflight_.erase(q.outstanding.front());
  if (!op.copied && op.slen) --bufs_[size_t(op.sbuf)].shared_sources;
  cover(op, -1);
  q.outstanding.erase(q.outstanding.begin());
  if (op.opcode == SbOpcode::read) --q.reads_outstanding;
  ++ops_completed_;
  bool trusted = true;
  if (op.wr_id != wr_id || !opcode || op.opcode != *opcode) {
    trusted = false;
    if (!q_aside)
      out.push_back(fmt::format("scoreboard: {} QP{}'s CQE {} names wr_id {} ({}), but the oldest outstanding WQE is "
                                "the {} (an RC QP completes in order)",
                                q.node, q.qpn, when, wr_id, opname, op.desc));
  }
  if (op.tbuf >= 0) {
    Buffer& t = bufs_[op.tbuf];
    const uint64_t a = op.toff, b = op.toff + op.tlen;
    if (error || !trusted) {
      t.prov.assign(a, b + op.tpad,
                    origin(fmt::format("the {} completed {} {}", op.desc, when, error ? "with ERRFLAG" : "out of order"),
                           false));
    } else {
      if (op.tlen) {
        keep_sources(op.tbuf, a, b);
        // memmove: a WRITE within one MR may have overlapping source and target.
        std::memmove(t.val.write(a, op.tlen), source_of(op), op.tlen);
      }
      t.prov.assign(a, b, origin(fmt::format("the {} completed {}", op.desc, when), true));
      for (const Range& r : op.undef)
        if (r.a < op.tlen)
          t.prov.assign(a + r.a, a + std::min(r.b, op.tlen),
                        origin(fmt::format("the {} completed {} (its source was not determined when posted)", op.desc,
                                           when),
                               false));
      for (const Range& r : op.taint)
        t.prov.assign(a + r.a, a + r.b,
                      origin(fmt::format("the {} completed {} (raced by another writer)", op.desc, when), false));
      if (op.tpad)
        t.prov.assign(b, b + op.tpad,
                      origin(fmt::format("the {} completed {} (inline SEND data may fill 16 bytes)", op.desc, when),
                             false));
    }
  } else if (!error && op.tlen && !aside_.count(q.node)) {  // (split: the peer's MRs are registered in its process)
    const Qp* peer = q.peer >= 0 ? &qps_[q.peer] : nullptr;
    if (!peer || !aside_.count(peer->node))
      out.push_back(fmt::format("scoreboard: the {} completed {} without ERRFLAG, but its remote range matches no MR "
                                "registered on {}",
                                op.desc, when, peer ? peer->node : std::string("the peer")));
  }
  // Compare what the operation touched, but what operations in flight may write.
  if (op.tbuf >= 0) {
    compare(op.tbuf, op.toff, op.toff + op.tlen + op.tpad, inflight_targets(op.tbuf, 0), out);
    compare_guards(op.tbuf, out);
  }
  if (op.sbuf >= 0) {
    compare(op.sbuf, op.soff, op.soff + op.slen, inflight_targets(op.sbuf, 0), out);
    compare_guards(op.sbuf, out);
  }
  return out;
}

void Scoreboard::stand_aside(const std::string& node, const std::string& reason, bool cqes_too) {
  if (cqes_too) aside_cqes_[node] = true;
  if (aside_.count(node)) return;
  aside_[node] = reason;
  aside_msgs_.push_back(node + ": " + reason);
}

void Scoreboard::keep_sources(int bi, uint64_t lo, uint64_t hi) {
  if (!bufs_[size_t(bi)].shared_sources) return;
  for (auto& [id, op] : inflight_) {
    uint64_t l2, h2;
    if (op.copied || op.sbuf != bi || !overlap(lo, hi, op.soff, op.soff + op.slen, l2, h2)) continue;
    const uint8_t* s = source_of(op);
    op.copy.assign(s, s + op.slen);
    op.copied = true;
    --bufs_[size_t(bi)].shared_sources;
  }
}

// ------------------------------------------------------------ comparing

void Scoreboard::compare(int bi, uint64_t a, uint64_t b, const std::vector<Range>& skip_in,
                         std::vector<std::string>& out) {
  Buffer& buf = bufs_[bi];
  if (a >= b || aside(buf)) return;
  const uint8_t* mem = readers_.at(buf.node)(buf.pa, buf.len);
  if (!mem) return;
  // [a, b) minus the skipped ranges.
  std::vector<Range> skip = skip_in;
  std::sort(skip.begin(), skip.end(), [](const Range& x, const Range& y) { return x.a < y.a; });
  std::vector<Range> todo;
  uint64_t cur = a;
  for (const Range& s : skip) {
    if (s.b <= cur) continue;
    if (s.a >= b) break;
    if (s.a > cur) todo.push_back({cur, s.a});
    cur = std::max(cur, s.b);
  }
  if (cur < b) todo.push_back({cur, b});
  SbMismatch first;
  uint64_t diffs = 0;
  std::vector<Range> bad;
  const auto w = written_.find(buf.node);
  const Written* host_written = w != written_.end() && w->second ? &w->second : nullptr;
  for (const Range& r : todo) {
    auto it = buf.prov.starts.upper_bound(r.a);
    if (it != buf.prov.starts.begin()) --it;
    for (; it != buf.prov.starts.end() && it->first < r.b; ++it) {
      const uint64_t sa = std::max(r.a, it->first);
      const auto nx = std::next(it);
      const uint64_t sb = std::min(r.b, nx == buf.prov.starts.end() ? buf.len : nx->first);
      if (sa >= sb || !origins_[it->second].defined) continue;
      bytes_checked_ += sb - sa;
      if (!host_written || (sa / ShadowBytes::kPage == (sb - 1) / ShadowBytes::kPage)) {
        compare_span(buf, mem, sa, sb, it->second, first, diffs, bad);
        continue;
      }
      // Page by page: a page neither side has written is zero on both
      // (reading memory nothing wrote costs a page fault; issue 17).
      for (uint64_t c = sa; c < sb;) {
        const uint64_t e = std::min(sb, (c / ShadowBytes::kPage + 1) * ShadowBytes::kPage);
        if (buf.val.written(c, e - c) || (*host_written)(buf.pa + c, e - c))
          compare_span(buf, mem, c, e, it->second, first, diffs, bad);
        c = e;
      }
    }
  }
  if (!diffs) return;
  ++mismatches_;
  first.count = diffs;
  out.push_back("scoreboard: " + first.str());
  // Reported once: from now on these bytes are what memory holds.
  const int org = origin("a mismatch already reported", false);
  for (const Range& r : bad) buf.prov.assign(r.a, r.b, org);
}

// [a, b) of buffer buf against memory: each differing byte into bad, the
// first described in first.
void Scoreboard::compare_span(const Buffer& buf, const uint8_t* mem, uint64_t a, uint64_t b, int org,
                              SbMismatch& first, uint64_t& diffs, std::vector<Range>& bad) const {
  if (std::memcmp(mem + a, buf.val.data() + a, b - a) == 0) return;
  for (uint64_t k = a; k < b; ++k) {
    if (mem[k] == buf.val[k]) continue;
    if (diffs++ == 0) {
      first.node = buf.node;
      first.buffer = buf.label;
      first.offset = k;
      first.addr = buf.pa + k;
      first.expected = buf.val[k];
      first.actual = mem[k];
      first.defined_by = origins_[org].what;
    }
    if (!bad.empty() && bad.back().b == k)
      bad.back().b = k + 1;
    else
      bad.push_back({k, k + 1});
  }
}

void Scoreboard::compare_guards(int bi, std::vector<std::string>& out) {
  Buffer& buf = bufs_[bi];
  const Reader& rd = readers_.at(buf.node);
  for (size_t g = 0; g < buf.guards.size(); ++g) {
    Guard& gd = buf.guards[g];
    if (gd.canary.empty()) continue;
    const uint8_t* mem = rd(gd.pa, gd.canary.size());
    if (!mem) continue;
    guard_bytes_checked_ += gd.canary.size();
    uint64_t diffs = 0, first = 0;
    for (uint64_t k = 0; k < gd.canary.size(); ++k)
      if (mem[k] != gd.canary[k] && diffs++ == 0) first = k;
    if (!diffs) continue;
    ++mismatches_;
    SbMismatch m;
    m.node = buf.node;
    m.buffer = fmt::format("canary {} {}", g == 0 ? "before" : "after", buf.label);
    m.offset = first;
    m.addr = gd.pa + first;
    m.expected = gd.canary[first];
    m.actual = mem[first];
    m.count = diffs;
    m.defined_by = "the driver's canary (nothing may write it)";
    out.push_back("scoreboard: " + m.str());
    gd.canary.clear();  // reported once
  }
}

std::vector<std::string> Scoreboard::check_all() {
  std::vector<std::string> out;
  if (!inflight_.empty())
    note(fmt::format("{} operation(s) posted but never polled: their targets were not compared", inflight_.size()));
  for (size_t i = 0; i < bufs_.size(); ++i) {
    compare(int(i), 0, bufs_[i].len, inflight_targets(int(i), 0), out);
    compare_guards(int(i), out);
  }
  return out;
}

std::string Scoreboard::summary() const {
  std::string o = fmt::format("{} buffers, {} operations tracked ({} completed), {} bytes and {} canary bytes checked, "
                              "{} mismatch(es)",
                              bufs_.size(), ops_tracked_, ops_completed_, bytes_checked_, guard_bytes_checked_,
                              mismatches_);
  for (const std::string& a : aside_msgs_) o += "; stood aside on " + a;
  for (const std::string& n : notes_) o += "; " + n;
  return o;
}

}  // namespace ernic::monitor
