// tb/roce: writes the frames of test_frames.h to the pcap named on the
// command line (input for the scapy oracle test). With --corrupt, frame 1
// gets a wrong ICRC and frame 2 a wrong IPv4 header checksum, so a test can
// show that the oracle notices.
#include <cstdio>
#include <string>

#include "tb/roce/test_frames.h"

int main(int argc, char** argv) {
  const bool corrupt = argc == 3 && std::string(argv[1]) == "--corrupt";
  if (argc != 2 && !corrupt) {
    std::fprintf(stderr, "usage: %s [--corrupt] OUT.pcap\n", argv[0]);
    return 2;
  }
  std::vector<roce::Bytes> frames;
  for (const auto& f : roce_test::build_test_frames()) frames.push_back(f.bytes);
  if (corrupt) {
    frames.at(0).back() ^= 0x01;  // last ICRC byte
    frames.at(1).at(24) ^= 0x01;  // IPv4 header checksum (Ethernet 14 + 10)
  }
  return roce_test::write_pcap(argv[argc - 1], frames) ? 0 : 1;
}
