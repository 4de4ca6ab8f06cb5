// model/trace: packet capture files (libpcap format, LINKTYPE_ETHERNET,
// nanosecond timestamps), the pcap tap's output and a small reader for tests
// and tools. Plain C++ (no SystemC): times come in as integers.
//
// - Frames are written as they appear on the wire from the destination MAC
//   address to the end of the payload/ICRC, without preamble, SFD or FCS
//   (what Wireshark expects for DLT_EN10MB captures that lack an FCS).
// - Timestamp = simulated time of the frame in picoseconds divided by 1000,
//   truncated towards zero (nanosecond resolution; a frame at 12'345'999 ps
//   is stamped 12'345 ns). The file uses the nanosecond pcap magic
//   (0xA1B23C4D) so that tshark shows the full resolution.
// - Snap length 65535: longer frames are truncated to 65535 captured bytes
//   while the header's original length keeps the real size.
// - Errors (cannot open, write failure) are thrown as std::runtime_error
//   naming the file.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

// libpcap types, kept out of this header.
struct pcap;
struct pcap_dumper;

namespace ernic {

class PcapWriter {
 public:
  static constexpr int kSnapLen = 65535;

  // Creates (truncates) `path`. Throws std::runtime_error on failure.
  explicit PcapWriter(const std::string& path);
  ~PcapWriter();  // flushes and closes; never throws
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // Appends one Ethernet frame (no FCS) captured at `time_ps`.
  void write(const uint8_t* frame, size_t len, uint64_t time_ps);
  void write(const std::vector<uint8_t>& frame, uint64_t time_ps) {
    write(frame.data(), frame.size(), time_ps);
  }
  // A file fed by several sources (the wire capture of every node and
  // switch port): frames are written in (time in ns as the file keeps it,
  // source, arrival) order, not by which process ran first, so the file
  // does not depend on the simulator's process order and is the order a
  // split run's merge gives (tools/split_merge.h). A frame may come up to
  // the order lag earlier than the latest time so far (sources on lines of
  // different rates stamp a frame's first byte one preamble, 0.64 to
  // 6.4 ns, after they write it); frames are held until no frame still to
  // come can fall in their ns (a time the lag past its end has arrived),
  // flush() or close().
  void write_ordered(const uint8_t* frame, size_t len, uint64_t time_ps, uint32_t source);
  void set_order_lag(uint64_t lag_ps) { lag_ps_ = lag_ps; }
  void flush();  // pushes buffered records to the file
  void close();  // flush + close; further writes throw. Idempotent.

  const std::string& path() const { return path_; }
  uint64_t frames_written() const { return frames_; }

 private:
  std::string path_;
  pcap* pcap_ = nullptr;
  pcap_dumper* dumper_ = nullptr;
  uint64_t frames_ = 0;
  // write_ordered's frames not written yet, by (time in ns, source,
  // arrival): their time in ps and bytes.
  std::map<std::tuple<uint64_t, uint32_t, uint64_t>, std::pair<uint64_t, std::vector<uint8_t>>> held_;
  uint64_t held_seq_ = 0, latest_ps_ = 0, lag_ps_ = 0;
  void write_held(uint64_t before_ns = UINT64_MAX);  // those with a time before before_ns
};

struct PcapFrame {
  uint64_t time_ns = 0;        // seconds * 1e9 + nanoseconds
  uint32_t orig_len = 0;       // length on the wire (may exceed data.size())
  std::vector<uint8_t> data;   // captured bytes
};

// Reads a pcap file (micro- or nanosecond; timestamps are returned in ns).
class PcapReader {
 public:
  explicit PcapReader(const std::string& path);  // throws std::runtime_error
  ~PcapReader();
  PcapReader(const PcapReader&) = delete;
  PcapReader& operator=(const PcapReader&) = delete;

  std::optional<PcapFrame> next();  // nullopt at end of file; throws on error
  int linktype() const;             // DLT_EN10MB (1) for our files

  static std::vector<PcapFrame> read_all(const std::string& path);

 private:
  std::string path_;
  pcap* pcap_ = nullptr;
};

}  // namespace ernic
