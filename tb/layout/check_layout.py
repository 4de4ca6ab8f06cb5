#!/usr/bin/env python3
"""The walls of model/'s layout (design.md "Layout"; issue 14), from the
code's own #include lines.

  check_layout.py --root ROOT            check ROOT/model
  check_layout.py --root ROOT --selftest check that violations are caught

Rules:
1. Each folder of model/ includes only the folders ALLOWED names for it
   (besides itself): what it stands on. A folder not in the table is an
   error (a new folder says where it stands). model/system, the top, may
   include anything.
2. The folder graph has no cycle.
3. Inside model/ernic, PG332's blocks call down one order (ERNIC_ORDER):
   a file includes only the headers of blocks after its own.
4. A few files stand lower than their folder: model/host/host_memory.h
   (host memory, below the DMA engine; the driver in the same folder stands
   above) may be included where the rest of model/host may not; so may
   the driver (host/driver.h, host/driver_env.h, host/host_bus.h) by the
   bridge's client, and the switch's counter list and parameters
   (link/mac_params.h, link/switch_counters.h, link/switch_params.h,
   plain C++ including nothing of the model) by the scenario parser.
5. The driver is plain C++ (it also runs in a program outside the
   simulator, issue 15): model/host/driver*.{h,cpp} and host_bus.h include
   only regs, roce and each other, and no SystemC header.
Exit 0 when every rule holds; 1 listing each violation as
"FILE -> INCLUDED: why".
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

# What each folder stands on (include targets besides itself).
ALLOWED = {
    "roce": [],
    "regs": ["roce"],
    "trace": ["regs", "roce"],
    "monitor": ["regs", "roce"],
    "sim": ["monitor", "trace", "regs", "roce"],
    "qp": ["regs", "roce"],
    "link": ["sim", "trace", "regs", "roce"],
    "datapath": ["link", "sim", "trace", "regs", "roce"],
    "datapath/sc": ["datapath", "link", "sim", "trace", "regs", "roce"],
    "host": ["datapath", "link", "sim", "trace", "regs", "roce"],
    "dma": ["host/host_memory.h", "sim", "trace", "roce"],
    "mr": ["dma", "host/host_memory.h", "sim", "trace", "regs", "roce"],
    "qp_setup": ["datapath", "link", "sim", "trace", "regs", "roce"],
    "ernic": ["qp", "mr", "dma", "datapath", "datapath/sc", "link", "host/host_memory.h", "sim", "trace", "regs",
              "roce"],
    "scenario": ["link/mac_params.h", "link/switch_counters.h", "link/switch_params.h", "regs", "roce"],
    "bridge": ["host/host_memory.h", "link", "sim", "trace", "regs", "roce"],
    "peer": ["host/host_memory.h", "link", "sim", "trace", "regs", "roce"],
    "replay": ["host", "trace", "regs", "roce"],
    "bridge/client": ["bridge", "host/driver.h", "host/driver_env.h", "host/host_bus.h", "regs", "roce"],
    "system": None,  # the top: anything
}

# model/ernic's blocks, top first: a file includes only blocks after its own.
ERNIC_ORDER = ["ernic", "qp_mgr", "rx_pkt_hndler", "wqe_proc", "resp_hndler", "retry_buf", "wqe_cache",
               "interrupts", "qp_frame", "shadow_db", "qp_ctx_cache", "shared", "waveform", "config", "ext_config"]
# Files of a block named otherwise.
ERNIC_PART_OF = {"rx_responder": "rx_pkt_hndler", "resp_retry": "resp_hndler"}

# Every include: "model/X", <model/X>, and a quoted path relative to the
# including file that lands in model/ ("qp_mgr.h", "../system/system.h").
INCLUDE = re.compile(r'^\s*#\s*include\s+(?:"([^"]+)"|<(model/[^>]+)>)', re.M)


# Rule 5: the driver's files and what they may include.
PLAIN_DRIVER = re.compile(r"^host/(driver[^/]*|host_bus)\.(h|cpp)$")
PLAIN_DRIVER_MAY = re.compile(r"^(regs/|roce/|host/(driver[^/]*|host_bus)\.h$)")
SYSTEMC_INCLUDE = re.compile(r'^\s*#\s*include\s+[<"](systemc|tlm|sysc/)[^>"]*[>"]', re.M)


def folder_of(rel):
    """model-relative path -> its folder ('datapath/sc', 'ernic', ...)."""
    return os.path.dirname(rel)


def allowed(src_folder, target):
    rule = ALLOWED.get(src_folder)
    if rule is None:
        return True
    tf = folder_of(target)
    return tf == src_folder or tf in rule or target in rule


def ernic_block(rel):
    stem = os.path.splitext(os.path.basename(rel))[0]
    return ERNIC_PART_OF.get(stem, stem)


def resolve(model, src_dir, inc):
    """An include -> its model-relative path, or None (outside model/)."""
    if inc.startswith("model/"):
        return inc[len("model/"):]
    here = os.path.normpath(os.path.join(src_dir, inc))
    if os.path.exists(here):
        rel = os.path.relpath(here, model)
        if not rel.startswith(".."):
            return rel
    return None


def includes(root):
    model = os.path.join(root, "model")
    out = []
    for d, _, files in os.walk(model):
        for f in sorted(files):
            if not f.endswith((".h", ".cpp")):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, model)
            with open(path, encoding="utf-8", errors="replace") as fh:
                for m in INCLUDE.finditer(fh.read()):
                    target = resolve(model, d, m.group(1) or m.group(2))
                    if target:
                        out.append((rel, target))
    return out


def check(root):
    errs = []
    edges = {}
    for src, dst in includes(root):
        sf = folder_of(src)
        if sf not in ALLOWED:
            errs.append("model/%s: folder model/%s is not in the layout table (tb/layout/check_layout.py ALLOWED)"
                        % (src, sf))
            continue
        if not allowed(sf, dst):
            errs.append("model/%s -> model/%s: model/%s does not stand on model/%s" % (src, dst, sf, folder_of(dst)))
        if folder_of(dst) != sf:
            edges.setdefault(sf, set()).add(folder_of(dst))
        if sf == "ernic" and folder_of(dst) == "ernic":
            a, b = ernic_block(src), ernic_block(dst)
            if a in ERNIC_ORDER and b in ERNIC_ORDER and a != b and ERNIC_ORDER.index(b) < ERNIC_ORDER.index(a):
                errs.append("model/%s -> model/%s: %s calls up to %s (PG332's blocks call down: %s)"
                            % (src, dst, a, b, " > ".join(ERNIC_ORDER)))
            for blk in (a, b):
                if blk not in ERNIC_ORDER:
                    errs.append("model/%s -> model/%s: block '%s' is not in ERNIC_ORDER" % (src, dst, blk))
    model = os.path.join(root, "model")
    for src, dst in includes(root):
        if PLAIN_DRIVER.match(src) and not PLAIN_DRIVER_MAY.match(dst):
            errs.append("model/%s -> model/%s: the driver is plain C++ over a HostBus (regs, roce only)" % (src, dst))
    hd = os.path.join(model, "host")
    for f in sorted(os.listdir(hd)) if os.path.isdir(hd) else []:
        if PLAIN_DRIVER.match("host/" + f):
            with open(os.path.join(hd, f), encoding="utf-8", errors="replace") as fh:
                if SYSTEMC_INCLUDE.search(fh.read()):
                    errs.append("model/host/%s -> <systemc>: the driver is plain C++ over a HostBus" % f)
    # Cycles in the folder graph (depth-first search).
    state = {}

    def visit(n, stack):
        state[n] = 1
        for m in sorted(edges.get(n, ())):
            if state.get(m) == 1:
                errs.append("folder cycle: " + " -> ".join(stack[stack.index(m):] + [m]) if m in stack
                            else "folder cycle through " + m)
            elif not state.get(m):
                visit(m, stack + [m])
        state[n] = 2

    for n in sorted(edges):
        if not state.get(n):
            visit(n, [n])
    return sorted(set(errs))


def selftest(root):
    """Copies model/, plants one violation of each rule, expects each found."""
    tmp = tempfile.mkdtemp(prefix="layout_selftest_")
    try:
        shutil.copytree(os.path.join(root, "model"), os.path.join(tmp, "model"))

        def plant(rel, line):
            p = os.path.join(tmp, "model", rel)
            with open(p, "a") as f:
                f.write("\n" + line + "\n")

        plant("scenario/load.cpp", '#include "model/ernic/ernic.h"')          # a wall (rule 1)
        plant("roce/types.cpp", '#include "model/system/system.h"')           # the floor on the roof
        plant("ernic/resp_hndler.h", '#include "model/ernic/qp_mgr.h"')        # a block calling up (rule 3)
        plant("trace/vcd.cpp", '#include "model/sim/clock.h"')                # sim -> trace -> sim (rule 2)
        plant("dma/dma.h", '#include "model/host/driver.h"')                  # the driver below the DMA engine
        plant("ernic/wqe_cache.h", '#include "resp_hndler.h"')                 # a block calling up, relative path
        plant("roce/packet.cpp", '#include "../system/system.h"')              # up the layout, relative path
        plant("mr/mr_cache.h", '#include <model/host/driver.h>')              # up the layout, angle brackets
        plant("host/driver_cm.cpp", '#include <systemc>')                     # SystemC in the plain driver (rule 5)
        plant("host/driver_mr.cpp", '#include "model/link/axil.h"')            # the driver on the AXI4-Lite port
        errs = check(tmp)
        want = ["model/scenario/load.cpp -> model/ernic/ernic.h", "model/roce/types.cpp -> model/system/system.h",
                "model/ernic/resp_hndler.h -> model/ernic/qp_mgr.h: resp_hndler calls up to qp_mgr",
                "model/trace/vcd.cpp -> model/sim/clock.h", "folder cycle: ",
                "model/dma/dma.h -> model/host/driver.h",
                "model/ernic/wqe_cache.h -> model/ernic/resp_hndler.h: wqe_cache calls up to resp_hndler",
                "model/roce/packet.cpp -> model/system/system.h", "model/mr/mr_cache.h -> model/host/driver.h",
                "model/host/driver_cm.cpp -> <systemc>",
                "model/host/driver_mr.cpp -> model/link/axil.h: the driver is plain C++"]
        missing = [w for w in want if not any(w in e for e in errs)]
        for e in errs:
            print("found: " + e)
        if missing:
            print("NOT FOUND: " + "; ".join(missing))
            return 1
        print("layout check catches a wall crossed, the floor including the roof, a block calling up, a folder "
              "cycle, the driver below the DMA engine, SystemC or the AXI4-Lite port in the plain driver; quoted "
              "relative and <model/...> includes too")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args()
    if a.selftest:
        return selftest(a.root)
    errs = check(a.root)
    for e in errs:
        print(e)
    if errs:
        return 1
    print("layout: every include of model/ stands on what the table allows; no folder cycle; "
          "model/ernic's blocks call down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
