/* ernic_bridge.h: a host program's side of the ERNIC simulator's bridge
 * (C99; the library is libernic_bridge, built with the project).
 *
 * The program is the host of one simulated node: it reads and writes the
 * NIC's registers (BAR0, PG332 offsets: see ernic_regs_c.h), allocates
 * DMA-able memory the NIC reaches by bus address, and waits for the NIC's
 * interrupt. The messages are SimBricks' PCIe protocol over a Unix socket
 * or TCP (model/bridge/README.md).
 *
 * Time is lock-step: simulated time advances only inside the calls below
 * that wait (a register read, ernic_delay_ns, ernic_wait_irq/_event, a non-posted
 * write, close); code between calls takes no simulated time, so a program
 * gives the same simulated results however the OS schedules it.
 *   ernic_read32      costs the MMIO read round trip (PCIe + AXI4-Lite)
 *   ernic_write32     posted: returns at once, the write follows in order
 *   ernic_delay_ns    lets the simulation run ns nanoseconds
 *   ernic_wait_irq    runs until the NIC's interrupt or the timeout
 *   ernic_wait_event  runs until an interrupt and/or the NIC's next DMA
 *                     write into the program's memory, or the timeout
 * While a call waits, the library answers the NIC's DMA reads and applies
 * its DMA writes from and to the memory ernic_dma_alloc gave.
 *
 * Errors are sticky: after one, every call fails at once (reads return
 * all ones, as a dead PCIe device does), ernic_error() says why (the
 * simulator gone, a refused message, a DMA outside every allocated buffer).
 */
#ifndef ERNIC_BRIDGE_H
#define ERNIC_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ernic_bridge ernic_bridge;

/* Connects to the simulator. addr: "unix:PATH" or "tcp:HOST:PORT"; NULL
 * takes the environment variable ERNIC_BRIDGE (set by the simulator for
 * the programs it starts). Host memory: ERNIC_BRIDGE_MEM_MIB (default 64)
 * of bus address space. Returns NULL on failure (ernic_open_error() says
 * why). */
ernic_bridge* ernic_open(const char* addr);
const char* ernic_open_error(void);

/* Ends the session (TERMINATE); 0 if the session had no error, else -1.
 * Frees b. */
int ernic_close(ernic_bridge* b);

/* The first error of the session, or NULL. */
const char* ernic_error(const ernic_bridge* b);

/* BAR0 register access (byte offset, 4-byte aligned). */
uint32_t ernic_read32(ernic_bridge* b, uint32_t offset);
void ernic_write32(ernic_bridge* b, uint32_t offset, uint32_t value);
/* Non-posted: returns once the write reached the NIC; 0 or -1. */
int ernic_write32_sync(ernic_bridge* b, uint32_t offset, uint32_t value);
/* Two registers, low word at offset (e.g. a 64-bit base address pair). */
uint64_t ernic_read64(ernic_bridge* b, uint32_t offset);
void ernic_write64(ernic_bridge* b, uint32_t offset, uint64_t value);

/* DMA-able host memory, zeroed, aligned to `align` (a power of two, 0 =
 * 4096). Returns the bus address the NIC uses and, in *va, where the
 * program reads and writes it; 0 when it does not fit in the host memory
 * (ERNIC_BRIDGE_MEM_MIB), for 0 bytes or an alignment that is not a power
 * of two: the session stays usable (not an error of the session). Never
 * freed before ernic_close. The memory sits at a fixed virtual address
 * (0x200000000000, + 1 TiB for each further session of the process) when
 * the kernel can map it there, so the pointers, like the bus addresses,
 * are the same in every run (a verbs program's MR VAs are its pointers). */
uint64_t ernic_dma_alloc(ernic_bridge* b, size_t bytes, size_t align, void** va);
/* The program's pointer for bus address [bus, bus+len), or NULL. */
void* ernic_dma_ptr(ernic_bridge* b, uint64_t bus, size_t len);
/* The bus address of [va, va+len) when it lies inside one allocation of
 * ernic_dma_alloc, else 0 (the inverse of ernic_dma_ptr). */
uint64_t ernic_dma_bus(const ernic_bridge* b, const void* va, size_t len);
/* Bytes of the node's host memory (ERNIC_BRIDGE_MEM_MIB MiB): bus addresses
 * [0, this); ernic_dma_alloc hands out [1 MiB, this). */
uint64_t ernic_mem_bytes(const ernic_bridge* b);

/* Simulated time (ps) as of the last call. */
uint64_t ernic_now_ps(const ernic_bridge* b);
/* Runs the simulation ns nanoseconds; 0 or -1. Here and in ernic_wait_irq
 * and ernic_wait_event, a time whose picoseconds do not fit in 64 bits
 * saturates (waits to the end of time), never wraps. */
int ernic_delay_ns(ernic_bridge* b, uint64_t ns);
/* Waits for the NIC's interrupt (MSI-X vector 0) up to timeout_ns of
 * simulated time: 1 interrupt (consumed), 0 timeout, -1 error. */
int ernic_wait_irq(ernic_bridge* b, uint64_t timeout_ns);

/* Waits for what the program names, up to a deadline of simulated time:
 * `what` is ERNIC_WAIT_IRQ, ERNIC_WAIT_DMA_WRITE or both (at least one).
 *   ERNIC_WAIT_IRQ        the NIC's interrupt (as ernic_wait_irq); an
 *                         interrupt already received returns at once. Every
 *                         interrupt received is consumed (MSI-X messages are
 *                         edges of one line: the handler reads INTSTS).
 *   ERNIC_WAIT_DMA_WRITE  the NIC's first DMA write into the program's memory
 *                         during this call: the simulator stops right after
 *                         it (at the simulated time it was issued), and the
 *                         library has applied it when the call returns. A
 *                         write the NIC issued during an earlier call was
 *                         seen there and does not count.
 * The stop is decided by the simulator in simulated time (a SYNC with the
 * bridge's extension flags, model/bridge/README.md), so it is the same
 * however the OS schedules the program.
 * Returns the bits of what happened (ERNIC_WAIT_DMA_WRITE is reported
 * whenever the NIC wrote memory during the call, even when not asked for;
 * ERNIC_WAIT_IRQ only when asked for), 0 on timeout, -1 on error (then
 * ernic_error). A `what` with no known bit, or an unknown one, is an error. */
#define ERNIC_WAIT_IRQ 1u
#define ERNIC_WAIT_DMA_WRITE 2u
int ernic_wait_event(ernic_bridge* b, uint64_t timeout_ns, unsigned what);
/* The same with an absolute deadline in picoseconds of simulated time (a
 * deadline at or before ernic_now_ps runs no time, but still reports an
 * interrupt already received). */
int ernic_wait_until(ernic_bridge* b, uint64_t deadline_ps, unsigned what);

/* Called from inside the library when an interrupt message arrives (in
 * any waiting call), before ernic_wait_irq sees it. NULL removes it. */
void ernic_set_irq_handler(ernic_bridge* b, void (*handler)(void* ctx, uint16_t vector), void* ctx);

/* Counters: messages this program exchanged. */
typedef struct ernic_bridge_stats {
  uint64_t mmio_reads, mmio_writes, dma_reads, dma_writes, dma_read_bytes, dma_write_bytes, interrupts;
} ernic_bridge_stats;
void ernic_get_stats(const ernic_bridge* b, ernic_bridge_stats* out);

#ifdef __cplusplus
}
#endif
#endif /* ERNIC_BRIDGE_H */
