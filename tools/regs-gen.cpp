// regs-gen: turns the register description (model/regs/ernic_regs.yaml, the
// one source) into the files that use it:
//   ernic_regs.def   C++ X-macro table included by model/regs/regs.{h,cpp}
//   REGISTERS.md     documentation table
//   ernic_regs.vh    Verilog macros (offsets, layout bases, field positions
//                    and masks, field values)
// Usage: regs-gen YAML OUT_DEF OUT_MD OUT_VH
// A field may list its named values (`values: [{ name, value, doc }]`, e.g.
// the PMTU codes): they become a C++ enum class REG_FIELD and Verilog macros.
// It checks the description: unique register names, 4-byte aligned offsets
// unique within a block, access types, reset values, fields inside 32 bits
// and not overlapping within a layout, values unique and inside their
// field. Exit 0, or 2 with the file, line and key of the problem.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Value {
  std::string name, doc;
  uint32_t value = 0;
};
struct Field {
  std::string name, doc;
  uint32_t lsb = 0, width = 0, layouts = 3;  // bit 0: 3.1, bit 1: 4.x
  std::vector<Value> values;
};
struct Reg {
  std::string name, block, access, doc;
  uint32_t offset = 0, reset = 0;
  bool qp1 = true;
  std::vector<Field> fields;
};

[[noreturn]] void die(const std::string& file, const YAML::Node& n, const std::string& what) {
  std::fprintf(stderr, "regs-gen: %s:%d:%d: %s\n", file.c_str(), n.Mark().line + 1, n.Mark().column + 1, what.c_str());
  std::exit(2);
}

uint32_t u32(const std::string& file, const YAML::Node& n, const std::string& key) {
  if (!n[key] || !n[key].IsScalar()) die(file, n, "missing or non-scalar '" + key + "'");
  try {
    size_t pos = 0;
    const std::string s = n[key].Scalar();
    const unsigned long long v = std::stoull(s, &pos, 0);
    if (pos != s.size() || v > 0xFFFFFFFFull) throw std::out_of_range(s);
    return uint32_t(v);
  } catch (const std::exception&) {
    die(file, n[key], "'" + key + "' is not a 32-bit number");
  }
}

std::string str(const std::string& file, const YAML::Node& n, const std::string& key) {
  if (!n[key] || !n[key].IsScalar()) die(file, n, "missing or non-scalar '" + key + "'");
  return n[key].Scalar();
}

std::string cstr(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o + "\"";
}

std::string bits(const Field& f) {
  return f.width == 1 ? fmt::format("[{}]", f.lsb) : fmt::format("[{}:{}]", f.lsb + f.width - 1, f.lsb);
}

std::string layouts_text(uint32_t m) { return m == 3 ? "" : m == 1 ? " (3.x)" : " (4.x)"; }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: regs-gen YAML OUT_DEF OUT_MD OUT_VH\n");
    return 2;
  }
  const std::string file = argv[1];
  YAML::Node root;
  try {
    root = YAML::LoadFile(file);
  } catch (const YAML::Exception& e) {
    std::fprintf(stderr, "regs-gen: %s: %s\n", file.c_str(), e.what());
    return 2;
  }
  const YAML::Node layouts = root["layouts"];
  if (!layouts || !layouts.IsMap()) die(file, root, "missing 'layouts'");
  for (const auto& l : layouts)
    if (l.first.Scalar() != "3.1" && l.first.Scalar() != "4.x") die(file, l.first, "layouts are \"3.1\" and \"4.x\"");
  std::vector<Reg> regs;
  std::set<std::string> names;
  std::map<std::string, std::set<uint32_t>> offsets;
  for (const auto& rn : root["registers"]) {
    Reg r;
    r.name = str(file, rn, "name");
    r.block = str(file, rn, "block");
    r.access = str(file, rn, "access");
    r.doc = str(file, rn, "doc");
    r.offset = u32(file, rn, "offset");
    r.reset = u32(file, rn, "reset");
    if (rn["qp1"]) r.qp1 = rn["qp1"].as<bool>();
    if (!names.insert(r.name).second) die(file, rn["name"], "register '" + r.name + "' described twice");
    if (r.block != "global" && r.block != "qp" && r.block != "mr") die(file, rn["block"], "block must be global, qp or mr");
    if (r.access != "RW" && r.access != "RO" && r.access != "W1C" && r.access != "ROSW")
      die(file, rn["access"], "access must be RW, RO, W1C or ROSW");
    if (r.offset % 4) die(file, rn["offset"], "offset not 4-byte aligned");
    if (!offsets[r.block].insert(r.offset).second) die(file, rn["offset"], "offset used twice in this block");
    uint64_t used[2] = {0, 0};
    for (const auto& fn : rn["fields"]) {
      Field f;
      f.name = str(file, fn, "name");
      f.doc = str(file, fn, "doc");
      f.lsb = u32(file, fn, "lsb");
      f.width = u32(file, fn, "width");
      if (fn["layouts"]) {
        f.layouts = 0;
        for (const auto& l : fn["layouts"]) {
          if (l.Scalar() == "3.1") f.layouts |= 1;
          else if (l.Scalar() == "4.x") f.layouts |= 2;
          else die(file, l, "layout must be \"3.1\" or \"4.x\"");
        }
      }
      if (f.width == 0 || f.lsb + f.width > 32) die(file, fn, "field " + f.name + " does not fit in 32 bits");
      const uint64_t mask = ((uint64_t(1) << f.width) - 1) << f.lsb;
      for (int l = 0; l < 2; ++l)
        if (f.layouts & (1u << l)) {
          if (used[l] & mask) die(file, fn, "field " + f.name + " overlaps another field of " + r.name);
          used[l] |= mask;
        }
      std::set<std::string> vnames;
      std::set<uint32_t> vvals;
      for (const auto& vn : fn["values"]) {
        Value v;
        v.name = str(file, vn, "name");
        v.doc = str(file, vn, "doc");
        v.value = u32(file, vn, "value");
        if (!vnames.insert(v.name).second) die(file, vn["name"], "value name '" + v.name + "' used twice in " + f.name);
        if (!vvals.insert(v.value).second) die(file, vn["value"], "value used twice in " + f.name);
        if (f.width < 32 && v.value >> f.width) die(file, vn["value"], "value does not fit in field " + f.name);
        f.values.push_back(v);
      }
      r.fields.push_back(f);
    }
    regs.push_back(r);
  }

  // --- C++ X-macro table ------------------------------------------------
  std::ostringstream def;
  def << "// GENERATED by tools/regs-gen from model/regs/ernic_regs.yaml: do not edit.\n"
         "//   ERNIC_GREG(name, offset_in_GCSR, access, reset, \"summary\")\n"
         "//   ERNIC_QREG(name, offset_in_QP_block, access, reset, qp1_exists, \"summary\")\n"
         "//   ERNIC_MREG(name, offset_in_MR_entry, access, reset, \"summary\")\n"
         "//   ERNIC_FIELD(register, field, lsb, width, layouts, \"summary\")  layouts: 1 3.1, 2 4.x, 3 both\n"
         "//   ERNIC_ENUM_BEGIN(register, field) ERNIC_ENUM_VALUE(register, field, name, value, \"summary\")...\n"
         "//   ERNIC_ENUM_END(register, field)\n"
         "//   ERNIC_LAYOUT(tag, \"name\", gcsr, qcsr, mr, window, max_qps, int_banks, rq_int_bank, cq_int_bank, "
         "cnp_bank)\n\n";
  for (const auto& r : regs) {
    if (r.block == "global")
      def << fmt::format("ERNIC_GREG({}, 0x{:03X}, {}, 0x{:08X}, {})\n", r.name, r.offset, r.access, r.reset, cstr(r.doc));
    else if (r.block == "qp")
      def << fmt::format("ERNIC_QREG({}, 0x{:02X}, {}, 0x{:08X}, {}, {})\n", r.name, r.offset, r.access, r.reset,
                         r.qp1 ? "true" : "false", cstr(r.doc));
    else
      def << fmt::format("ERNIC_MREG({}, 0x{:02X}, {}, 0x{:08X}, {})\n", r.name, r.offset, r.access, r.reset, cstr(r.doc));
  }
  def << "\n#ifdef ERNIC_LAYOUT\n";
  for (const auto& l : layouts) {
    const YAML::Node& n = l.second;
    def << fmt::format("ERNIC_LAYOUT({}, {}, 0x{:X}, 0x{:X}, 0x{:X}, 0x{:X}, {}, {}, 0x{:X}, 0x{:X}, 0x{:X})\n",
                       l.first.Scalar() == "3.1" ? "V31" : "V4X", cstr(l.first.Scalar()), u32(file, n, "gcsr"),
                       u32(file, n, "qcsr"), u32(file, n, "mr"), u32(file, n, "window"), u32(file, n, "max_qps"),
                       u32(file, n, "int_banks"), u32(file, n, "rq_int_bank"), u32(file, n, "cq_int_bank"),
                       u32(file, n, "cnp_bank"));
  }
  def << "#endif\n";
  def << "\n#ifdef ERNIC_FIELD\n";
  for (const auto& r : regs)
    for (const auto& f : r.fields)
      def << fmt::format("ERNIC_FIELD({}, {}, {}, {}, {}, {})\n", r.name, f.name, f.lsb, f.width, f.layouts, cstr(f.doc));
  def << "#endif\n\n#ifdef ERNIC_ENUM_VALUE\n";
  for (const auto& r : regs)
    for (const auto& f : r.fields) {
      if (f.values.empty()) continue;
      def << fmt::format("ERNIC_ENUM_BEGIN({}, {})\n", r.name, f.name);
      for (const auto& v : f.values)
        def << fmt::format("ERNIC_ENUM_VALUE({}, {}, {}, {}, {})\n", r.name, f.name, v.name, v.value, cstr(v.doc));
      def << fmt::format("ERNIC_ENUM_END({}, {})\n", r.name, f.name);
    }
  def << "#endif\n";

  // --- documentation ----------------------------------------------------
  std::ostringstream md;
  md << "# ERNIC registers\n\nGenerated by `tools/regs-gen` from `model/regs/ernic_regs.yaml` (PG332 v3.1 and the\n"
        "4.x changes): do not edit. Addresses are the block base of the layout plus the offset.\n\n| layout |"
        " GCSR base | QCSR base (QP1) | MR table | window |\n|---|---|---|---|---|\n";
  for (const auto& l : layouts)
    md << fmt::format("| {} | 0x{:X} | 0x{:X} | 0x{:X} | 0x{:X} |\n", l.first.Scalar(), u32(file, l.second, "gcsr"),
                      u32(file, l.second, "qcsr"), u32(file, l.second, "mr"), u32(file, l.second, "window"));
  for (const char* blk : {"global", "qp", "mr"}) {
    md << fmt::format("\n## {}\n\n| register | offset | access | reset | fields / meaning |\n|---|---|---|---|---|\n",
                      std::string(blk) == "global" ? "Global registers (GCSR)"
                      : std::string(blk) == "qp"   ? "Per-QP registers (QCSR + (qpn-1) * 0x100)"
                                                   : "MR table (entry * 0x100)");
    for (const auto& r : regs) {
      if (r.block != blk) continue;
      std::string fl;
      for (const auto& f : r.fields) {
        fl += fmt::format("{}{} {}{}", fl.empty() ? "" : "; ", bits(f), f.name, layouts_text(f.layouts));
        std::string vl;
        for (const auto& v : f.values) vl += fmt::format("{}{} {}", vl.empty() ? "" : ", ", v.value, v.name);
        if (!vl.empty()) fl += " (" + vl + ")";
      }
      md << fmt::format("| {}{} | 0x{:03X} | {} | 0x{:08X} | {}{} |\n", r.name, r.qp1 ? "" : " (not QP1)", r.offset,
                        r.access, r.reset, r.doc, fl.empty() ? "" : " — " + fl);
    }
  }

  // --- Verilog ----------------------------------------------------------
  std::ostringstream vh;
  vh << "// GENERATED by tools/regs-gen from model/regs/ernic_regs.yaml: do not edit.\n"
        "// Offsets inside the ERNIC register blocks and the layouts' block bases;\n"
        "// fields: ERNIC_F_<reg>_<field>_{LSB,WIDTH,MASK} (a field placed differently\n"
        "// in the 4.x layout: _V31_ / _V4X_ after the field name); named values:\n"
        "// ERNIC_V_<reg>_<field>_<name>.\n"
        "`ifndef ERNIC_REGS_VH\n`define ERNIC_REGS_VH\n";
  for (const auto& l : layouts) {
    const std::string tag = l.first.Scalar() == "3.1" ? "V31" : "V4X";
    vh << fmt::format("`define ERNIC_{}_GCSR_BASE 32'h{:X}\n", tag, u32(file, l.second, "gcsr"));
    vh << fmt::format("`define ERNIC_{}_QCSR_BASE 32'h{:X}\n", tag, u32(file, l.second, "qcsr"));
  }
  for (const auto& r : regs)
    vh << fmt::format("`define ERNIC_{}_{} 32'h{:X}\n",
                      r.block == "global" ? "G" : r.block == "qp" ? "Q" : "M", r.name, r.offset);
  for (const auto& r : regs)
    for (const auto& f : r.fields) {
      const std::string tag = f.layouts == 3 ? "" : f.layouts == 1 ? "_V31" : "_V4X";
      const uint32_t mask = uint32_t(((uint64_t(1) << f.width) - 1) << f.lsb);
      vh << fmt::format("`define ERNIC_F_{}_{}{}_LSB {}\n", r.name, f.name, tag, f.lsb);
      vh << fmt::format("`define ERNIC_F_{}_{}{}_WIDTH {}\n", r.name, f.name, tag, f.width);
      vh << fmt::format("`define ERNIC_F_{}_{}{}_MASK 32'h{:X}\n", r.name, f.name, tag, mask);
      for (const auto& v : f.values)
        vh << fmt::format("`define ERNIC_V_{}_{}_{} {}'d{}\n", r.name, f.name, v.name, f.width, v.value);
    }
  vh << "`endif\n";

  const std::pair<const char*, std::string> outs[] = {{argv[2], def.str()}, {argv[3], md.str()}, {argv[4], vh.str()}};
  for (const auto& [path, text] : outs) {
    std::ofstream f(path, std::ios::binary);
    f << text;
    if (!f) {
      std::fprintf(stderr, "regs-gen: cannot write %s\n", path);
      return 2;
    }
  }
  return 0;
}
