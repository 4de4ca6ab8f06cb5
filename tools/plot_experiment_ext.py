"""The plots of the model-extension experiments of `ernic-sim experiment`
(tools/experiment_sweeps_shadow.cpp, tools/experiment_sweeps_qpc.cpp):
shadow_doorbell and qp_ctx_cache. tools/plot_experiment.py takes LAYOUTS
from here; the same conventions: units on every axis, the seed's claim or
PG332's mode as a grey dashed reference, the model's curves solid, bounds
dotted; no date or version metadata in the PNG.
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

CLAIM = dict(color="0.3", linestyle="--", linewidth=1.6, zorder=10)
BOUND = dict(linestyle=":", linewidth=1.3)


from plot_common import num, save  # noqa: E402,F401


def log2_axis(ax, xs):
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs)
    ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.get_xaxis().set_minor_locator(matplotlib.ticker.NullLocator())


def shadow_doorbell(data, png):
    fig, (ax, ax2, ax3) = plt.subplots(1, 3, figsize=(15, 4.6))
    mmio = [r for r in data if r["doorbell"] == "mmio"]
    sh8 = sorted([r for r in data if r["doorbell"] == "shadow" and r["num_qp"] == "8"], key=lambda r: num(r, "poll_ns"))
    sh256 = sorted([r for r in data if r["doorbell"] == "shadow" and r["num_qp"] == "256"],
                   key=lambda r: num(r, "poll_ns"))
    xs = [num(r, "poll_ns") for r in sh8]
    if mmio:
        m = mmio[0]
        ax.axhline(num(m, "latency_mean_us"), label="MMIO doorbell (PG332): latency", **CLAIM)
        ax.axhline(num(m, "doorbell_delay_mean_us"), color="0.7", linestyle="--", linewidth=1.0,
                   label="MMIO doorbell: doorbell delay")
        ax2.axhline(num(m, "msg_rate_mpps"), label="MMIO doorbell (PG332)", **CLAIM)
    ax.plot(xs, [num(r, "latency_mean_us") for r in sh8], "o-", color="C0", label="shadow: latency (post to CQE)")
    ax.plot(xs, [num(r, "doorbell_delay_mean_us") for r in sh8], "s-", color="C1",
            label="shadow: doorbell delay (post to NIC), mean")
    ax.plot(xs, [num(r, "doorbell_delay_max_us") for r in sh8], "^", color="C1", alpha=0.6, label="doorbell delay, max")
    # X-SHADOW-DB-2's bound: reads every S = P max(1, ceil(D / P)), the
    # doorbell taken by the first read issued after the post: S + D.
    def bound(r):
        p, d = num(r, "poll_ns"), num(r, "poll_read_ns")
        return (p * max(1, -(-d // p)) + d) / 1000
    ax.plot(xs, [bound(r) for r in sh8], color="C1", alpha=0.7, label="bound S + D (S = P max(1, ceil(D/P)))",
            **BOUND)
    ax.set_xscale("log")
    ax.set_xlabel("poll interval P (ns, log)")
    ax.set_ylabel("microseconds")
    ax.set_title("WRITEs (64 B .. 4 KiB) one at a time")
    ax.legend(fontsize=7)
    ax2.plot(xs, [num(r, "msg_rate_mpps") for r in sh8], "o-", color="C0", label="shadow doorbell (8-QP table)")
    if sh256:
        ax2.plot([num(r, "poll_ns") for r in sh256], [num(r, "msg_rate_mpps") for r in sh256], "x--", color="C2",
                 label="shadow doorbell (256-QP table)")
    ax2.set_xscale("log")
    ax2.set_xlabel("poll interval P (ns, log)")
    ax2.set_ylabel("message rate (Mmsg/s)")
    ax2.set_title(f"Closed loop, 16 outstanding ({sh8[0]['rate_messages'] if sh8 else ''} WRITEs of 64 B)")
    ax2.set_ylim(bottom=0)
    ax2.legend(fontsize=8)
    for rs, c, lab in ((sh8, "C0", "8-QP table (28 B a poll)"), (sh256, "C2", "256-QP table (1020 B a poll)")):
        if not rs:
            continue
        ax3.plot([num(r, "poll_ns") for r in rs], [num(r, "poll_link_mbytes_per_s") for r in rs], "o-", color=c,
                 label=lab)
    ax3.set_xscale("log")
    ax3.set_yscale("log")
    ax3.set_xlabel("poll interval P (ns, log)")
    ax3.set_ylabel("PCIe link bytes of the polls (MB/s, log)")
    ax3.set_title("Poll traffic (requests + completions)")
    ax3.text(0.03, 0.04, "seed 003: shadow doorbells \"reduce MMIO writes\":\n"
             f"SQPIi writes {mmio[0]['mmio_sq_doorbells'] if mmio else '?'} (MMIO) -> 0 (shadow)",
             transform=ax3.transAxes, fontsize=8, color="0.3")
    ax3.legend(fontsize=8)
    save(fig, png)


def qp_ctx_cache(data, png):
    fig, (ax, ax2, ax3) = plt.subplots(1, 3, figsize=(15, 4.6))
    ks = sorted({int(r["entries"]) for r in data})
    qs = sorted({int(r["active_qps"]) for r in data})
    for i, k in enumerate(ks):
        pts = sorted([r for r in data if int(r["entries"]) == k], key=lambda r: int(r["active_qps"]))
        x = [int(r["active_qps"]) for r in pts]
        if k == 0:
            ax2.plot(x, [num(r, "msg_rate_mpps") for r in pts], label="on chip (PG332, full-hardware QP)", **CLAIM)
            ax3.plot(x, [num(r, "latency_mean_us") for r in pts], label="on chip (PG332, full-hardware QP)", **CLAIM)
            continue
        c = f"C{i - 1}"
        ax.plot(x, [100 * num(r, "hit_rate_b") for r in pts], "o-", color=c, label=f"K = {k}: B (responder)")
        ax.plot(x, [100 * num(r, "hit_rate_a") for r in pts], "x--", color=c, label=f"K = {k}: A (requester)")
        ax.axvline(k, color=c, alpha=0.3, **BOUND)
        ax2.plot(x, [num(r, "msg_rate_mpps") for r in pts], "o-", color=c, label=f"cache of K = {k}")
        ax3.plot(x, [num(r, "latency_mean_us") for r in pts], "o-", color=c, label=f"cache of K = {k}")
    for a in (ax, ax2, ax3):
        log2_axis(a, qs)
        a.set_xlabel("active QPs (log2)")
    ax.set_ylabel("context hit rate (%)")
    ax.set_ylim(-5, 105)
    ax.set_title("Hit rate, streaming (dotted: Q = K)")
    ax.legend(fontsize=7)
    ax2.set_ylabel("message rate (Mmsg/s)")
    ax2.set_ylim(bottom=0)
    ax2.set_title("64-byte WRITEs posted at once")
    ax2.legend(fontsize=8)
    ax3.set_ylabel("latency, post to CQE (us)")
    ax3.set_ylim(bottom=0)
    ax3.set_title("One WRITE at a time, QPs in turn")
    ax3.text(0.03, 0.4, "seed 003: half-hardware QPs: \"every context\naccess crosses PCIe, latency a bit higher\"",
             transform=ax3.transAxes, fontsize=8, color="0.3")
    ax3.legend(fontsize=8, loc="lower right")
    save(fig, png)


LAYOUTS = {"shadow_doorbell": shadow_doorbell, "qp_ctx_cache": qp_ctx_cache}
