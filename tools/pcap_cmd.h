// tools: `ernic-sim pcap decode FILE` and `ernic-sim pcap lint FILE`:
// real captures (pcap / pcapng through libpcap; Ethernet, Linux cooked,
// native InfiniBand and ERF link types) through model/roce's capture-grade
// decoder (wire_decode.h), the ICRC check and the independent wire monitor
// (model/monitor/wire_monitor.h). README.md "Real captures: pcap decode /
// pcap lint".
#pragma once

namespace pcap_cmd {

// argv[0] is "pcap". Exit codes: decode 0, lint 0 clean / 1 a violation;
// 2 for bad usage or an unusable capture (the message names the file and
// why).
int main(int argc, char** argv);

}  // namespace pcap_cmd
