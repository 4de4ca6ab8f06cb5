// tools/random: `ernic-sim random`, the seeded constrained-random mode.
//
//   ernic-sim random --seed S --count N [--jobs J] [--out DIR] [--keep]
//                    [--plant-bug NAME] [--max-failures F] [--reduce R]
//                    [--generate]
//
// For each seed S, S+1, ..., S+N-1 it generates a scenario (YAML, the
// language of scenarios/README.md) with a constrained-random traffic mix:
// two nodes (IPv4, IPv6 or both; ACK mode and coalescing; MR table or
// CAM; register layout 3.1 or 4.x; RTL or C++ datapath), 1..4 RC
// connections (PMTU 256..4096, RQ element size, PSNs, some near the 24-bit
// wrap), 1..4 phases of 1..6 operations each (WRITE, WRITE with immediate,
// SEND incl. inline sizes <= 16 B, SEND with immediate, SEND with
// invalidate, READ; 1 B .. 256 KiB with a bias to 1, PMTU-1, PMTU, PMTU+1)
// on random QPs and requesters, and wire faults the protocol recovers from:
// in a phase, either one or two single faults (drop, corrupt, duplicate,
// reorder, delay, ECN; each acting once) or a storm on one connection, both
// directions at once: each answer (ACK, NAK, READ response) one way and
// each request the other way reordered or delayed with a probability of
// 0.1..0.5, three times at most in all (every application costs a message
// at most one retry; the driver allows three). A short local ACK timeout
// makes a lost last packet resent. The requests' storm spares READ
// requests, and a phase with a storm and READs ends with a 40 us wait, so a
// READ answered twice drains before the next phase (see "Limits"). Every
// phase waits for every completion (wr_id, opcode, no error) and receives
// every message (opcode, immediate, payload); the wire monitor and the
// shadow-memory scoreboard check every run. Generation uses std::mt19937_64
// (its sequence is fixed by the C++ standard) with our own integer
// mappings, so a seed gives byte-identical YAML with every standard library.
//
// Each scenario runs in a child process (`ernic-sim run FILE --json ...`:
// a SystemC kernel elaborates once per process), up to J at a time; one line
// per seed (pass/FAIL, operations, QPs, faults, simulated time), in seed
// order, then a summary. A failing seed's scenario, report and output are
// kept in DIR; the first R failures are reduced (delta debugging over
// phases, operations, faults, then simpler operations, sizes, QPs and
// settings; every candidate re-run and kept only if it still fails with the
// same failure kind) to DIR/seed_S.min.yaml, and the command to rerun it is
// printed.
//
// Limits (what the generator keeps apart, and why). The model's RX handler
// answers an incoming READ itself and sends ACKs itself, waiting while its
// TX queue is full (assumption A-ERNIC-11). So a node serving a long READ
// stops draining its RX buffer for the READ's duration: without PFC, other
// traffic arriving meanwhile overflows the buffer (a run error); with PFC,
// two nodes whose RX handlers both wait for a TX the other one paused stop
// for good (seen with READs in both directions, or a late duplicate whose
// re-ACK waits behind a paused TX). Hence: PFC on (XOFF 32 KiB, XON 16 KiB);
// a phase is `mixed` (both nodes request; WRITE and SEND kinds), `one-way`
// (one requester; the same) or `read` (one requester; READs and at most two
// other operations of 4 KiB or less); `delay` faults are 3 us at most.
// Operations in one phase never share bytes (each has its own 64-byte
// aligned ranges, sometimes skewed by 1..63 bytes), and a receiving end gets
// at most 8 SENDs a phase (its 16-element RQ never runs out).
//
// --plant-bug NAME (test only, never hardware) passes `--plant-bug NAME` to
// every run: the model then carries a deliberately planted bug, so that a
// test can show the checks catch it (ernic-sim run --plant-bug; see
// kPlantableBugs).
//
// Exit codes: 0 every seed passed; 1 a seed failed; 2 bad usage.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace ernic::random_mode {

// The bugs `--plant-bug` can plant (test-only switches in the ERNIC model,
// ErnicConfig::test_bug_*):
//   ack_coalescing  an ACK sent because the coalescing count was reached
//                   carries the PSN before the newest accepted one (and the
//                   count restarts), so the packet that reached the count is
//                   left unacknowledged: its MSN runs ahead of its PSN (the
//                   wire monitor's `msn` rule) and, when it was the last
//                   packet, the requester waits for its local ACK timeout.
inline const std::vector<std::string> kPlantableBugs = {"ack_coalescing", "cq_entry_race"};

struct Options {
  uint64_t seed = 1;
  uint64_t count = 1;
  unsigned jobs = 0;            // 0: min(2, cores)
  std::string out_dir = "random";
  bool keep = false;            // keep every generated scenario and report, not only failing ones
  bool generate_only = false;   // write the scenarios, run nothing
  std::string plant_bug;        // "" or one of kPlantableBugs
  uint64_t max_failures = 0;    // stop starting new seeds after this many failures (0: never)
  uint64_t reduce = 1;          // reduce the first this many failing seeds (0: none)
  uint32_t reduce_runs = 300;   // at most this many candidate runs per reduction
  uint32_t child_timeout_s = 600;  // wall-clock limit of one child run (killed: failure kind "wall-timeout")
};

// One generated scenario, as YAML text (deterministic for a seed).
std::string generate_yaml(uint64_t seed);

// Registers the `random` subcommand; the returned App is `parsed()` when
// it was chosen.
CLI::App* add_command(CLI::App& app, Options& opt);

// Runs the mode (prints on stdout, wall-clock figures on stderr); the exit
// code. `self` is the ernic-sim binary, `argv0` how the user called it
// (for the printed rerun commands).
int main(const Options& opt, const std::string& self, const std::string& argv0);

// Whether NAME is one of kPlantableBugs.
bool is_plantable(const std::string& name);

}  // namespace ernic::random_mode
