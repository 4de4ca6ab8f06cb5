// tools/split_merge: a split run's per-node outputs merged into the files a
// single-process run writes (issue 16). In a split run (tools/split_run.h)
// every node of the scenario runs in its own `ernic-sim node` process; each
// writes the wire frames its own CMAC sent and its own log records (plus
// every step record), and these functions put the parts back together,
// byte for byte what one process would have written.
//
// Wire pcap (merge_wire_pcaps). One process feeds its wire pcap through
// PcapWriter::write_ordered (model/trace/pcap_writer.h): frames in time
// order, frames of one instant (equal time in ps) ordered by their source,
// the CMAC's tap_wire_source = the node's index in the scenario's node
// order (System::open_taps), then by arrival. The merge takes every part's
// records in file order and interleaves them by timestamp; equal timestamps
// go in part order (= node order = source order). Records are copied as
// they are (16-byte header and captured bytes); the file header is the
// parts' (they must all be the same: magic, version, snap length, link
// type). Each part must be in time order (non-decreasing timestamps).
//   The file keeps ns (ps / 1000, truncated), not ps: two frames of
// different sources whose times differ by less than 1 ns but are not equal
// get equal timestamps, and the merge puts the lower node first where one
// process puts the earlier one first. Identity holds anyway for this
// model: a CMAC puts a frame's first beat on the line at an edge of the one
// CMAC clock all nodes share (period >= 1000 ps: the scenario parser
// limits clocks.cmac_mhz to 1000) and every line of a point-to-point run
// has the same rate, so the first bytes of two frames are either at the
// same ps or at least one period (>= 1 ns) apart, and then their ns differ.
// (Not covered: a switch's own frames, whose source is the switch.) With
// lines of several rates (a star's ports) two sources' frames may fall in
// one ns at different ps: one process orders its capture by ns too
// (PcapWriter::write_ordered), so it is this merge's order.
//
// Transaction log (merge_logs). TxLog (model/trace/txlog.h) groups records
// by the simulated time of writing (its `clock`, sc_time_stamp in a run),
// not by their t_ps: a received frame's record carries its first byte's
// time, earlier than its writing; a sent frame's record the time its first
// byte leaves, 640 ps after its writing at 100 Gb/s. In a group, the
// records without a node (steps, and a line's "fault" records) stay where
// they were and split the group into runs; each run is stably sorted by
// the record's node, then by its text. The merge:
//   1. Instants. A part may carry instant marks, lines {"instant_ps":T}
//      (T in ps): every record after one up to the next was written at T.
//      TxLog does not write them yet. The change proposed for split runs:
//      a flag (`mark_instants`, off by default, on in node processes) with
//      which TxLog::begin opens each group with such a line, a record
//      without a node, so that close_group leaves it first in its group
//      (about a dozen lines; single-process logs unchanged). Without marks
//      (and before the first) a record's instant is its own t_ps, which is
//      its writing time for every kind but frame: a part without marks
//      merges exactly only when it has no frame records. Marks never reach
//      the output; in a part they must not go back in time.
//   2. Steps. Step records ({"t_ps":N,"node":"","kind":"step",...}) must
//      be the same sequence, text for text, in every part; they separate
//      the output as they separate each part. A difference is an error
//      naming both files and lines.
//   3. Groups. Between two steps, the records of all parts are taken
//      instant by instant (the smallest instant any part has next first);
//      one instant's records of every part are concatenated in part order
//      (each part's in its file order) and ordered as TxLog's close_group
//      orders a group: records without an order node (order_node in
//      model/trace/txlog.h: steps and instant marks) stay in place and
//      split runs, each run stably sorted by node, then by text. A "fault"
//      record (node "") is ordered under the sending end of its link, the
//      node whose part has it, after that node's own records. Steps being the same in every part, that is
//      exactly the sort of the union: what one process wrote, whatever its
//      kernel's process order.
//   TxLog also closes a group when its buffer holds nothing else and
// reaches 256 KiB (kDrainBytes): an instant with that much logging (over
// ~1,500 records at one ps) is one sorted group in the merge but may be
// two in one process's file.
//
// Errors: std::runtime_error naming the file (and line, or frame and byte
// offset) involved: a missing or unreadable part, a truncated pcap record
// or log line (no final newline), a line that is not a record, parts whose
// pcap headers differ, a part out of time order, step records that differ,
// an output that cannot be written or is one of the parts.
#pragma once
#include <string>
#include <vector>

namespace ernic {

// The single-process wire pcap from the node processes' parts (in the
// scenario's node order) into `out` (created or truncated).
void merge_wire_pcaps(const std::vector<std::string>& parts, const std::string& out);

// The single-process transaction log from the node processes' logs (in the
// scenario's node order) into `out` (created or truncated).
void merge_logs(const std::vector<std::string>& parts, const std::string& out);

}  // namespace ernic
