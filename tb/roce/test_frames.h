// tb/roce: RoCEv2 frames the real captures lack (CM MADs, immediate data,
// invalidate, NAKs, RNR NAK, padded payloads, IPv6, CNP), built with
// roce::encode(). Each frame carries the tshark field values it must decode
// to; those values are literals written next to the values set, so they
// come from the test, not from the code under test.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "model/roce/types.h"

namespace roce_test {

struct TestFrame {
  std::string name;
  roce::Bytes bytes;
  // tshark field name -> expected value as `tshark -T fields -E occurrence=f`
  // prints it; for _ws.col.Info the value must occur in the column.
  std::vector<std::pair<std::string, std::string>> expect;
};

std::vector<TestFrame> build_test_frames();

// Writes frames to a pcap (Ethernet link type, microsecond stamps 1 s apart).
// Returns false and prints the reason on failure.
bool write_pcap(const std::string& path, const std::vector<roce::Bytes>& frames);

}  // namespace roce_test
