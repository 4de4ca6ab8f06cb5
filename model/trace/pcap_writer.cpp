#include "model/trace/pcap_writer.h"

#include <pcap/pcap.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace ernic {

namespace {
std::runtime_error pcap_error(const std::string& what, const std::string& path,
                              const char* detail) {
  std::string msg = "pcap: " + what + " '" + path + "'";
  if (detail && *detail) msg += std::string(": ") + detail;
  return std::runtime_error(msg);
}
}  // namespace

PcapWriter::PcapWriter(const std::string& path) : path_(path) {
  pcap_ = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, kSnapLen,
                                               PCAP_TSTAMP_PRECISION_NANO);
  if (!pcap_) throw pcap_error("cannot create pcap handle for", path_, nullptr);
  dumper_ = pcap_dump_open(pcap_, path_.c_str());
  if (!dumper_) {
    std::string err = pcap_geterr(pcap_);
    pcap_close(pcap_);
    pcap_ = nullptr;
    throw pcap_error("cannot open", path_, err.c_str());
  }
}

PcapWriter::~PcapWriter() {
  if (dumper_) {
    try {
      write_held();
    } catch (...) {
    }
    pcap_dump_flush(dumper_);
    pcap_dump_close(dumper_);
  }
  if (pcap_) pcap_close(pcap_);
}

void PcapWriter::write(const uint8_t* frame, size_t len, uint64_t time_ps) {
  if (!dumper_) throw pcap_error("write after close of", path_, nullptr);
  const uint64_t ns = time_ps / 1000;  // truncated: see header
  pcap_pkthdr hdr{};
  hdr.ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000ull);
  // With a nanosecond-precision handle libpcap stores tv_usec as nanoseconds.
  hdr.ts.tv_usec = static_cast<suseconds_t>(ns % 1'000'000'000ull);
  hdr.len = static_cast<bpf_u_int32>(len);
  hdr.caplen = static_cast<bpf_u_int32>(len < size_t(kSnapLen) ? len : size_t(kSnapLen));
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &hdr, frame);
  ++frames_;
}

void PcapWriter::write_ordered(const uint8_t* frame, size_t len, uint64_t time_ps, uint32_t source) {
  if (!dumper_) throw pcap_error("write after close of", path_, nullptr);
  held_.emplace(std::make_tuple(time_ps / 1000, source, held_seq_++),
                std::make_pair(time_ps, std::vector<uint8_t>(frame, frame + len)));
  latest_ps_ = std::max(latest_ps_, time_ps);
  // No frame still to come has a time below latest_ps_ - lag_ps_.
  if (latest_ps_ > lag_ps_) write_held((latest_ps_ - lag_ps_) / 1000);
}

void PcapWriter::write_held(uint64_t before_ns) {
  auto it = held_.begin();
  for (; it != held_.end() && std::get<0>(it->first) < before_ns; ++it)
    write(it->second.second.data(), it->second.second.size(), it->second.first);
  held_.erase(held_.begin(), it);
}

// Flushes the dumper's stdio stream; false when this or any earlier write
// failed (a failed buffer flush inside pcap_dump sets only the stream's error
// flag: a later fflush of the then empty buffer succeeds). `err`: the reason.
namespace {
bool flush_ok(pcap_dumper_t* d, std::string& err) {
  FILE* f = pcap_dump_file(d);
  errno = 0;
  const bool flushed = std::fflush(f) == 0;
  const int e = errno;
  if (flushed && !std::ferror(f)) return true;
  err = !flushed && e ? std::strerror(e) : "a write failed";
  return false;
}
}  // namespace

void PcapWriter::flush() {
  write_held();
  std::string why;
  if (dumper_ && !flush_ok(dumper_, why)) throw pcap_error("write error on", path_, why.c_str());
}

void PcapWriter::close() {
  if (!dumper_) return;
  write_held();
  std::string why;
  const bool ok = flush_ok(dumper_, why);
  pcap_dump_close(dumper_);
  dumper_ = nullptr;
  pcap_close(pcap_);
  pcap_ = nullptr;
  if (!ok) throw pcap_error("write error on", path_, why.c_str());
}

PcapReader::PcapReader(const std::string& path) : path_(path) {
  char err[PCAP_ERRBUF_SIZE] = {};
  pcap_ = pcap_open_offline_with_tstamp_precision(path_.c_str(), PCAP_TSTAMP_PRECISION_NANO,
                                                  err);
  if (!pcap_) throw pcap_error("cannot read", path_, err);
}

PcapReader::~PcapReader() {
  if (pcap_) pcap_close(pcap_);
}

std::optional<PcapFrame> PcapReader::next() {
  pcap_pkthdr* hdr = nullptr;
  const u_char* data = nullptr;
  const int rc = pcap_next_ex(pcap_, &hdr, &data);
  if (rc == PCAP_ERROR_BREAK) return std::nullopt;  // end of file
  if (rc != 1) throw pcap_error("read error in", path_, pcap_geterr(pcap_));
  PcapFrame f;
  f.time_ns = uint64_t(hdr->ts.tv_sec) * 1'000'000'000ull + uint64_t(hdr->ts.tv_usec);
  f.orig_len = hdr->len;
  f.data.assign(data, data + hdr->caplen);
  return f;
}

int PcapReader::linktype() const { return pcap_datalink(pcap_); }

std::vector<PcapFrame> PcapReader::read_all(const std::string& path) {
  PcapReader r(path);
  std::vector<PcapFrame> out;
  while (auto f = r.next()) out.push_back(std::move(*f));
  return out;
}

}  // namespace ernic
