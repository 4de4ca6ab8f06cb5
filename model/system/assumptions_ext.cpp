// model/system: the assumptions of the ERNIC model's named extensions that
// are not PG332 (assumptions.h: extension_assumptions()). Each is listed in
// the JSON of every run that uses its extension (report_ext.h), and only
// there: a run without extensions lists PG332's model's assumptions alone.
#include <iterator>

#include "model/system/assumptions.h"

namespace ernic {

namespace {
const Assumption kExtensionAssumptions[] = {
    {"X-SHADOW-DB-1", "Extension shadow_doorbell (not PG332; seed 003's shadow doorbell): the built-in driver writes each RC QP's SQ producer index into a table in host memory at 0xA0000 (QP n's 4 bytes, little-endian, at 0xA0000 + 4 (n - 1), in the first MiB the driver leaves unused) instead of writing SQPIi: a CPU store, no MMIO, no simulated time (A-HOST-1). QP1 (CM) and QPs in HW-handshake mode ring as in PG332; SQPIi writes over AXI4-Lite still ring.",
     "Seed 003 names the technique, not a layout; the table's base is an integration parameter known to the NIC and the driver, as the MR cache's (A-MRC-2)."},
    {"X-SHADOW-DB-2", "shadow_doorbell: the NIC reads the entries of QPs 2..num_qp (4 (num_qp - 1) bytes) in one DMA read through its own AXI4 master shadow_db_m_axi, started at the first core-clock edge at or after every multiple of poll_ns of simulated time, one read in flight (a multiple passing during a read is skipped). The read pays the PCIe read latency, its request and completions share the node's link (A-DMA-1, A-PCIE-2); it brings the entries as host memory held them when it was issued (the completer reads them as the request arrives), and the NIC has them with its last beat. For each enabled RC QP with QPCONFi[4] = 1 whose entry changed since the previous read, SQPIi takes the entry and the QP manager sees it doorbell_cycles later (A-ERNIC-1). With D the read's duration, reads start every S = poll_ns x max(1, ceil(D / poll_ns)), so a doorbell written at time t reaches the QP manager no sooner than t + D + doorbell_cycles and no later than t + S + D + 1 core cycle + doorbell_cycles.",
     "Seed 003 gives no poll interval or read size; one read of the whole table per interval is the simplest engine. Pipelined polls (several reads in flight, to poll faster than a read's round trip) are not modelled."},
    {"X-SHADOW-DB-3", "shadow_doorbell: polling runs while ERNIC is enabled and some RC QP is enabled with AXI doorbells, and stops otherwise. The table is software's: the driver stores 0 in an RC QP's entry before it enables the QP and when it deletes or recovers it, the QP-setup offload's driver before its create command, and the NIC sets the entry's last value to 0 when it sees the enable (it writes nothing to the table, so a doorbell stored right after the enable is never overwritten, and a reused QPN never rings from a stale value); a read in flight across the enable is not used for that QP. A poll that finds no change is not progress for the watchdog.",
     "A stale entry of a reused QP number must not ring; an idle poller must not keep a stalled run from being reported."},
    {"X-QPC-CACHE-1", "Extension qp_ctx_cache (not PG332; seed 003's 'half-hardware' QP): RC QP contexts live in host memory, QP n's context_bytes (default 256: PG332's per-QP register stride, 0x100) at 0xC0000 + context_bytes (n - 1); the NIC holds `entries` of them on chip with LRU replacement; QP1's context stays on chip. A QP enabled (QPCONFi[0] 0 -> 1) is installed without a fetch (its context is built from the registers just written) when a slot is free; otherwise its first use misses.",
     "Seed 003 contrasts contexts all on chip ('full hardware', PG332's model) with contexts in host memory fetched by DMA ('half hardware'), with no sizes; the per-QP register block gives the context's size, the hidden state (outstanding queue, timers) is taken to fit."},
    {"X-QPC-CACHE-2", "qp_ctx_cache: a context is looked up by the QP manager's dispatcher each time it serves a QP (a WQE, a go-back-N round, a flush), by its prefetcher before each WQE read, and by the RX packet handler for each valid frame on an RC QP and each ACK the coalescing timer asks for; not by the response handler's timers, the WQE processor (it works on the context its dispatcher fetched) or AXI4-Lite register accesses. A hit costs no cycle beyond PG332's mode (the tag compare fits in the cycles the block already spends), so with every active QP held the timing is PG332's. A miss stalls the looking block (and the RX frames behind it): a DMA read of context_bytes through the extension's master qp_ctx_m_axi (PCIe read latency plus the completions), then, when the cache was full, a posted write-back of the least recently used context (the block waits while the master takes its W beats), then 1 core cycle to install. A block needing a context another block is fetching waits for that fetch (a merged miss, no second read).",
     "Seed 003 says only that every context access then crosses PCIe; which blocks look contexts up, and when, follows where PG332's blocks use per-QP state."},
    {"X-QPC-CACHE-3", "qp_ctx_cache times the datapath's use of contexts only: the model keeps every QP's state on chip functionally (the bytes fetched are not interpreted; a write-back stores the victim's QPN in every word), and every evicted context is written back (a QP in use changes its PSNs and pointers).",
     "A timing extension: the protocol behaviour stays the model's, checked by the monitors on every run."},
};
}  // namespace

const std::vector<Assumption>& extension_assumptions() {
  static const std::vector<Assumption> v(std::begin(kExtensionAssumptions), std::end(kExtensionAssumptions));
  return v;
}

}  // namespace ernic
