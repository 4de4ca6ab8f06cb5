#!/usr/bin/python3
"""Checks `ernic-sim experiment` (tools/experiment.h) for the test suite.

  check_experiment.py --sim build/ernic-sim --out DIR NAME [--size quick|full] [--twice]
  check_experiment.py --sim build/ernic-sim --out DIR --cli

NAME: one experiment (or `all`). It runs `ernic-sim experiment NAME --size S
--out DIR/a`; with --twice again into DIR/b and the CSVs and report.md must
be byte-identical (simulated figures only). Then each CSV's columns, a few
values against figures derived here by hand (the wire and the PCIe
TLP-overhead formulas, counts), and each PNG's signature. --cli checks
--list, an unknown name and a bad --size (exit 2).
"""
import argparse
import csv
import os
import subprocess
import sys

COLUMNS = {
    "bandwidth": "datapath,op,bytes,iterations,bw_peak_gbps,bw_average_gbps,msg_rate_mpps,wire_limit_gbps",
    "pcie_mps": "lanes,mps,mrrs,op,bytes,iterations,bw_average_gbps,msg_rate_mpps,tlp_payload_bytes,"
                "pcie_formula_gbps,wire_limit_gbps",
    "mr_cache": "op,mr_lookup,cam_entries,active_mrs,messages,lookups,hits,misses,compulsory_misses,capacity_misses,"
                "hit_rate,warm_hit_rate,window_us,msg_rate_mmsgs",
    "qp_count": "op,bytes,qps,messages,messages_per_qp,window_us,bw_gbps,msg_rate_mpps,wire_limit_gbps",
    "doorbell_batch": "op,bytes,wqes_per_doorbell,messages,doorbells,window_us,msg_rate_mpps,latency_mean_us,"
                      "latency_max_us",
    "doorbell_latency": "op,bytes,wqes_per_doorbell,interarrival_us,messages,doorbells,window_us,msg_rate_mpps,"
                        "submit_latency_mean_us,submit_latency_max_us,doorbell_latency_mean_us,batch_wait_mean_us",
    "cqe_batch": "cq_head,outstanding,batch,messages,elapsed_us,msg_rate_mpps,cqhead_reads,cqhead_reads_per_msg,"
                 "cqhead_writes,doorbells",
    "doorbell_line": "layout,op,qps,messages,window_us,msg_rate_mpps,doorbell_writes,doorbell_lines,pcie_up_tlps,"
                     "pcie_up_payload_bytes",
    "cm_setup": "method,batch,connections,total_us,connections_per_s,latency_mean_us,latency_max_us,cm_mads,"
                "mmio_reads,mmio_writes,fsm_command_us,fsm_adopt_us",
}

# The model extensions' experiments (shadow_doorbell, qp_ctx_cache): check_experiment_ext.py.
import check_experiment_ext  # noqa: E402

COLUMNS.update(check_experiment_ext.COLUMNS)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def near(a, b, tol):
    return abs(a - b) <= tol


def wire(op, size):
    # Worked out by hand: every packet at PMTU 4096 costs preamble/SFD 8 +
    # Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 + IFG 12 = 82
    # bytes; WRITE: RETH 16 on the first; READ response: AETH 4 on the first
    # and last (or only).
    n = max(1, -(-size // 4096))
    line = 0
    for k in range(n):
        pay = min(4096, size - k * 4096)
        ext = (16 if op == "write" and k == 0 else 0) + (4 if op == "read" and (k == 0 or k == n - 1) else 0)
        line += max(64, 14 + 20 + 8 + 12 + ext + pay + 4 + 4) + 20
    return 100.0 * size / line


def pcie(lanes, p):
    # model/dma/pcie.h: lanes x 8 GT/s x 128/130 bits, P / (P + 24) of it payload.
    return lanes * 8 * 128 / 130 * p / (p + 24)


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def check_csv(name, path):
    with open(path) as f:
        header = f.readline().strip()
    check(header == COLUMNS[name], f"{name}: columns {header!r}")
    data = rows(path)
    check(len(data) > 0, f"{name}: no rows")
    f = float
    if name == "bandwidth":
        for r in data:
            b = int(r["bytes"])
            check(near(f(r["wire_limit_gbps"]), wire(r["op"], b), 0.001), f"bandwidth: wire limit {r}")
            check(f(r["bw_peak_gbps"]) <= f(r["wire_limit_gbps"]) + 0.01, f"bandwidth: faster than the wire {r}")
            check(near(f(r["msg_rate_mpps"]) * b * 8 / 1000, f(r["bw_average_gbps"]), 0.01),
                  f"bandwidth: Mpps x size != BW {r}")
        w64k = [r for r in data if r["op"] == "write" and r["bytes"] == "65536"]
        check(w64k and f(w64k[0]["bw_average_gbps"]) > 85, "bandwidth: 64 KiB WRITEs near line rate")
        check(near(wire("write", 16384), 16384 * 100 / (4 * (4096 + 82) + 16), 1e-9), "wire formula")
    elif name == "pcie_mps":
        for r in data:
            p = min(int(r["mps"]), int(r["mrrs"]))
            check(int(r["tlp_payload_bytes"]) == p, f"pcie_mps: TLP payload {r}")
            check(near(f(r["pcie_formula_gbps"]), pcie(int(r["lanes"]), p), 0.001), f"pcie_mps: formula {r}")
        check(near(pcie(8, 512) / pcie(8, 128), 1.1343, 0.0001), "the formula's MPS 128 -> 512 gain is +13.4 %")
        check(near(pcie(8, 128), 53.066, 0.001), "Gen3 x8 MPS 128: 53.066 Gb/s")

        def get(lanes, mps, size):
            v = [r for r in data if r["op"] == "write" and int(r["lanes"]) == lanes and int(r["mps"]) == mps
                 and r["mrrs"] == "512" and int(r["bytes"]) == size]
            return v[0] if v else None
        a, b = get(8, 128, 65536), get(8, 512, 65536)
        if a and b:
            g = f(b["bw_average_gbps"]) / f(a["bw_average_gbps"])
            check(1.05 < g < 1.5, f"pcie_mps: x8 64 KiB WRITE MPS 128 -> 512 gain {g:.3f} out of 1.05..1.5")
            check(f(b["bw_average_gbps"]) <= f(b["pcie_formula_gbps"]) + 0.01, "pcie_mps: above the PCIe formula")
        a, b = get(8, 128, 64), get(8, 512, 64)
        if a and b:
            g = f(b["msg_rate_mpps"]) / f(a["msg_rate_mpps"])
            check(0.98 < g < 1.02, f"pcie_mps: 64 B messages are one TLP whatever the MPS ({g:.3f})")
    elif name == "mr_cache":
        for r in data:
            k = int(r["active_mrs"])
            check(k == 8 and int(r["messages"]) == 128 and int(r["lookups"]) == 128, f"mr_cache: counts {r}")
            check(int(r["hits"]) + int(r["misses"]) == int(r["lookups"]), f"mr_cache: hits + misses {r}")
            check(near(f(r["msg_rate_mmsgs"]), 128 / f(r["window_us"]), 0.002), f"mr_cache: rate {r}")
            if r["mr_lookup"] == "cam":
                check(int(r["compulsory_misses"]) == k, f"mr_cache: one compulsory miss per MR {r}")
                if int(r["cam_entries"]) >= k:
                    check(int(r["capacity_misses"]) == 0 and r["warm_hit_rate"] == "1.0000", f"mr_cache: fits {r}")
                else:
                    check(int(r["capacity_misses"]) > 0, f"mr_cache: thrashes {r}")
        for op in ("read",):
            fit = [f(r["msg_rate_mmsgs"]) for r in data if r["op"] == op and r["mr_lookup"] == "cam"
                   and int(r["cam_entries"]) >= 8]
            thrash = [f(r["msg_rate_mmsgs"]) for r in data if r["op"] == op and r["mr_lookup"] == "cam"
                      and int(r["cam_entries"]) < 8]
            if fit and thrash:
                check(max(thrash) < min(fit), "mr_cache: READs slow down when the CAM thrashes")
    elif name == "qp_count":
        for r in data:
            n, q = int(r["messages"]), int(r["qps"])
            check(int(r["messages_per_qp"]) * q == n, f"qp_count: load split {r}")
            check(near(f(r["bw_gbps"]), n * int(r["bytes"]) * 8 / (f(r["window_us"]) * 1000), 0.01),
                  f"qp_count: BW from the window {r}")
            check(near(f(r["wire_limit_gbps"]), wire(r["op"], int(r["bytes"])), 0.001), f"qp_count: wire {r}")
            check(f(r["bw_gbps"]) <= f(r["wire_limit_gbps"]), f"qp_count: faster than the wire {r}")
    elif name in ("cqe_batch", "doorbell_line", "cm_setup"):
        check_host_csv(name, data)
    elif name in check_experiment_ext.COLUMNS:
        check_experiment_ext.check_ext_csv(name, data, check)
    elif name == "doorbell_batch":
        for r in data:
            n, b = int(r["messages"]), int(r["wqes_per_doorbell"])
            check(int(r["doorbells"]) * b == n, f"doorbell_batch: doorbells {r}")
            check(f(r["latency_mean_us"]) <= f(r["latency_max_us"]), f"doorbell_batch: mean <= max {r}")
            check(near(f(r["msg_rate_mpps"]), n / f(r["window_us"]), 0.002), f"doorbell_batch: rate {r}")
    elif name == "doorbell_latency":
        # One WQE a interval, a doorbell after every B-th: WQE j of a batch
        # waits (B - 1 - j) intervals for it, so the mean wait is (B - 1) / 2
        # intervals plus what B = 1 waits (the doorbell's MMIO write), to the
        # nanosecond. A WQE's latency is its wait plus its doorbell's time to
        # its CQE; the first of a batch waits longest.
        one = {r["op"]: r for r in data if r["wqes_per_doorbell"] == "1"}
        for r in data:
            n, b, ia = int(r["messages"]), int(r["wqes_per_doorbell"]), f(r["interarrival_us"])
            check(int(r["doorbells"]) * b == n, f"doorbell_latency: doorbells {r}")
            base = one.get(r["op"])
            check(base is not None, f"doorbell_latency: no B = 1 row for {r['op']}")
            if base is None:
                continue
            check(0.25 <= f(base["batch_wait_mean_us"]) < 0.3, f"doorbell_latency: B = 1 waits the MMIO write {base}")
            check(abs(f(r["batch_wait_mean_us"]) - ((b - 1) / 2 * ia + f(base["batch_wait_mean_us"]))) <= 0.001,
                  f"doorbell_latency: batch wait (B - 1) / 2 intervals {r}")
            check(abs(f(r["submit_latency_mean_us"]) - f(r["batch_wait_mean_us"]) - f(r["doorbell_latency_mean_us"]))
                  <= 0.002, f"doorbell_latency: latency = wait + doorbell to CQE {r}")
            check(f(r["submit_latency_max_us"]) >= (b - 1) * ia + f(base["submit_latency_mean_us"]) - 0.1,
                  f"doorbell_latency: the first of a batch waits B - 1 intervals {r}")
            check(f(r["doorbell_latency_mean_us"]) >= f(base["doorbell_latency_mean_us"]),
                  f"doorbell_latency: a batch is not served faster than one WQE {r}")
            check(near(f(r["msg_rate_mpps"]), n / f(r["window_us"]), 0.002), f"doorbell_latency: rate {r}")


def check_host_csv(name, data):
    """cqe_batch, doorbell_line, cm_setup (experiment_sweeps_host.cpp, experiment_sweeps_cm.cpp)."""
    f = float
    if name == "cqe_batch":
        for r in data:
            n, b = int(r["messages"]), int(r["batch"])
            # One SQPIi doorbell for the initial window, one per re-posted batch.
            check(int(r["doorbells"]) == 1 + n // b, f"cqe_batch: doorbells 1 + n/B {r}")
            # CQHEADi is read-only in PG332: software never writes it.
            check(int(r["cqhead_writes"]) == 0, f"cqe_batch: a CQHEADi write {r}")
            check(near(f(r["msg_rate_mpps"]), (n - b) / f(r["elapsed_us"]), 0.002), f"cqe_batch: rate {r}")
            if r["cq_head"] == "mirror":
                check(int(r["cqhead_reads"]) == 0, f"cqe_batch: the mirror needs no MMIO read {r}")
            else:
                # At least one look per batch taken; one per CQE with B = 1.
                check(int(r["cqhead_reads"]) >= n // b, f"cqe_batch: a CQHEADi read per batch at least {r}")
                if b == 1:
                    check(int(r["cqhead_reads"]) >= n, f"cqe_batch: B = 1 reads CQHEADi per CQE {r}")
                    # Each message waits for an MMIO read: 250 ns each way (A-PCIE-3) at least.
                    check(f(r["msg_rate_mpps"]) <= 1 / 0.5, f"cqe_batch: faster than an MMIO round trip {r}")

        def rate(head, b):
            v = [f(r["msg_rate_mpps"]) for r in data if r["cq_head"] == head and int(r["batch"]) == b]
            return v[0] if v else None
        m1, m8, r1, r8 = rate("mmio", 1), rate("mmio", 8), rate("mirror", 1), rate("mirror", 8)
        if m1 and m8:
            check(m8 / m1 >= 1.4, f"cqe_batch: batching 8 CQEs read by MMIO gains >= 40 % ({m8 / m1:.3f})")
        if r1 and r8:
            check(abs(r8 / r1 - 1) < 0.02, f"cqe_batch: with the mirror batching changes < 2 % ({r8 / r1:.3f})")
    elif name == "doorbell_line":
        groups = {}
        for r in data:
            n, q = int(r["messages"]), int(r["qps"])
            per_msg = 2 if r["op"] == "send" else 1  # SEND: A's CQ doorbell and B's RQ doorbell; WRITE: the CQ one
            check(int(r["doorbell_writes"]) == per_msg * n, f"doorbell_line: doorbell writes {r}")
            kinds = per_msg  # words written per QP, one node each
            want = {"qp_line": kinds * q, "spread": kinds * q,
                    # QPs 2..q+1 at pool + 8 (QPN - 1): line (QPN - 1) // 8 on each node
                    "shared_line": kinds * len({(qpn - 1) // 8 for qpn in range(2, q + 2)})}[r["layout"]]
            check(int(r["doorbell_lines"]) == want, f"doorbell_line: {want} lines expected {r}")
            check(near(f(r["msg_rate_mpps"]), n / f(r["window_us"]), 0.002), f"doorbell_line: rate {r}")
            groups.setdefault((r["op"], q), []).append(r)
        for k, g in groups.items():
            for col in ("window_us", "pcie_up_tlps", "pcie_up_payload_bytes"):
                check(len({r[col] for r in g}) == 1, f"doorbell_line: {k} {col} differs between layouts")
    elif name == "cm_setup":
        for r in data:
            k, b = int(r["connections"]), int(r["batch"])
            check(abs(f(r["connections_per_s"]) / (k / f(r["total_us"]) * 1e6) - 1) < 1e-3, f"cm_setup: rate {r}")
            check(f(r["latency_mean_us"]) <= f(r["latency_max_us"]) <= f(r["total_us"]), f"cm_setup: latencies {r}")
            if r["method"] == "cm":
                # REQ, REP, RTU per connection, none repeated.
                check(int(r["cm_mads"]) == 3 * k, f"cm_setup: 3 MADs a connection {r}")
                # Three legs, each with at least QP1's WQE fetch (500 ns, A-PCIE-2).
                check(f(r["latency_mean_us"]) >= 1.5, f"cm_setup: faster than three PCIe reads {r}")
                check(f(r["fsm_command_us"]) == 0 and f(r["fsm_adopt_us"]) == 0, f"cm_setup: no offload steps {r}")
            else:
                check(int(r["cm_mads"]) == 0, f"cm_setup: the offload sends no MAD {r}")
                # One at a time, a connection is its qp_setup then its qp_adopt.
                if b == 1:
                    check(near(f(r["latency_mean_us"]), f(r["fsm_command_us"]) + f(r["fsm_adopt_us"]), 0.002),
                          f"cm_setup: latency = command + adoption {r}")
        cm = {int(r["batch"]): f(r["connections_per_s"]) for r in data if r["method"] == "cm"}
        fsm = {int(r["batch"]): f(r["connections_per_s"]) for r in data if r["method"] == "qp_setup_fsm"}
        if 1 in cm and len(cm) > 1:
            check(max(cm.values()) > cm[1], "cm_setup: batched REQs raise the CM rate")
        if len(fsm) > 1:
            check(len(set(fsm.values())) == 1, "cm_setup: the offload's commands serialise: same rate in any grouping")


def run(sim, args):
    return subprocess.run([sim, "experiment"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", default="quick")
    ap.add_argument("--twice", action="store_true")
    ap.add_argument("--cli", action="store_true")
    ap.add_argument("name", nargs="?")
    a = ap.parse_args()
    if a.cli:
        r = run(a.sim, ["--list"])
        check(r.returncode == 0 and r.stdout.split() == list(COLUMNS), f"--list: {r.stdout!r}")
        r = run(a.sim, ["no_such_experiment", "--out", a.out])
        check(r.returncode == 2 and "no_such_experiment" in r.stderr, f"unknown name: {r.returncode} {r.stderr!r}")
        r = run(a.sim, ["bandwidth", "--size", "huge", "--out", a.out])
        check(r.returncode == 2 and "--size" in r.stderr, f"bad --size: {r.returncode} {r.stderr!r}")
        r = run(a.sim, [])
        check(r.returncode == 2, "no name: exit 2")
    else:
        names = list(COLUMNS) if a.name == "all" else [a.name]
        outs = [os.path.join(a.out, "a")] + ([os.path.join(a.out, "b")] if a.twice else [])
        for o in outs:
            r = run(a.sim, [a.name, "--size", a.size, "--out", o, "--jobs", "2"])
            check(r.returncode == 0, f"experiment {a.name} exit {r.returncode}:\n{r.stdout}\n{r.stderr}")
            # stdout is not a terminal here: no progress line (no carriage return).
            check("\r" not in r.stdout, "a progress line on a non-terminal stdout")
            check(not os.path.exists(os.path.join(o, "work")), "work/ left behind without --keep")
        for n in names:
            csv_a = os.path.join(outs[0], n + ".csv")
            check(os.path.exists(csv_a), f"{csv_a} missing")
            if not os.path.exists(csv_a):
                continue
            check_csv(n, csv_a)
            with open(os.path.join(outs[0], n + ".png"), "rb") as f:
                check(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{n}.png is not a PNG")
            if a.twice:
                with open(csv_a, "rb") as x, open(os.path.join(outs[1], n + ".csv"), "rb") as y:
                    check(x.read() == y.read(), f"{n}.csv differs between two runs")
        for rep in ("report.md", "report.html"):
            p = os.path.join(outs[0], rep)
            check(os.path.exists(p), f"{rep} missing")
            if a.twice and os.path.exists(p):
                with open(p, "rb") as x, open(os.path.join(outs[1], rep), "rb") as y:
                    check(x.read() == y.read(), f"{rep} differs between two runs")
        with open(os.path.join(outs[0], "report.md")) as f:
            md = f.read()
        for n in names:
            check(f"## {n}:" in md and f"({n}.png)" in md, f"report.md lacks the section of {n}")
        check(md.count("**Verdict:**") == len(names), f"report.md: one verdict per experiment ({len(names)})")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
