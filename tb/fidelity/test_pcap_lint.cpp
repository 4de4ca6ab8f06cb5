// tb/fidelity: `ernic-sim pcap lint` on the five real captures (clean) and
// on copies this test mutates (frames dropped, duplicated, swapped,
// corrupted): exactly the planted findings, by frame number and rule. Also
// pcapng and VLAN-tagged / padded copies (the same verdict), a capture
// that starts mid-connection, and unusable input (exit 2 naming the file).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "model/roce/icrc.h"
#include "model/roce/packet.h"

namespace {

const std::string kData = std::string(ERNIC_TEST_DATA) + "/captures/";
const std::string kSim = ERNIC_SIM;

struct Rec {
  uint32_t sec = 0, frac = 0;
  std::vector<uint8_t> data;
};
struct Pcap {
  std::vector<uint8_t> header;  // the 24-byte global header
  std::vector<Rec> recs;
};

uint32_t le32(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }
void put32(std::vector<uint8_t>& o, uint32_t v) {
  for (int k = 0; k < 4; ++k) o.push_back(uint8_t(v >> (8 * k)));
}
void put16(std::vector<uint8_t>& o, uint16_t v) {
  o.push_back(uint8_t(v));
  o.push_back(uint8_t(v >> 8));
}

// Classic little-endian pcap (the captures' format).
Pcap read_pcap(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<uint8_t> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  Pcap p;
  if (b.size() < 24) return p;
  p.header.assign(b.begin(), b.begin() + 24);
  for (size_t o = 24; o + 16 <= b.size();) {
    Rec r;
    r.sec = le32(&b[o]);
    r.frac = le32(&b[o + 4]);
    const uint32_t cl = le32(&b[o + 8]);
    r.data.assign(b.begin() + long(o + 16), b.begin() + long(o + 16 + cl));
    p.recs.push_back(std::move(r));
    o += 16 + cl;
  }
  return p;
}

std::string tmp_path(const std::string& name) {
  const char* d = std::getenv("TMPDIR");
  return std::string(d ? d : "/tmp") + "/ernic_fidelity_" + std::to_string(getpid()) + "_" + name;
}

std::string write_pcap(const Pcap& p, const std::string& name) {
  std::vector<uint8_t> o = p.header;
  for (const Rec& r : p.recs) {
    put32(o, r.sec);
    put32(o, r.frac);
    put32(o, uint32_t(r.data.size()));
    put32(o, uint32_t(r.data.size()));
    o.insert(o.end(), r.data.begin(), r.data.end());
  }
  const std::string path = tmp_path(name);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(o.data()), std::streamsize(o.size()));
  return path;
}

// The same frames as pcapng: SHB, one IDB (Ethernet, microseconds), EPBs.
std::string write_pcapng(const Pcap& p, const std::string& name) {
  std::vector<uint8_t> o;
  put32(o, 0x0A0D0D0A);
  put32(o, 28);
  put32(o, 0x1A2B3C4D);
  put16(o, 1);
  put16(o, 0);
  put32(o, 0xFFFFFFFF);
  put32(o, 0xFFFFFFFF);
  put32(o, 28);
  put32(o, 1);
  put32(o, 20);
  put16(o, 1);  // LINKTYPE_ETHERNET
  put16(o, 0);
  put32(o, 65535);
  put32(o, 20);
  for (const Rec& r : p.recs) {
    const uint32_t padded = uint32_t((r.data.size() + 3) & ~size_t(3));
    const uint64_t us = uint64_t(r.sec) * 1000000 + r.frac;  // the captures are microsecond pcaps
    put32(o, 6);
    put32(o, 32 + padded);
    put32(o, 0);
    put32(o, uint32_t(us >> 32));
    put32(o, uint32_t(us));
    put32(o, uint32_t(r.data.size()));
    put32(o, uint32_t(r.data.size()));
    o.insert(o.end(), r.data.begin(), r.data.end());
    o.resize(o.size() + (padded - r.data.size()), 0);
    put32(o, 32 + padded);
  }
  const std::string path = tmp_path(name);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(o.data()), std::streamsize(o.size()));
  return path;
}

struct Result {
  int exit_code = -1;
  std::string out, err;
  std::vector<std::pair<int, std::string>> findings;  // (frame, rule), in order
};

Result run(const std::string& args) {
  Result r;
  const std::string errf = tmp_path("stderr.txt");
  FILE* p = popen((kSim + " " + args + " 2>" + errf).c_str(), "r");
  char buf[4096];
  while (p && std::fgets(buf, sizeof buf, p)) r.out += buf;
  const int st = p ? pclose(p) : -1;
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream ef(errf);
  r.err.assign((std::istreambuf_iterator<char>(ef)), std::istreambuf_iterator<char>());
  std::remove(errf.c_str());
  static const std::regex line(R"(^frame (\d+) at [0-9.]+ s: ([a-z_]+): )");
  std::istringstream is(r.out);
  for (std::string l; std::getline(is, l);) {
    std::smatch m;
    if (std::regex_search(l, m, line)) r.findings.emplace_back(std::stoi(m[1]), m[2]);
  }
  return r;
}

using Findings = std::vector<std::pair<int, std::string>>;

const char* const kCaptures[] = {"pingpong_rc.pcap", "rdma_write_bw.pcap", "rdma_read_bw.pcap", "rdma_send_bw.pcap",
                                 "rdma_write_lat.pcap"};

TEST(PcapLint, RealCapturesAreClean) {
  for (const char* c : kCaptures) {
    const Result r = run("pcap lint " + kData + c);
    EXPECT_EQ(r.exit_code, 0) << c << "\n" << r.out << r.err;
    EXPECT_TRUE(r.findings.empty()) << c << "\n" << r.out;
    EXPECT_NE(r.out.find("20 RoCE"), std::string::npos) << c << "\n" << r.out;
    EXPECT_NE(r.out.find("0 finding(s): clean"), std::string::npos) << c << "\n" << r.out;
    // One summary line per flow (each capture: two QPs' traffic).
    size_t flows = 0;
    for (size_t at = 0; (at = r.out.find("\nflow ", at)) != std::string::npos; ++at) ++flows;
    if (r.out.rfind("flow ", 0) == 0) ++flows;
    EXPECT_EQ(flows, 2u) << c << "\n" << r.out;
  }
}

// A planted fault: the mutation and exactly what lint must report
// (frame numbers in the mutated capture).
struct Plant {
  const char* name;
  const char* capture;
  void (*mutate)(Pcap&);
  Findings want;
  const char* why;
};

void drop(Pcap& p, int n) { p.recs.erase(p.recs.begin() + (n - 1)); }
void copy_after(Pcap& p, int n, int after) { p.recs.insert(p.recs.begin() + after, p.recs[size_t(n - 1)]); }
void swap_frames(Pcap& p, int a, int b) { std::swap(p.recs[size_t(a - 1)], p.recs[size_t(b - 1)]); }
void flip(Pcap& p, int n, size_t byte) { p.recs[size_t(n - 1)].data.at(byte) ^= 0xFF; }

const Plant kPlants[] = {
    {"drop_write_middle", "rdma_write_bw.pcap", [](Pcap& p) { drop(p, 23); }, {{23, "psn_sequence"}},
     "WRITE_MIDDLE 0x533a30 removed: the WRITE_LAST after it skips a PSN"},
    {"corrupt_payload", "rdma_write_bw.pcap", [](Pcap& p) { flip(p, 23, 200); }, {{23, "icrc"}},
     "a payload byte of frame 23 flipped: its ICRC fails, nothing else changes"},
    {"corrupt_ttl", "rdma_write_bw.pcap", [](Pcap& p) { flip(p, 22, 22); }, {{22, "ip_checksum"}},
     "the TTL of frame 22 flipped: the IPv4 checksum fails; the ICRC masks the TTL, so it holds"},
    {"corrupt_ack", "rdma_write_bw.pcap", [](Pcap& p) { flip(p, 25, 58); }, {{25, "icrc"}},
     "the ACK's ICRC byte flipped"},
    {"drop_read_resp_middle", "rdma_read_bw.pcap", [](Pcap& p) { drop(p, 28); }, {{28, "read_resp"}},
     "READ_RESP_MIDDLE removed: the LAST arrives where the MIDDLE was due"},
    {"swap_read_resp", "rdma_read_bw.pcap", [](Pcap& p) { swap_frames(p, 27, 28); },
     {{27, "read_resp"}, {29, "read_resp"}},
     "MIDDLE before FIRST: the MIDDLE has no FIRST, the LAST follows the FIRST directly"},
    {"duplicate_read_after_answer", "rdma_read_bw.pcap", [](Pcap& p) { copy_after(p, 22, 41); },
     {{42, "psn_sequence"}}, "the first READ sent again after every response: a PSN already acknowledged"},
    {"duplicate_send_after_ack", "pingpong_rc.pcap", [](Pcap& p) { copy_after(p, 12, 13); }, {{14, "psn_sequence"}},
     "a SEND_ONLY sent again after its ACK"},
    {"drop_send", "pingpong_rc.pcap", [](Pcap& p) { drop(p, 16); },
     {{16, "ack_psn"}, {16, "msn"}, {19, "psn_sequence"}},
     "SEND_ONLY 0x59dfd8 removed: its ACK acknowledges a PSN never sent (and an MSN for it), the next SEND skips it"},
    {"drop_send_middle", "rdma_send_bw.pcap", [](Pcap& p) { drop(p, 25); }, {{25, "psn_sequence"}},
     "SEND_MIDDLE removed"},
    {"duplicate_send_last", "rdma_send_bw.pcap", [](Pcap& p) { copy_after(p, 26, 27); },
     {{28, "psn_sequence"}, {28, "opcode_sequence"}},
     "SEND_LAST sent again after its ACK: an acknowledged PSN, and a LAST with no message open"},
    {"swap_writes", "rdma_write_lat.pcap", [](Pcap& p) { swap_frames(p, 23, 27); }, {{27, "psn_sequence"}},
     "two WRITE_ONLYs of one QP swapped: the capture now starts that QP at the later PSN (mid-connection), the "
     "earlier one comes back as a go-back to an acknowledged PSN"},
    {"dropped_ack_is_legal", "rdma_write_lat.pcap", [](Pcap& p) { drop(p, 24); }, {},
     "an ACK removed: the next ACK covers it (coalescing is legal)"},
    {"swap_across_qps_is_legal", "rdma_write_lat.pcap", [](Pcap& p) { swap_frames(p, 23, 25); }, {},
     "frames of two different QPs swapped: each QP's sequence is intact"},
};

// gtest prints a parameter with this (instead of its bytes).
void PrintTo(const Plant& p, std::ostream* os) { *os << p.name; }

class Planted : public ::testing::TestWithParam<Plant> {};

TEST_P(Planted, ExactlyThePlantedFindings) {
  const Plant& pl = GetParam();
  Pcap p = read_pcap(kData + pl.capture);
  ASSERT_FALSE(p.recs.empty());
  pl.mutate(p);
  const std::string path = write_pcap(p, std::string(pl.name) + ".pcap");
  const Result r = run("pcap lint " + path);
  EXPECT_EQ(r.findings, pl.want) << pl.why << "\n" << r.out << r.err;
  EXPECT_EQ(r.exit_code, pl.want.empty() ? 0 : 1) << r.out << r.err;
  std::remove(path.c_str());
}

INSTANTIATE_TEST_SUITE_P(Mutations, Planted, ::testing::ValuesIn(kPlants),
                         [](const ::testing::TestParamInfo<Plant>& i) { return std::string(i.param.name); });

// A capture that starts mid-connection (the first READ request cut off):
// clean by default; with --from-start its answers are findings.
TEST(PcapLint, StartsMidConnection) {
  Pcap p = read_pcap(kData + "rdma_read_bw.pcap");
  drop(p, 22);
  const std::string path = write_pcap(p, "mid.pcap");
  const Result mid = run("pcap lint " + path);
  EXPECT_EQ(mid.exit_code, 0) << mid.out;
  EXPECT_TRUE(mid.findings.empty()) << mid.out;
  const Result strict = run("pcap lint --from-start " + path);
  EXPECT_EQ(strict.exit_code, 1) << strict.out;
  EXPECT_EQ(strict.findings, (Findings{{26, "msn"}, {26, "read_resp"}, {27, "read_resp"}, {28, "read_resp"}}))
      << strict.out;
  std::remove(path.c_str());
}

// pcapng, 802.1Q tags and Ethernet padding: the same verdicts.
TEST(PcapLint, PcapngVlanAndPaddingGiveTheSameVerdict) {
  for (const char* c : kCaptures) {
    const Pcap p = read_pcap(kData + c);
    const std::string ng = write_pcapng(p, "ng.pcapng");
    const Result r = run("pcap lint " + ng);
    EXPECT_EQ(r.exit_code, 0) << c << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("20 RoCE"), std::string::npos) << c << "\n" << r.out;
    std::remove(ng.c_str());
    Pcap v = p;
    for (Rec& rec : v.recs) {
      const uint8_t tag[4] = {0x81, 0x00, 0x00, 0x64};  // VLAN 100
      rec.data.insert(rec.data.begin() + 12, tag, tag + 4);
      rec.data.insert(rec.data.end(), 4, 0);  // and 4 trailing bytes
    }
    const std::string vp = write_pcap(v, "vlan.pcap");
    const Result rv = run("pcap lint " + vp);
    EXPECT_EQ(rv.exit_code, 0) << c << "\n" << rv.out << rv.err;
    EXPECT_NE(rv.out.find("20 RoCE"), std::string::npos) << c << "\n" << rv.out;
    const Result dv = run("pcap decode " + vp);
    EXPECT_NE(dv.out.find("RoCEv2/IPv4 vlan=100 "), std::string::npos) << dv.out;
    EXPECT_NE(dv.out.find(" trailing=4"), std::string::npos) << dv.out;
    EXPECT_EQ(dv.out.find("BAD"), std::string::npos) << dv.out;
    std::remove(vp.c_str());
  }
  // A planted fault is found through the tags too.
  Pcap v = read_pcap(kData + "rdma_write_bw.pcap");
  drop(v, 23);
  for (Rec& rec : v.recs) {
    const uint8_t tag[4] = {0x81, 0x00, 0x20, 0x07};
    rec.data.insert(rec.data.begin() + 12, tag, tag + 4);
  }
  const std::string vp = write_pcap(v, "vlan_drop.pcap");
  EXPECT_EQ(run("pcap lint " + vp).findings, (Findings{{23, "psn_sequence"}}));
  std::remove(vp.c_str());
}

// Linux cooked (tcpdump -i any) and ERF (Endace) captures of the same
// frames: the same verdicts.
TEST(PcapLint, LinuxCookedAndErfCaptures) {
  const Pcap p = read_pcap(kData + "rdma_write_bw.pcap");
  Pcap sll = p, erf = p;
  sll.header[20] = 113;  // LINKTYPE_LINUX_SLL
  erf.header[20] = 197;  // LINKTYPE_ERF
  for (size_t i = 0; i < p.recs.size(); ++i) {
    const std::vector<uint8_t>& e = p.recs[i].data;
    std::vector<uint8_t> h = {0, 0, 0, 1, 0, 6};  // to us, ARPHRD_ETHER, 6-byte address
    h.insert(h.end(), e.begin() + 6, e.begin() + 12);
    h.insert(h.end(), {0, 0, e[12], e[13]});
    h.insert(h.end(), e.begin() + 14, e.end());
    sll.recs[i].data = h;
    std::vector<uint8_t> r(8, 0);  // timestamp (not read)
    const uint16_t rlen = uint16_t(16 + 2 + e.size());
    r.insert(r.end(), {2, 0x04, uint8_t(rlen >> 8), uint8_t(rlen), 0, 0, uint8_t(e.size() >> 8), uint8_t(e.size())});
    r.insert(r.end(), {0, 0});  // ETH: offset, pad
    r.insert(r.end(), e.begin(), e.end());
    erf.recs[i].data = r;
  }
  for (Pcap* c : {&sll, &erf}) {
    const std::string path = write_pcap(*c, "linktype.pcap");
    const Result r = run("pcap lint " + path);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("20 RoCE"), std::string::npos) << r.out;
    drop(*c, 23);
    const std::string d = write_pcap(*c, "linktype_drop.pcap");
    EXPECT_EQ(run("pcap lint " + d).findings, (Findings{{23, "psn_sequence"}}));
    std::remove(path.c_str());
    std::remove(d.c_str());
  }
}

// UC (which the wire monitor does not watch): PSN and opcode sequences per
// QP, pad rules; a WRITE_FIRST / SEND_FIRST... built from RC frames with
// the UC opcode and a fresh ICRC.
std::vector<uint8_t> uc_frame(uint8_t uc_op, uint32_t psn, size_t payload) {
  roce::Frame f;
  f.ip4.src = *roce::Ipv4Addr::parse("10.0.0.1");
  f.ip4.dst = *roce::Ipv4Addr::parse("10.0.0.2");
  f.udp.sport = 0xC000;
  f.bth.opcode = uint8_t(uc_op - 0x20);  // RC's operation: the same headers
  f.bth.dest_qp = 0x42;
  f.bth.psn = psn;
  if (f.bth.opcode == 0x06 || f.bth.opcode == 0x0A) f.reth = roce::Reth{0x1000, 7, 3 * 256};
  f.payload.assign(payload, 0x5A);
  roce::Bytes b = roce::encode(f);
  b[14 + 20 + 8] = uc_op;
  roce::put_le32(&b[b.size() - 4], roce::compute_icrc(b.data(), b.size() - 4));
  return b;
}

TEST(PcapLint, UcFlowsAreSequenceChecked) {
  Pcap p = read_pcap(kData + "pingpong_rc.pcap");  // for the global header
  p.recs.clear();
  const std::vector<std::vector<uint8_t>> frames = {
      uc_frame(0x26, 100, 256), uc_frame(0x27, 101, 256), uc_frame(0x28, 102, 256),  // WRITE F/M/L
      uc_frame(0x24, 103, 61),                                                        // SEND_ONLY, padded
      uc_frame(0x20, 104, 256), uc_frame(0x22, 105, 10)};                             // SEND F/L
  for (size_t i = 0; i < frames.size(); ++i) p.recs.push_back({1, uint32_t(i), frames[i]});
  const std::string clean = write_pcap(p, "uc.pcap");
  Result r = run("pcap lint " + clean);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("(UC)"), std::string::npos) << r.out;
  Pcap d = p;
  drop(d, 2);  // WRITE_MIDDLE lost
  const std::string dropped = write_pcap(d, "uc_drop.pcap");
  EXPECT_EQ(run("pcap lint " + dropped).findings, (Findings{{2, "psn_sequence"}}));
  Pcap w = p;
  swap_frames(w, 5, 6);  // SEND_LAST before SEND_FIRST
  const std::string swapped = write_pcap(w, "uc_swap.pcap");
  EXPECT_EQ(run("pcap lint " + swapped).findings,
            (Findings{{5, "psn_sequence"}, {5, "opcode_sequence"}, {6, "psn_sequence"}}));
  for (const auto& f : {clean, dropped, swapped}) std::remove(f.c_str());
}

// decode: one line per frame, numbered as tshark numbers them.
TEST(PcapDecode, OneLinePerFrame) {
  const Result r = run("pcap decode " + kData + "rdma_read_bw.pcap");
  EXPECT_EQ(r.exit_code, 0);
  size_t lines = 0;
  for (char ch : r.out) lines += ch == '\n';
  EXPECT_EQ(lines, 60u);
  EXPECT_NE(r.out.find("\n22 0.050061000 RoCEv2/IPv4 10.1.16.62 -> 10.1.16.61 RC_READ_REQUEST op=0x0c qp=0x00001c "
                       "psn=6433910 a=1 "),
            std::string::npos)
      << r.out;
}

TEST(PcapLint, UnusableInputIsExit2NamingTheFile) {
  const Result missing = run("pcap lint /nonexistent/x.pcap");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/x.pcap"), std::string::npos) << missing.err;
  const std::string txt = tmp_path("not_a_capture.pcap");
  std::ofstream(txt) << "hello, not a capture\n";
  const Result garbage = run("pcap lint " + txt);
  EXPECT_EQ(garbage.exit_code, 2);
  EXPECT_NE(garbage.err.find(txt), std::string::npos) << garbage.err;
  std::remove(txt.c_str());
  // A link type lint does not read (802.11, 105): refused by name.
  Pcap p = read_pcap(kData + "pingpong_rc.pcap");
  p.header[20] = 105;
  const std::string raw = write_pcap(p, "raw.pcap");
  const Result rr = run("pcap lint " + raw);
  EXPECT_EQ(rr.exit_code, 2);
  EXPECT_NE(rr.err.find("link type 105"), std::string::npos) << rr.err;
  EXPECT_NE(rr.err.find(raw), std::string::npos) << rr.err;
  std::remove(raw.c_str());
  EXPECT_EQ(run("pcap lint").exit_code, 2);
  EXPECT_EQ(run("pcap frobnicate x").exit_code, 2);
}

}  // namespace
