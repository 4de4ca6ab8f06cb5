// model/trace: see capture_file.h.
#include "model/trace/capture_file.h"

#include <fmt/format.h>
#include <pcap/pcap.h>
#include <sys/stat.h>

namespace ernic {

namespace {

constexpr int kLinkEthernet = 1, kLinkLinuxSll = 113, kLinkErf = 197, kLinkInfiniband = 247;

std::string linktype_name(int lt) {
  const char* n = pcap_datalink_val_to_name(lt);
  return n ? n : "unknown";
}

}  // namespace

std::optional<Capture> read_capture(const std::string& path, std::string* why) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    *why = "no such file";
    return std::nullopt;
  }
  if (S_ISDIR(st.st_mode)) {
    *why = "a directory, not a capture";
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {  // a FIFO would block, a device never end
    *why = "not a regular file (a device, a FIFO or a socket)";
    return std::nullopt;
  }
  char err[PCAP_ERRBUF_SIZE] = {};
  pcap_t* p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  if (!p) {
    *why = std::string("not a pcap or pcapng capture libpcap reads (") + err + ")";
    return std::nullopt;
  }
  Capture c;
  c.linktype = pcap_datalink(p);
  if (c.linktype != kLinkEthernet && c.linktype != kLinkLinuxSll && c.linktype != kLinkErf &&
      c.linktype != kLinkInfiniband) {
    *why = fmt::format("link type {} ({}): Ethernet (1), Linux cooked (113), ERF (197) and native InfiniBand (247) "
                      "captures are read",
                      c.linktype, linktype_name(c.linktype));
    pcap_close(p);
    return std::nullopt;
  }
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  uint64_t t0 = 0;
  int rc;
  while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
    CaptureFrame f;
    f.n = c.frames.size() + 1;
    const uint64_t t = uint64_t(h->ts.tv_sec) * 1000000000ull + uint64_t(h->ts.tv_usec);  // ns precision
    if (c.frames.empty()) t0 = t;
    f.t_ns = t >= t0 ? t - t0 : 0;
    const uint8_t* d = data;
    size_t n = h->caplen;
    if (c.linktype == kLinkLinuxSll) {
      // 16-byte cooked header: packet type, ARPHRD, address length, address (8), protocol.
      if (n < 16) {
        f.skip = "Linux cooked header cut short";
      } else {
        f.bytes.assign(14, 0);  // no MACs: zeros
        f.bytes[12] = d[14];
        f.bytes[13] = d[15];
        f.bytes.insert(f.bytes.end(), d + 16, d + n);
      }
    } else if (c.linktype == kLinkErf) {
      // ERF: 16-byte record header, extension headers while bit 7 of the
      // type (then of each extension's first byte) is set, then the
      // record. Ethernet types carry 2 bytes of offset/pad first.
      if (n < 16) {
        f.skip = "ERF record header cut short";
      } else {
        const uint8_t type = d[8];
        size_t off = 16;
        bool more = type & 0x80;
        while (more && off + 8 <= n) {
          more = d[off] & 0x80;
          off += 8;
        }
        const uint8_t base = type & 0x7F;
        if (base == 2 || base == 16 || base == 25 || base == 26) {  // ETH, COLOR_ETH, DSM_COLOR_ETH, ETH_MC?
          if (off + 2 <= n) f.bytes.assign(d + off + 2, d + n);
          else f.skip = "ERF Ethernet record cut short";
        } else if (base == 21) {  // INFINIBAND
          f.ib = true;
          f.bytes.assign(d + off, d + n);
        } else {
          f.skip = fmt::format("ERF record type {} is neither Ethernet nor InfiniBand", unsigned(base));
        }
      }
    } else {
      f.ib = c.linktype == kLinkInfiniband;
      f.bytes.assign(d, d + n);
    }
    c.frames.push_back(std::move(f));
  }
  if (rc == -1) {
    *why = std::string("read error after ") + std::to_string(c.frames.size()) + " frames: " + pcap_geterr(p);
    pcap_close(p);
    return std::nullopt;
  }
  pcap_close(p);
  return c;
}

}  // namespace ernic
