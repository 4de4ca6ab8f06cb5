// model/trace: the GTKWave save file (.gtkw) written next to every VCD
// (`--vcd out.vcd` -> `out.vcd.gtkw`): `gtkwave out.vcd.gtkw` opens the VCD
// it names ([dumpfile], the path as given to --vcd) with every signal shown,
// grouped by block: one GTKWave group per scope that holds signals, named by
// the scope under top ("A.cmac", "A.ernic.qp2", "link.A_to_B"), in the
// VCD's order; the per-QP groups start closed. Scalars show in binary,
// vectors in hex. Comment lines ([*]) say how to convert to FST (vcd2fst)
// and load that instead, and, for a windowed dump, the trigger, its window
// and its hits; the primary marker sits on the first hit.
// Format: GTKWave 3.3 save files (group begin/end flags 0x800000/0x1000000,
// closed 0x400000, blank 0x200; binary 0x8, hex 0x2, right-justify 0x20).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/trace/vcd.h"

namespace ernic::trace {

struct GtkwInfo {
  std::string vcd_path;            // as given to --vcd
  std::vector<std::string> notes;  // extra [*] comment lines (trigger, window, hits)
  std::vector<uint64_t> hits_ps;   // marker on the first; timestart at the first window
  uint64_t timestart_ps = 0;
};

// The text of the save file.
std::string gtkw_text(const std::vector<MergedVar>& vars, const GtkwInfo& info);
// Writes it to path; throws std::runtime_error naming the file.
void write_gtkw(const std::string& path, const std::vector<MergedVar>& vars, const GtkwInfo& info);

}  // namespace ernic::trace
