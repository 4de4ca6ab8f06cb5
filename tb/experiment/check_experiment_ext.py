"""The CSV checks of the model-extension experiments of `ernic-sim
experiment` (tools/experiment_sweeps_shadow.cpp, tools/experiment_sweeps_qpc.cpp),
used by check_experiment.py. The expected figures are worked out here from
the PCIe link rules of model/dma/pcie.h and model/dma/dma.h and from
counts, not read from the simulator:

- a TLP of n payload bytes takes (n + 24) bytes at the raw rate (Gen3 x16:
  16 x 8 GT/s x 128/130 / 8 = 15.754 B/ns), rounded to the picosecond;
- a DMA read: its requests (cut at MRRS 512) leave one after the other, the
  host answers 500 ns after each with completions cut at MPS 256 / RCB 64,
  and the data is in one core cycle (5 ns) after the last completion's last
  byte, on a core edge (A-DMA-4), or one beat a 64 bytes after the bus was
  free, whichever is later.
"""

COLUMNS = {
    "shadow_doorbell": "doorbell,poll_ns,num_qp,latency_messages,latency_mean_us,latency_max_us,doorbell_delay_min_us,"
                       "doorbell_delay_mean_us,doorbell_delay_max_us,poll_read_ns,rate_messages,window_us,msg_rate_mpps,"
                       "mmio_sq_doorbells,polls,bytes_per_poll,poll_tlps,poll_link_mbytes_per_s",
    "qp_ctx_cache": "contexts,entries,active_qps,rate_messages,window_us,msg_rate_mpps,hit_rate_a,hit_rate_b,fetches,"
                    "ctx_read_bytes,ctx_write_bytes,wqes_per_wqe_read,latency_messages,latency_mean_us,latency_max_us,"
                    "latency_fetches_per_msg",
}

PER = 5000  # core period (ps) at 200 MHz
PS_PER_BYTE = 1000 / (16 * 8 * 128 / 130 / 8)  # Gen3 x16


def tlp(n):
    return round((n + 24) * PS_PER_BYTE)


def edge(t):
    return -(-t // PER) * PER


def read_ps(addr, length, mps=256, mrrs=512, rcb=64, latency=500000):
    """A DMA read issued at time 0 (a core edge) on an idle link: when its
    data is in (ps), and its request and completion TLP counts. Requests
    are cut at MRRS-aligned addresses and leave back to back; completions
    are at most MPS bytes and, but for a request's last, end on an RCB
    boundary (model/dma/pcie.h)."""
    up = down = r_free = 0
    reqs = cpls = 0
    a, end = addr, addr + length
    while a < end:
        r_end = min(end, (a // mrrs + 1) * mrrs)
        up += tlp(0)
        reqs += 1
        c = a
        while c < r_end:
            stop = c + mps
            if stop < r_end:
                stop -= stop % rcb
            stop = min(stop, r_end)
            down = max(down, up + latency) + tlp(stop - c)
            r_free = max(r_free + ((c % 64) + (stop - c) + 63) // 64 * PER, edge(down) + PER)
            cpls += 1
            c = stop
        a = r_end
    return r_free, reqs, cpls


def near(a, b, tol):
    return abs(a - b) <= tol


def check_shadow(data, check):
    f = float
    base = 0xA0000
    mmio = [r for r in data if r["doorbell"] == "mmio"]
    for r in data:
        nq, p = int(r["num_qp"]), int(r["poll_ns"])
        n_lat, n_rate = int(r["latency_messages"]), int(r["rate_messages"])
        check(near(f(r["msg_rate_mpps"]), n_rate / f(r["window_us"]), 0.0002), f"shadow_doorbell: rate {r}")
        if r["doorbell"] == "mmio":
            # One SQPIi write a post step: n_lat, the window's first, one per completion after it.
            check(int(r["mmio_sq_doorbells"]) == n_lat + 1 + (n_rate - 16), f"shadow_doorbell: MMIO doorbells {r}")
            check(int(r["polls"]) == 0, f"shadow_doorbell: MMIO mode polls {r}")
            continue
        check(int(r["mmio_sq_doorbells"]) == 0, f"shadow_doorbell: an SQPIi write in shadow mode {r}")
        size = 4 * (nq - 1)
        check(int(r["bytes_per_poll"]) == size, f"shadow_doorbell: table of QPs 2..{nq} {r}")
        d_ps, reqs, cpls = read_ps(base + 4, size)
        check(int(round(f(r["poll_read_ns"]) * 1000)) == d_ps, f"shadow_doorbell: read time {d_ps} ps {r}")
        check(int(r["poll_tlps"]) == int(r["polls"]) * (reqs + cpls), f"shadow_doorbell: {reqs}+{cpls} TLPs a poll {r}")
        # Reads every S = P max(1, ceil(D / P)), one in flight.
        s_ps = p * 1000 * max(1, -(-d_ps // (p * 1000)))
        check(abs(int(r["polls"]) - f(r["window_us"]) * 1e6 / s_ps) <= 1, f"shadow_doorbell: one poll every {s_ps} ps {r}")
        link = int(r["poll_tlps"]) * 24 + int(r["polls"]) * size
        check(near(f(r["poll_link_mbytes_per_s"]), link / f(r["window_us"]), 0.01), f"shadow_doorbell: traffic {r}")
        # The doorbell delay lies in [D, S + D] (X-SHADOW-DB-2).
        check(f(r["doorbell_delay_min_us"]) >= d_ps / 1e6 - 1e-4, f"shadow_doorbell: faster than a read {r}")
        check(f(r["doorbell_delay_max_us"]) <= (s_ps + d_ps) / 1e6 + 1e-4, f"shadow_doorbell: past the bound {r}")
        if mmio:
            check(f(r["doorbell_delay_min_us"]) > f(mmio[0]["doorbell_delay_max_us"]),
                  f"shadow_doorbell: a poll beat an MMIO write {r}")
    check(near(read_ps(base + 4, 28)[0], 510000, 0) and near(read_ps(base + 4, 1020)[0], 585000, 0),
          "shadow_doorbell: the read-time derivation (510 / 585 ns)")


def check_qpc(data, check):
    f = float
    on = {int(r["active_qps"]): r for r in data if r["contexts"] == "on_chip"}
    read256 = read_ps(0xC0000, 256)[0]
    miss = read256 + 4 * PER + PER  # the read, the write-back's 4 W beats, 1 cycle to install
    check(read256 == 525000 and miss == 550000, f"qp_ctx_cache: miss derivation {read256} {miss}")
    for r in data:
        q, k = int(r["active_qps"]), int(r["entries"])
        n = int(r["rate_messages"])
        check(n == max(4, 1024 // q) * q, f"qp_ctx_cache: messages {r}")
        check(near(f(r["msg_rate_mpps"]), n / f(r["window_us"]), 0.0002), f"qp_ctx_cache: rate {r}")
        check(int(r["ctx_read_bytes"]) == 256 * int(r["fetches"]), f"qp_ctx_cache: 256 bytes a fetch {r}")
        rounds = max(2, -(-32 // q))
        check(int(r["latency_messages"]) == (rounds - 1) * q, f"qp_ctx_cache: latency messages {r}")
        if r["contexts"] == "on_chip" or q <= k:
            # Every active QP installed at its enable: all hits, PG332's timing.
            check(r["hit_rate_a"] == "1.0000" and r["hit_rate_b"] == "1.0000" and int(r["fetches"]) == 0,
                  f"qp_ctx_cache: fits, yet misses {r}")
            if q in on:
                o = on[q]
                for col in ("window_us", "latency_mean_us", "latency_max_us", "wqes_per_wqe_read"):
                    check(r[col] == o[col], f"qp_ctx_cache: K >= Q differs from on chip in {col} {r}")
        else:
            # Full from the enables on: every fetch evicts, and is written back.
            check(r["ctx_write_bytes"] == r["ctx_read_bytes"], f"qp_ctx_cache: a write-back a fetch {r}")
            check(int(r["fetches"]) > 0 and f(r["hit_rate_b"]) < 1, f"qp_ctx_cache: no miss past K {r}")
            # One WRITE at a time, QPs in turn: the first K hit (installed
            # at enable), every later one misses at A's prefetcher and B's RX.
            m = rounds * q
            check(near(f(r["latency_fetches_per_msg"]), 2 * (m - k) / m, 0.0006), f"qp_ctx_cache: fetches {r}")
            if q in on:
                dl = f(r["latency_mean_us"]) - f(on[q]["latency_mean_us"])
                check(near(dl, 2 * miss / 1e6, 0.02), f"qp_ctx_cache: two misses ({2 * miss} ps) a message: {dl} {r}")


def check_ext_csv(name, data, check):
    if name == "shadow_doorbell":
        check_shadow(data, check)
    elif name == "qp_ctx_cache":
        check_qpc(data, check)
