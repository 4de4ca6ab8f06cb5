// tools: the datapath stimulus's port table and the output beats (rtl_stim.h).
#include "tools/rtl_stim.h"

namespace ernic::rtl_stim {

uint64_t read_input(const RoceDatapathPorts& p, int i) {
  if (i >= 4 && i <= 15) return p.s_desc_w[i - 4].read();
  if (i >= 17 && i <= 24) return p.s_pay_tdata_w[i - 17].read();
  if (i >= 30 && i <= 37) return p.s_cmac_tdata_w[i - 30].read();
  switch (i) {
    case 0: return p.core_rst_n.read();
    case 1: return p.cfg_udp_sport.read();
    case 2: return p.seed.read();
    case 3: return p.s_desc_valid.read();
    case 16: return p.s_pay_tvalid.read();
    case 25: return p.s_pay_tkeep.read();
    case 26: return p.s_pay_tlast.read();
    case 27: return p.cmac_rst_n.read();
    case 28: return p.m_cmac_tready.read();
    case 29: return p.s_cmac_tvalid.read();
    case 38: return p.s_cmac_tkeep.read();
    case 39: return p.s_cmac_tlast.read();
    case 40: return p.s_cmac_tuser.read();
    default: return 0;
  }
}

void write_input(RoceDatapathPorts& p, int i, uint64_t v) {
  if (i >= 4 && i <= 15) return p.s_desc_w[i - 4].write(v);
  if (i >= 17 && i <= 24) return p.s_pay_tdata_w[i - 17].write(v);
  if (i >= 30 && i <= 37) return p.s_cmac_tdata_w[i - 30].write(v);
  switch (i) {
    case 0: return p.core_rst_n.write(v & 1);
    case 1: return p.cfg_udp_sport.write(uint16_t(v & 0xFFFF));
    case 2: return p.seed.write(uint32_t(v));
    case 3: return p.s_desc_valid.write(v & 1);
    case 16: return p.s_pay_tvalid.write(v & 1);
    case 25: return p.s_pay_tkeep.write(v);
    case 26: return p.s_pay_tlast.write(v & 1);
    case 27: return p.cmac_rst_n.write(v & 1);
    case 28: return p.m_cmac_tready.write(v & 1);
    case 29: return p.s_cmac_tvalid.write(v & 1);
    case 38: return p.s_cmac_tkeep.write(v);
    case 39: return p.s_cmac_tlast.write(v & 1);
    case 40: return p.s_cmac_tuser.write(v & 1);
    default: return;
  }
}

namespace {

// A data word with the bytes past keep as zero (word wi holds keep bits 8wi..8wi+7).
uint64_t masked(uint64_t w, uint64_t keep, int wi) {
  const uint64_t k = (keep >> (8 * wi)) & 0xFF;
  uint64_t m = 0;
  for (int b = 0; b < 8; ++b)
    if (k >> b & 1) m |= uint64_t(0xFF) << (8 * b);
  return w & m;
}

void stream(std::FILE* f, const Port<uint64_t>* w, uint64_t keep) {
  for (int i = 0; i < 8; ++i) std::fprintf(f, " %016llx", (unsigned long long)masked(w[i].read(), keep, i));
  std::fputc('\n', f);
}

}  // namespace

void write_beats(std::FILE* f, uint64_t line, int domains, const RoceDatapathPorts& p) {
  const unsigned long long l = line;
  if (domains & 1) {
    if (p.s_desc_valid.read()) std::fprintf(f, "%llu R %d\n", l, int(p.s_desc_ready.read()));
    if (p.s_pay_tvalid.read()) std::fprintf(f, "%llu Q %d\n", l, int(p.s_pay_tready.read()));
    if (p.m_desc_valid.read()) {
      std::fprintf(f, "%llu D", l);
      for (int i = 0; i < 16; ++i) std::fprintf(f, " %016llx", (unsigned long long)p.m_desc_w[i].read());
      std::fputc('\n', f);
    }
    if (p.m_pay_tvalid.read()) {
      const uint64_t k = p.m_pay_tkeep.read();
      std::fprintf(f, "%llu P %016llx %d", l, (unsigned long long)k, int(p.m_pay_tlast.read()));
      stream(f, p.m_pay_tdata_w, k);
    }
    if (p.m_byp_tvalid.read()) {
      const uint64_t k = p.m_byp_tkeep.read();
      std::fprintf(f, "%llu B %016llx %d", l, (unsigned long long)k, int(p.m_byp_tlast.read()));
      stream(f, p.m_byp_tdata_w, k);
    }
  }
  if (domains & 2) {
    if (p.m_cmac_tvalid.read()) {
      const uint64_t k = p.m_cmac_tkeep.read();
      std::fprintf(f, "%llu T %d %016llx %d", l, int(p.m_cmac_tready.read()), (unsigned long long)k,
                   int(p.m_cmac_tlast.read()));
      stream(f, p.m_cmac_tdata_w, k);
    }
    if (p.s_cmac_tvalid.read()) std::fprintf(f, "%llu S %d\n", l, int(p.s_cmac_tready.read()));
  }
}

void write_end(std::FILE* f, uint64_t lines, const RoceDatapathPorts& p) {
  std::fprintf(f, "end %llu %016llx\n", (unsigned long long)lines, (unsigned long long)p.meta_events.read());
}

}  // namespace ernic::rtl_stim
