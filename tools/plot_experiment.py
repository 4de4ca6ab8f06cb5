#!/usr/bin/python3
"""Draws one `ernic-sim experiment` CSV as a PNG (tools/experiment.h).

  python3 tools/plot_experiment.py NAME CSV PNG

NAME picks the layout (bandwidth, pcie_mps, mr_cache, qp_count,
doorbell_batch, cqe_batch, doorbell_line, cm_setup). Every axis has its unit; the seed's claim is drawn as a
reference line or point (grey, dashed / star), the model's curves solid,
the wire or PCIe limit dotted. Needs matplotlib (Debian: python3-matplotlib).
The PNG carries no date or version metadata, so the same CSV gives the same
file with the same matplotlib.
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

CLAIM = dict(color="0.45", linestyle="--", linewidth=1.2)
LIMIT = dict(linestyle=":", linewidth=1.3)


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


from plot_common import num, save  # noqa: E402,F401


def size_label(b):
    b = int(b)
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB" if b >= 1024 else f"{b} B"


def bandwidth(data, png):
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.6))
    colors = {"write": "C0", "read": "C1", "send": "C2"}
    dps = sorted({r["datapath"] for r in data}, key=lambda d: (d != "rtl", d))
    for dp in dps:
        for op in ("write", "read", "send"):
            pts = [r for r in data if r["datapath"] == dp and r["op"] == op]
            if not pts:
                continue
            x = [num(r, "bytes") for r in pts]
            style = dict(marker="o", linestyle="-") if dp == dps[0] else dict(marker="x", linestyle="none", markersize=7)
            ax.plot(x, [num(r, "bw_average_gbps") for r in pts], color=colors[op], label=f"{op.upper()} ({dp})", **style)
            ax2.plot(x, [num(r, "msg_rate_mpps") for r in pts], color=colors[op], label=f"{op.upper()} ({dp})", **style)
            if dp == dps[0]:
                ax.plot(x, [num(r, "wire_limit_gbps") for r in pts], color=colors[op], alpha=0.6,
                        label=f"wire limit, {op.upper()}", **LIMIT)
    ax.plot([16384], [95.4], marker="*", markersize=13, color="0.3", linestyle="none",
            label="PG332 reference design: 95.4 Gb/s WRITE")
    for a in (ax, ax2):
        a.set_xscale("log", base=2)
        a.set_xlabel("message size (bytes)")
        a.grid(True, which="both", alpha=0.3)
    ax.set_ylabel("bandwidth, average (Gb/s)")
    ax.set_ylim(0, 105)
    ax.set_title("Bandwidth vs message size (100 Gb/s, PCIe Gen3 x16)")
    ax2.set_yscale("log")
    ax2.set_ylabel("message rate (million messages/s)")
    ax2.set_title("Message rate vs message size")
    ax.legend(fontsize=7, loc="lower right")
    ax2.legend(fontsize=7, loc="lower left")
    save(fig, png)


def pcie_mps(data, png):
    lanes = sorted({int(r["lanes"]) for r in data})
    mrrs_all = sorted({int(r["mrrs"]) for r in data})
    mrrs = 512 if 512 in mrrs_all else mrrs_all[0]
    sizes = sorted({int(r["bytes"]) for r in data})
    big = [s for s in sizes if s > 64]
    fig, axes = plt.subplots(1, len(big) + 1, figsize=(5.2 * (len(big) + 1), 5.8))
    ops = sorted({r["op"] for r in data}, key=lambda o: o != "write")
    mk = {"write": "o", "read": "s"}
    for ai, size in enumerate(big):
        ax = axes[ai]
        for li, l in enumerate(lanes):
            for op in ops:
                pts = sorted([r for r in data if int(r["lanes"]) == l and r["op"] == op and int(r["bytes"]) == size
                              and int(r["mrrs"]) == mrrs], key=lambda r: int(r["mps"]))
                if not pts:
                    continue
                x = [int(r["mps"]) for r in pts]
                c = f"C{li * 2 + (op == 'read')}"
                ax.plot(x, [num(r, "bw_average_gbps") for r in pts], marker=mk[op], color=c,
                        label=f"model: {op.upper()}, Gen3 x{l}")
                if op == ops[0]:
                    ax.plot(x, [min(num(r, "pcie_formula_gbps"), num(r, "wire_limit_gbps")) for r in pts], color=c,
                            label=f"TLP-overhead formula, x{l} (min with wire)", **LIMIT)
                if op == "write":
                    base = num(pts[0], "bw_average_gbps")
                    ax.plot([x[0], x[-1]], [base, base * 1.3], marker="*", markersize=11,
                            label="seed 003: +30 % from MPS 128 to 512" if li == 0 else None, **CLAIM)
        wire = num([r for r in data if int(r["bytes"]) == size][0], "wire_limit_gbps")
        ax.axhline(wire, color="k", alpha=0.5, label=f"100 Gb/s wire limit ({wire:.1f})", **LIMIT)
        ax.set_xscale("log", base=2)
        ax.set_xticks([128, 256, 512])
        ax.set_xticklabels(["128", "256", "512"])
        ax.set_xlabel(f"PCIe MPS (bytes), MRRS {mrrs}")
        ax.set_ylabel("bandwidth, average (Gb/s)")
        ax.set_title(f"{size_label(size)} messages")
        ax.set_ylim(0, 105)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    ax = axes[-1]
    for li, l in enumerate(lanes):
        for op in ops:
            pts = sorted([r for r in data if int(r["lanes"]) == l and r["op"] == op and int(r["bytes"]) == 64
                          and int(r["mrrs"]) == mrrs], key=lambda r: int(r["mps"]))
            if pts:
                ax.plot([int(r["mps"]) for r in pts], [num(r, "msg_rate_mpps") for r in pts], marker=mk[op],
                        color=f"C{li * 2 + (op == 'read')}", label=f"model: {op.upper()}, Gen3 x{l}")
    ax.set_xscale("log", base=2)
    ax.set_xticks([128, 256, 512])
    ax.set_xticklabels(["128", "256", "512"])
    ax.set_ylim(bottom=0)
    ax.set_xlabel(f"PCIe MPS (bytes), MRRS {mrrs}")
    ax.set_ylabel("message rate (million messages/s)")
    ax.set_title("64 B messages")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    save(fig, png)


def mr_cache(data, png):
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.4))
    for i, op in enumerate(sorted({r["op"] for r in data}, key=lambda o: o != "read")):
        cam = sorted([r for r in data if r["op"] == op and r["mr_lookup"] == "cam"], key=lambda r: int(r["cam_entries"]))
        table = [r for r in data if r["op"] == op and r["mr_lookup"] == "table"]
        x = [int(r["cam_entries"]) for r in cam]
        ax.plot(x, [num(r, "msg_rate_mmsgs") for r in cam], marker="o", color=f"C{i}", label=f"{op.upper()}: CAM")
        ax2.plot(x, [100 * num(r, "hit_rate") for r in cam], marker="o", color=f"C{i}", label=f"{op.upper()}: hit rate")
        ax2.plot(x, [100 * num(r, "warm_hit_rate") for r in cam], marker="x", linestyle="--", color=f"C{i}",
                 label=f"{op.upper()}: warm hit rate")
        if table:
            t = num(table[0], "msg_rate_mmsgs")
            ax.axhline(t, color=f"C{i}", alpha=0.6, label=f"{op.upper()}: PG332 register table", **LIMIT)
            fit = [num(r, "msg_rate_mmsgs") for r in cam if int(r["cam_entries"]) >= int(r["active_mrs"])]
            if fit:
                ax.axhline(max(fit) / 2, label="seed 003: \"performance halves\"" if i == 0 else None, **CLAIM)
    k = int(data[0]["active_mrs"])
    for a in (ax, ax2):
        a.axvline(k, color="k", alpha=0.4, linestyle="-.", label=f"active MRs (QPs) = {k}")
        a.set_xlabel("MR cache (CAM) entries")
        a.grid(True, alpha=0.3)
        a.legend(fontsize=7, loc="lower right")
    ax.set_ylim(bottom=0)
    ax.set_ylabel("message rate, 64 B (million messages/s)")
    ax.set_title("Small-message rate vs CAM size (8 MRs in use)")
    ax2.set_ylim(-5, 105)
    ax2.set_ylabel("B's MR lookups that hit (%)")
    ax2.set_title("Hit rate vs CAM size")
    save(fig, png)


def qp_count(data, png):
    sizes = sorted({int(r["bytes"]) for r in data})
    fig, axes = plt.subplots(1, len(sizes), figsize=(5.6 * len(sizes), 4.4), squeeze=False)
    for ai, size in enumerate(sizes):
        ax = axes[0][ai]
        key = "bw_gbps" if size > 64 else "msg_rate_mpps"
        for i, op in enumerate(("write", "read")):
            pts = sorted([r for r in data if r["op"] == op and int(r["bytes"]) == size], key=lambda r: int(r["qps"]))
            if not pts:
                continue
            x = [int(r["qps"]) for r in pts]
            y = [num(r, key) for r in pts]
            ax.plot(x, y, marker="o", color=f"C{i}", label=f"model: {op.upper()}")
            ax.plot([1], [0.7 * max(y)], marker="*", markersize=12, color="0.45", linestyle="none",
                    label="seed 004: one QP = -30 % of the best" if i == 0 else None)
            ax.plot([1, x[-1]], [0.7 * max(y)] * 2, alpha=0.35, **{**CLAIM, "color": f"C{i}"})
            if key == "bw_gbps":
                ax.axhline(num(pts[0], "wire_limit_gbps"), color=f"C{i}", alpha=0.6,
                           label=f"wire limit, {op.upper()}", **LIMIT)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("QPs sharing the same offered load")
        ax.set_ylabel("bandwidth (Gb/s)" if key == "bw_gbps" else "message rate (million messages/s)")
        ax.set_ylim(bottom=0)
        ax.set_title(f"{size_label(size)} messages, {data[0]['messages']} in all")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    save(fig, png)


def doorbell_batch(data, png):
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.4))
    for i, op in enumerate(("write", "read")):
        pts = sorted([r for r in data if r["op"] == op], key=lambda r: int(r["wqes_per_doorbell"]))
        if not pts:
            continue
        x = [int(r["wqes_per_doorbell"]) for r in pts]
        ax.plot(x, [num(r, "msg_rate_mpps") for r in pts], marker="o", color=f"C{i}", label=f"model: {op.upper()} 64 B")
        ax.plot([x[-1]], [3 * num(pts[0], "msg_rate_mpps")], marker="*", markersize=12, color="0.45", linestyle="none",
                label="seed 004: batching = IOPS x3" if i == 0 else None)
        ax2.plot(x, [num(r, "latency_mean_us") for r in pts], marker="o", color=f"C{i}", label=f"{op.upper()}: mean")
        ax2.plot(x, [num(r, "latency_max_us") for r in pts], marker="x", linestyle="--", color=f"C{i}",
                 label=f"{op.upper()}: max")
    for a in (ax, ax2):
        a.set_xscale("log", base=2)
        a.set_xlabel("WQEs per doorbell")
        a.grid(True, which="both", alpha=0.3)
        a.legend(fontsize=7)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("message rate (million messages/s)")
    ax.set_title("Message rate vs doorbell batch (one QP)")
    ax2.set_ylabel("doorbell to CQE (us)")
    ax2.set_title("Latency vs doorbell batch (all posted at once)")
    save(fig, png)


def doorbell_latency(data, png):
    fig, ax = plt.subplots(1, 1, figsize=(7, 4.6))
    for i, op in enumerate(("write", "read")):
        pts = sorted([r for r in data if r["op"] == op], key=lambda r: int(r["wqes_per_doorbell"]))
        if not pts:
            continue
        x = [int(r["wqes_per_doorbell"]) for r in pts]
        ax.plot(x, [num(r, "submit_latency_mean_us") for r in pts], marker="o", color=f"C{i}",
                label=f"model: {op.upper()} 64 B, post to CQE (mean)")
        ax.plot(x, [num(r, "submit_latency_max_us") for r in pts], marker="x", linestyle="--", color=f"C{i}",
                label=f"{op.upper()}: max")
        ax.plot(x, [num(r, "doorbell_latency_mean_us") for r in pts], marker="s", linestyle="-.", color=f"C{i}",
                alpha=0.6, label=f"{op.upper()}: doorbell to CQE (mean)")
        # The batch wait alone: (B - 1) / 2 arrival intervals, on top of B = 1's latency.
        base, ia = num(pts[0], "submit_latency_mean_us"), num(pts[0], "interarrival_us")
        ax.plot(x, [base + (b - 1) / 2 * ia for b in x], color=f"C{i}", alpha=0.7,
                label=f"{op.upper()}: latency at one WQE a doorbell + (B - 1)/2 intervals", **LIMIT)
    ax.plot([], [], label="seed 003: submission latency rises with the batch", **CLAIM)
    ax.set_xscale("log", base=2)
    int_ticks(ax, [int(r["wqes_per_doorbell"]) for r in data])
    ax.set_xlabel("WQEs per doorbell (one WQE arrives every microsecond)")
    ax.set_ylabel("latency (us)")
    ax.set_ylim(bottom=0)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title("Submission latency vs doorbell batch (one QP)")
    save(fig, png)


def int_ticks(ax, xs):
    """Plain numbers on a log-2 axis (1, 2, 4 ... rather than powers)."""
    xs = sorted(set(xs))
    ax.set_xticks(xs)
    ax.set_xticklabels([str(x) for x in xs])
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())


def cqe_batch(data, png):
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.4))
    windows = sorted({int(r["outstanding"]) for r in data})
    colors = {"mmio": "C0", "mirror": "C1"}
    styles = ["--", "-"]
    for head in ("mmio", "mirror"):
        for wi, w in enumerate(windows):
            pts = sorted([r for r in data if r["cq_head"] == head and int(r["outstanding"]) == w],
                         key=lambda r: int(r["batch"]))
            if not pts:
                continue
            x = [int(r["batch"]) for r in pts]
            lab = f"CQ head {'by MMIO (CQHEADi)' if head == 'mmio' else 'from its mirror'}, {w} outstanding"
            style = dict(marker="o", color=colors[head], linestyle=styles[wi % 2])
            ax.plot(x, [num(r, "msg_rate_mpps") for r in pts], label=lab, **style)
            if head == "mmio":
                ax2.plot(x, [num(r, "cqhead_reads_per_msg") for r in pts], label=lab, **style)
    base = [r for r in data if r["cq_head"] == "mmio" and int(r["batch"]) == 1]
    if base:
        b = max(base, key=lambda r: int(r["outstanding"]))
        y0 = num(b, "msg_rate_mpps")
        ax.plot([1, 32], [y0, 1.4 * y0], marker="*", markersize=11, label="seed 000: +40 % with 32 CQEs a batch",
                **CLAIM)
    xs = sorted({int(r["batch"]) for r in data})
    ax2.plot(xs, [1.0 / x for x in xs], color="k", alpha=0.5, label="one CQHEADi read per batch (1/B)", **LIMIT)
    for a in (ax, ax2):
        a.set_xscale("log", base=2)
        int_ticks(a, xs + ([32] if a is ax else []))
        a.set_xlabel("CQEs handled per batch (B)")
        a.grid(True, which="both", alpha=0.3)
        a.legend(fontsize=7, loc="lower right" if a is ax else "upper right")
    ax.set_ylim(bottom=0)
    ax.set_ylabel("message rate, 64 B WRITE (million messages/s)")
    ax.set_title("Closed loop on one QP: rate vs CQE batch")
    ax2.set_ylim(bottom=0)
    ax2.set_ylabel("CQHEADi MMIO reads per message")
    ax2.set_title("CPU-visible MMIO reads of CQHEADi (mirror: none)")
    save(fig, png)


def doorbell_line(data, png):
    ops = [o for o in ("send", "write") if any(r["op"] == o for r in data)]
    fig, axes = plt.subplots(1, len(ops) + 1, figsize=(5.2 * (len(ops) + 1), 4.4))
    marks = {"qp_line": ("o", "C0", 9), "shared_line": ("x", "C1", 9), "spread": ("+", "C2", 12)}
    names = {"qp_line": "a line per QP (default)", "shared_line": "8 QPs per line (shared)",
             "spread": "a page per doorbell word"}
    for ai, op in enumerate(ops):
        ax = axes[ai]
        for lay, (m, c, ms) in marks.items():
            pts = sorted([r for r in data if r["op"] == op and r["layout"] == lay], key=lambda r: int(r["qps"]))
            if pts:
                ax.plot([int(r["qps"]) for r in pts], [num(r, "msg_rate_mpps") for r in pts], marker=m, color=c,
                        markersize=ms, linestyle="-" if lay == "qp_line" else "none", label=f"model: {names[lay]}")
        ref = sorted([r for r in data if r["op"] == op and r["layout"] == "qp_line"], key=lambda r: int(r["qps"]))
        if ref:
            ax.plot([int(r["qps"]) for r in ref], [1.15 * num(r, "msg_rate_mpps") for r in ref], marker="*",
                    markersize=10, label="seed 000: +15 % with the doorbells in one line", **CLAIM)
        ax.set_xscale("log", base=2)
        int_ticks(ax, [int(r["qps"]) for r in data])
        ax.set_ylim(bottom=0)
        ax.set_xlabel("QPs carrying the messages")
        ax.set_ylabel("message rate, 64 B (million messages/s)")
        ax.set_title(f"64 B {op.upper()}s: rate by doorbell layout")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    ax = axes[-1]
    op = ops[0]
    for lay, (m, c, ms) in marks.items():
        pts = sorted([r for r in data if r["op"] == op and r["layout"] == lay], key=lambda r: int(r["qps"]))
        if pts:
            ax.plot([int(r["qps"]) for r in pts], [int(r["doorbell_lines"]) for r in pts], marker=m, color=c,
                    markersize=ms, label=f"64-byte lines hit: {names[lay]}")
            ax.plot([int(r["qps"]) for r in pts], [int(r["doorbell_writes"]) / int(r["messages"]) for r in pts],
                    marker=m, color=c, markersize=ms, alpha=0.5, linestyle=":",
                    label="doorbell write TLPs per message" if lay == "qp_line" else None)
    ax.set_xscale("log", base=2)
    int_ticks(ax, [int(r["qps"]) for r in data])
    ax.set_ylim(bottom=0)
    ax.set_xlabel("QPs carrying the messages")
    ax.set_ylabel("count")
    ax.set_title(f"{op.upper()}: where the doorbells land, and how many")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    save(fig, png)


def cm_setup(data, png):
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.4))
    names = {"cm": "driver's CM (REQ/REP/RTU on QP1)", "qp_setup_fsm": "qp_setup_fsm offload + adopt"}
    for i, m in enumerate(("cm", "qp_setup_fsm")):
        pts = sorted([r for r in data if r["method"] == m], key=lambda r: int(r["batch"]))
        if not pts:
            continue
        x = [int(r["batch"]) for r in pts]
        ax.plot(x, [num(r, "connections_per_s") for r in pts], marker="o", color=f"C{i}", label=f"model: {names[m]}")
        ax2.plot(x, [num(r, "latency_mean_us") for r in pts], marker="o", color=f"C{i}", label=f"{names[m]}: mean")
        ax2.plot(x, [num(r, "latency_max_us") for r in pts], marker="x", linestyle="--", color=f"C{i}",
                 label=f"{names[m]}: max")
    ax.axhline(1500, label="seed 001: 1500+ connections/s", **CLAIM)
    ax2.axhline(15000, color="0.6", linestyle="-.", linewidth=1.2, label="seed 001: 15 ms before")
    ax2.axhline(8000, label="seed 001: 8 ms after (pre-allocation, batched REQs)", **CLAIM)
    for a in (ax, ax2):
        a.set_xscale("log", base=2)
        int_ticks(a, [int(r["batch"]) for r in data])
        a.set_yscale("log")
        a.set_xlabel("connections set up together (batch)")
        a.grid(True, which="both", alpha=0.3)
        a.legend(fontsize=7, loc="center right")
    ax.set_ylabel("connections per second")
    ax.set_title(f"Set-up rate ({data[0]['connections']} connections)")
    ax2.set_ylabel("set-up latency per connection (us)")
    ax2.set_title("Set-up latency")
    save(fig, png)


LAYOUTS = {"bandwidth": bandwidth, "pcie_mps": pcie_mps, "mr_cache": mr_cache, "qp_count": qp_count,
           "doorbell_batch": doorbell_batch,
           "doorbell_latency": doorbell_latency, "cqe_batch": cqe_batch, "doorbell_line": doorbell_line,
           "cm_setup": cm_setup}
# The model extensions' experiments (shadow_doorbell, qp_ctx_cache): tools/plot_experiment_ext.py.
from plot_experiment_ext import LAYOUTS as _EXT_LAYOUTS  # noqa: E402

LAYOUTS.update(_EXT_LAYOUTS)


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in LAYOUTS:
        print(__doc__, file=sys.stderr)
        return 2
    data = rows(sys.argv[2])
    if not data:
        print(f"plot_experiment: {sys.argv[2]}: no rows", file=sys.stderr)
        return 1
    LAYOUTS[sys.argv[1]](data, sys.argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main())
