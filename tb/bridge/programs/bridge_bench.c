/* tb/bridge/programs/bridge_bench.c: the bridge's own costs in wall time
 * (tools/bridge-bench runs it): MMIO read round trips (each a message to
 * the simulator, an AXI4-Lite read in simulated time, a completion back)
 * and posted writes (pipelined: no answer). Prints one line per figure as
 * "name value unit". Simulated results do not depend on these figures
 * (lock-step); they only say how fast a driver runs against the model.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ernic_bridge.h"
#include "ernic_regs_c.h"

static double wall(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The machine's floor: a 68-byte message (a 64-byte header and its length)
 * to another process and back over a Unix socket pair, blocking reads and
 * writes, nothing else. A bridge round trip cannot beat it. */
static double socket_floor_us(long n) {
  int sv[2];
  char b[68] = {0};
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    for (long i = 0; i < n; ++i)
      if (read(sv[1], b, sizeof b) <= 0 || write(sv[1], b, sizeof b) <= 0) _exit(1);
    _exit(0);
  }
  const double t0 = wall();
  for (long i = 0; i < n; ++i)
    if (write(sv[0], b, sizeof b) <= 0 || read(sv[0], b, sizeof b) <= 0) return -1;
  const double us = (wall() - t0) / (double)n * 1e6;
  waitpid(pid, NULL, 0);
  close(sv[0]);
  close(sv[1]);
  return us;
}

int main(int argc, char** argv) {
  const long reads = argc > 1 ? atol(argv[1]) : 20000, writes = argc > 2 ? atol(argv[2]) : 200000;
  ernic_bridge* b = ernic_open(NULL);
  if (!b) {
    fprintf(stderr, "bridge_bench: %s\n", ernic_open_error());
    return 1;
  }
  const uint32_t reg = ERNIC_REG(IPv4XADD); /* RW, no side effect */
  ernic_read32(b, reg);                      /* warm up */
  double t0 = wall();
  const uint64_t s0 = ernic_now_ps(b);
  uint32_t x = 0;
  for (long i = 0; i < reads; ++i) x ^= ernic_read32(b, reg);
  const double rd = wall() - t0;
  const uint64_t sim_rd = ernic_now_ps(b) - s0;
  t0 = wall();
  for (long i = 0; i < writes; ++i) ernic_write32(b, reg, (uint32_t)i);
  const uint32_t last = ernic_read32(b, reg); /* every posted write has reached the NIC */
  const double wr = wall() - t0;
  if (ernic_error(b) || last != (uint32_t)(writes - 1)) {
    fprintf(stderr, "bridge_bench: %s (last 0x%x)\n", ernic_error(b) ? ernic_error(b) : "wrong value", last);
    return 1;
  }
  const double floor_us = socket_floor_us(reads);
  printf("mmio_read_round_trip_us %.2f\n", rd / (double)reads * 1e6);
  printf("socket_round_trip_floor_us %.2f\n", floor_us);
  printf("mmio_reads_per_s %.0f\n", (double)reads / rd);
  printf("mmio_read_simulated_ns %.1f\n", (double)sim_rd / (double)reads / 1000.0);
  printf("posted_writes_per_s %.0f\n", (double)writes / wr);
  (void)x;
  return ernic_close(b) ? 1 : 0;
}
