"""ernic_bridge: a Python program as the host of a simulated ERNIC node.

The Python side of the bridge (model/bridge/README.md): this module loads
the project's C library, libernic_bridge.so, with ctypes and wraps
ernic_bridge.h in a class, so a Python program drives a node whose scenario
says `host: program` exactly as a C program does (same messages, same
lock-step time, same wire). It also gives PG332's register offsets, fields
and field values, read from the register description the simulator, its
driver and the RTL share.

The library: Bridge(lib=PATH), else the environment variable
ERNIC_BRIDGE_LIB, which the simulator sets for the programs it starts (to
<build>/model/libernic_bridge.so); with neither, Bridge() raises
BridgeError. No path is built in.

The registers: model/regs/ernic_regs.def, found relative to this file
(<repo>/examples/python/ernic_bridge.py -> <repo>/model/regs/ernic_regs.def);
keep the module in the repository, or call load_regs(path=...) first. The
layout is the environment's ERNIC_LAYOUT (set by the simulator: "3.1" or
"4.x"), 3.1 when unset; Regs(layout) gives another.

    import ernic_bridge as eb
    with eb.Bridge() as nic:
        nic.write32(eb.reg("XRNICCONF"), eb.field_set("XRNICCONF", "EN", 1))
        head = nic.read32(eb.qpreg("CQHEADi", 2))
        bus, buf = nic.dma_alloc(4096)        # buf: a writable memoryview

Time is lock-step, as in C: simulated time advances only inside the calls
that wait (read32/read64, write32_sync, delay_ns, wait_irq, wait_event,
wait_until, close); Python code between calls takes no simulated time.

Errors: the C library's errors are sticky (after one, every call fails);
each method checks ernic_error() after its call and raises BridgeError with
its text. Bad arguments (an offset or value out of range, an unaligned
offset, a zero-byte or badly aligned allocation) raise ValueError before
anything reaches the library, so they do not end the session.
"""
import ctypes
import difflib
import os
import re

__all__ = [
    "Bridge", "BridgeError", "RegisterError", "Regs", "load_regs", "regs_def_path", "reg", "qpreg", "mrreg",
    "field_set", "field_get", "field_value", "QP_BLOCK_STRIDE", "MR_ENTRY_STRIDE", "WAIT_IRQ", "WAIT_DMA_WRITE",
]

# PG332: a QP's registers are a 256-byte block from QP1 on; an MR entry is
# 256 bytes (ernic_regs_c.h, model/regs/regs.h).
QP_BLOCK_STRIDE = 0x100
MR_ENTRY_STRIDE = 0x100
# What Bridge.wait_event / wait_until wait for (ERNIC_WAIT_IRQ, ERNIC_WAIT_DMA_WRITE).
WAIT_IRQ = 1
WAIT_DMA_WRITE = 2

_U32 = (1 << 32) - 1
_U64 = (1 << 64) - 1


class BridgeError(Exception):
    """The bridge failed: ernic_open_error() or ernic_error() text."""


class RegisterError(LookupError):
    """A register, field or value the register description (or the layout) lacks."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


# ---------------------------------------------------------------------------
# Registers (model/regs/ernic_regs.def, the X-macro file regs-gen generates)
# ---------------------------------------------------------------------------

def regs_def_path():
    """<repo>/model/regs/ernic_regs.def, relative to this module (<repo>/examples/python/)."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "model", "regs", "ernic_regs.def"))


def _split_args(text):
    """The arguments of one X-macro line: commas outside string literals split."""
    args, cur, quoted, i = [], [], False, 0
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\" and i + 1 < len(text):
                cur.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                quoted = False
            else:
                cur.append(c)
        elif c == '"':
            quoted = True
        elif c == ",":
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    args.append("".join(cur).strip())
    return args


_LINE = re.compile(r"^\s*(ERNIC_[A-Z_]+)\((.*)\)\s*$")


def _parse_def(path):
    """Every X-macro line of the .def: {macro: [args, ...]}."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = _LINE.match(line)
            if not m:
                continue
            try:
                out.setdefault(m.group(1), []).append(_split_args(m.group(2)))
            except Exception as e:  # pragma: no cover (regs-gen writes it)
                raise RegisterError("%s:%d: cannot parse: %s" % (path, n, e))
    return out


def _num(s):
    return int(s, 0)


def _suggest(name, known):
    close = difflib.get_close_matches(name, list(known), n=1)
    return " (did you mean '%s'?)" % close[0] if close else ""


class Regs:
    """PG332's registers for one layout ("3.1" or "4.x").

    layout: a layout's name or tag ("3.1"/"V31", "4.x"/"V4X"); None takes
    the environment's ERNIC_LAYOUT, "3.1" when unset. Fields exist per
    layout: the .def's layouts column, 1 = 3.1 only, 2 = 4.x only, 3 both.
    """

    def __init__(self, layout=None, path=None):
        self.path = path or regs_def_path()
        if not os.path.isfile(self.path):
            raise RegisterError("no register description at %s (ernic_bridge.py finds it at "
                                "../../model/regs/ernic_regs.def from itself; pass path=)" % self.path)
        d = _parse_def(self.path)
        layouts = {}
        for a in d.get("ERNIC_LAYOUT", []):
            tag, name = a[0], a[1]
            lay = {"tag": tag, "name": name, "gcsr": _num(a[2]), "qcsr": _num(a[3]), "mr": _num(a[4]),
                   "window": _num(a[5]), "max_qps": _num(a[6])}
            layouts[name.lower()] = layouts[tag.lower()] = lay
        if layout is None:
            layout = os.environ.get("ERNIC_LAYOUT") or "3.1"
        key = str(layout).strip().lower()
        if key not in layouts:
            raise RegisterError("unknown register layout '%s': %s" % (
                layout, ", ".join(sorted({l["name"] for l in layouts.values()}))))
        lay = layouts[key]
        self.layout = lay["name"]
        self.gcsr, self.qcsr, self.mrbase = lay["gcsr"], lay["qcsr"], lay["mr"]
        self.window, self.max_qps = lay["window"], lay["max_qps"]
        bit = 1 if lay["tag"] == "V31" else 2 if lay["tag"] == "V4X" else None
        if bit is None:  # a layout this module does not know how to select fields for
            raise RegisterError("layout %s (%s): no field column for it" % (lay["name"], lay["tag"]))
        # name -> offset within its block; qp1_exists for QP registers
        self.gregs = {a[0]: _num(a[1]) for a in d.get("ERNIC_GREG", [])}
        self.qregs = {a[0]: _num(a[1]) for a in d.get("ERNIC_QREG", [])}
        self.qp1_exists = {a[0]: a[4] == "true" for a in d.get("ERNIC_QREG", [])}
        self.mregs = {a[0]: _num(a[1]) for a in d.get("ERNIC_MREG", [])}
        # (register, field) -> (lsb, width), those of this layout
        self.fields = {}
        for a in d.get("ERNIC_FIELD", []):
            if _num(a[4]) & bit:
                self.fields[(a[0], a[1])] = (_num(a[2]), _num(a[3]))
        # (register, field, name) -> value
        self.values = {(a[0], a[1], a[2]): _num(a[3]) for a in d.get("ERNIC_ENUM_VALUE", [])}
        self._all_regs = set(self.gregs) | set(self.qregs) | set(self.mregs)

    def _check(self, off):
        if off + 4 > self.window:
            raise RegisterError("offset 0x%x is outside the %s layout's 0x%x-byte register window"
                                % (off, self.layout, self.window))
        return off

    def reg(self, name):
        """A global register's BAR0 offset (ERNIC_REG)."""
        if name not in self.gregs:
            raise RegisterError("unknown global register '%s'%s" % (name, _suggest(name, self.gregs)))
        return self._check(self.gcsr + self.gregs[name])

    def qpreg(self, name, qpn):
        """Register `name` of QP qpn's block (ERNIC_QPREG; blocks start at QP1)."""
        if name not in self.qregs:
            raise RegisterError("unknown QP register '%s'%s" % (name, _suggest(name, self.qregs)))
        if not isinstance(qpn, int) or qpn < 1:
            raise ValueError("QP number %r: QP blocks start at QP1" % (qpn,))
        return self._check(self.qcsr + (qpn - 1) * QP_BLOCK_STRIDE + self.qregs[name])

    def mrreg(self, name, index):
        """Register `name` of MR entry index (ERNIC_MRREG)."""
        if name not in self.mregs:
            raise RegisterError("unknown MR register '%s'%s" % (name, _suggest(name, self.mregs)))
        if not isinstance(index, int) or index < 0:
            raise ValueError("MR index %r: must be 0 or more" % (index,))
        return self._check(self.mrbase + index * MR_ENTRY_STRIDE + self.mregs[name])

    def field(self, reg, field):
        """(lsb, width) of reg's field in this layout."""
        f = self.fields.get((reg, field))
        if f is None:
            if reg not in self._all_regs:
                raise RegisterError("unknown register '%s'%s" % (reg, _suggest(reg, self._all_regs)))
            here = [fl for (r, fl) in self.fields if r == reg]
            raise RegisterError("register %s has no field %s in the %s layout%s" % (
                reg, field, self.layout, _suggest(field, here) if here else ""))
        return f

    def field_set(self, reg, field, value):
        """value placed in reg's field (ERNIC_SET); a value wider than the field raises ValueError."""
        lsb, width = self.field(reg, field)
        if not isinstance(value, int) or value < 0 or value >> width:
            raise ValueError("%s.%s is %d bits wide: %r does not fit" % (reg, field, width, value))
        return (value << lsb) & _U32

    def field_get(self, reg, field, raw):
        """reg's field of the register value raw (ERNIC_GET)."""
        lsb, width = self.field(reg, field)
        return (int(raw) >> lsb) & ((1 << width) - 1)

    def field_value(self, reg, field, name):
        """A field's named value (ERNIC_V_<reg>_<field>_<name>), e.g. ("QPCONFi", "PMTU", "MTU_4096")."""
        v = self.values.get((reg, field, name))
        if v is None:
            names = [n for (r, f, n) in self.values if (r, f) == (reg, field)]
            raise RegisterError("no value %s for %s.%s%s" % (name, reg, field, _suggest(name, names)))
        return v


_default = None


def load_regs(layout=None, path=None):
    """Sets (and returns) the Regs the module-level functions use."""
    global _default
    _default = Regs(layout, path)
    return _default


def _regs():
    return _default if _default is not None else load_regs()


def reg(name):
    return _regs().reg(name)


def qpreg(name, qpn):
    return _regs().qpreg(name, qpn)


def mrreg(name, index):
    return _regs().mrreg(name, index)


def field_set(reg, field, value):
    return _regs().field_set(reg, field, value)


def field_get(reg, field, raw):
    return _regs().field_get(reg, field, raw)


def field_value(reg, field, name):
    return _regs().field_value(reg, field, name)


# ---------------------------------------------------------------------------
# The library (ernic_bridge.h)
# ---------------------------------------------------------------------------

class _Handle(ctypes.Structure):
    """struct ernic_bridge (opaque)."""


_HandleP = ctypes.POINTER(_Handle)


class _Stats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("mmio_reads", "mmio_writes", "dma_reads", "dma_writes",
                                               "dma_read_bytes", "dma_write_bytes", "interrupts")]


_IRQ_HANDLER = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint16)

_PROTOTYPES = {
    # name: (restype, argtypes)
    "ernic_open": (_HandleP, [ctypes.c_char_p]),
    "ernic_open_error": (ctypes.c_char_p, []),
    "ernic_close": (ctypes.c_int, [_HandleP]),
    "ernic_error": (ctypes.c_char_p, [_HandleP]),
    "ernic_read32": (ctypes.c_uint32, [_HandleP, ctypes.c_uint32]),
    "ernic_write32": (None, [_HandleP, ctypes.c_uint32, ctypes.c_uint32]),
    "ernic_write32_sync": (ctypes.c_int, [_HandleP, ctypes.c_uint32, ctypes.c_uint32]),
    "ernic_read64": (ctypes.c_uint64, [_HandleP, ctypes.c_uint32]),
    "ernic_write64": (None, [_HandleP, ctypes.c_uint32, ctypes.c_uint64]),
    "ernic_dma_alloc": (ctypes.c_uint64, [_HandleP, ctypes.c_size_t, ctypes.c_size_t,
                                          ctypes.POINTER(ctypes.c_void_p)]),
    "ernic_dma_ptr": (ctypes.c_void_p, [_HandleP, ctypes.c_uint64, ctypes.c_size_t]),
    "ernic_mem_bytes": (ctypes.c_uint64, [_HandleP]),
    "ernic_now_ps": (ctypes.c_uint64, [_HandleP]),
    "ernic_delay_ns": (ctypes.c_int, [_HandleP, ctypes.c_uint64]),
    "ernic_wait_irq": (ctypes.c_int, [_HandleP, ctypes.c_uint64]),
    "ernic_wait_event": (ctypes.c_int, [_HandleP, ctypes.c_uint64, ctypes.c_uint]),
    "ernic_wait_until": (ctypes.c_int, [_HandleP, ctypes.c_uint64, ctypes.c_uint]),
    "ernic_set_irq_handler": (None, [_HandleP, _IRQ_HANDLER, ctypes.c_void_p]),
    "ernic_get_stats": (None, [_HandleP, ctypes.POINTER(_Stats)]),
}

_libs = {}


def _load(path):
    path = os.path.abspath(path)
    lib = _libs.get(path)
    if lib is None:
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise BridgeError("cannot load libernic_bridge from %s: %s" % (path, e))
        for name, (res, args) in _PROTOTYPES.items():
            try:
                fn = getattr(lib, name)
            except AttributeError:
                raise BridgeError("%s lacks %s(): not this project's libernic_bridge?" % (path, name))
            fn.restype, fn.argtypes = res, args
        _libs[path] = lib
    return lib


def _text(b):
    return b.decode("utf-8", "replace") if b is not None else None


def _u32(what, v):
    if not isinstance(v, int) or not 0 <= v <= _U32:
        raise ValueError("%s %r is not a 32-bit unsigned value" % (what, v))
    return v


def _u64(what, v):
    if not isinstance(v, int) or not 0 <= v <= _U64:
        raise ValueError("%s %r is not a 64-bit unsigned value" % (what, v))
    return v


def _offset(off):
    _u32("register offset", off)
    if off & 3:
        raise ValueError("register offset 0x%x is not 4-byte aligned" % off)
    return off


class Bridge:
    """One session with the simulator: the program is the node's host.

    addr: "unix:PATH" or "tcp:HOST:PORT"; None takes ERNIC_BRIDGE (set by
    the simulator). lib: the path of libernic_bridge.so; None takes
    ERNIC_BRIDGE_LIB. Host memory: ERNIC_BRIDGE_MEM_MIB MiB (default 64).

    close() ends the session; a program that exits without it fails its
    scenario step ("ends without closing"), so nothing closes it implicitly
    except the with-statement.
    """

    def __init__(self, addr=None, lib=None):
        if lib is None:
            lib = os.environ.get("ERNIC_BRIDGE_LIB")
        if not lib:
            raise BridgeError("no libernic_bridge: pass Bridge(lib=PATH) (e.g. <build>/model/libernic_bridge.so) "
                              "or set ERNIC_BRIDGE_LIB (the simulator sets it for the programs it starts)")
        self._lib = _load(lib)
        self.lib_path = os.path.abspath(lib)
        self._h = None
        self._views = []
        self._irq_cb = None
        self._irq_exc = None
        h = self._lib.ernic_open(addr.encode() if isinstance(addr, str) else addr)
        if not h:
            raise BridgeError(_text(self._lib.ernic_open_error()) or "ernic_open failed")
        self._h = h

    # -- plumbing ---------------------------------------------------------
    def _handle(self):
        if self._h is None:
            raise BridgeError("the session is closed")
        return self._h

    def _check(self):
        e = self._lib.ernic_error(self._h)
        if e is not None:
            raise BridgeError(_text(e))
        if self._irq_exc is not None:
            exc, self._irq_exc = self._irq_exc, None
            raise exc

    def error(self):
        """The session's first error (ernic_error), or None."""
        return _text(self._lib.ernic_error(self._h)) if self._h is not None else None

    @property
    def closed(self):
        return self._h is None

    # -- registers --------------------------------------------------------
    def read32(self, offset):
        v = self._lib.ernic_read32(self._handle(), _offset(offset))
        self._check()
        return v

    def write32(self, offset, value):
        """Posted: returns at once; the write follows in order."""
        self._lib.ernic_write32(self._handle(), _offset(offset), _u32("value", value))
        self._check()

    def write32_sync(self, offset, value):
        """Non-posted: returns once the write reached the NIC."""
        self._lib.ernic_write32_sync(self._handle(), _offset(offset), _u32("value", value))
        self._check()

    def read64(self, offset):
        """Two registers, low word at offset."""
        v = self._lib.ernic_read64(self._handle(), _offset(offset))
        self._check()
        return v

    def write64(self, offset, value):
        """Two posted writes, low word at offset."""
        self._lib.ernic_write64(self._handle(), _offset(offset), _u64("value", value))
        self._check()

    # -- memory -----------------------------------------------------------
    def _view(self, va, nbytes):
        mv = memoryview((ctypes.c_ubyte * nbytes).from_address(va)).cast("B")
        self._views.append(mv)
        return mv

    def dma_alloc(self, nbytes, align=4096):
        """Zeroed DMA-able memory: (bus address, writable memoryview of the
        program's memory, not a copy). Lives until close(), which releases
        the views it handed out (slices of them must not outlive it)."""
        if not isinstance(nbytes, int) or nbytes <= 0:
            raise ValueError("dma_alloc: %r bytes (must be 1 or more)" % (nbytes,))
        if not isinstance(align, int) or align <= 0 or align & (align - 1):
            raise ValueError("dma_alloc: alignment %r is not a power of two" % (align,))
        va = ctypes.c_void_p()
        bus = self._lib.ernic_dma_alloc(self._handle(), nbytes, align, ctypes.byref(va))
        self._check()
        if not bus or not va.value:
            raise BridgeError("ernic_dma_alloc(%d, %d): does not fit in the host memory (ERNIC_BRIDGE_MEM_MIB)"
                              % (nbytes, align))
        return bus, self._view(va.value, nbytes)

    def dma_view(self, bus, nbytes):
        """A memoryview of allocated bus addresses [bus, bus + nbytes) (ernic_dma_ptr), or None."""
        if nbytes <= 0:
            raise ValueError("dma_view: %r bytes" % (nbytes,))
        p = self._lib.ernic_dma_ptr(self._handle(), _u64("bus address", bus), nbytes)
        return self._view(p, nbytes) if p else None

    def mem_bytes(self):
        """Bytes of bus address space this session has (ERNIC_BRIDGE_MEM_MIB; ernic_mem_bytes)."""
        return self._lib.ernic_mem_bytes(self._handle())

    # -- time and interrupts ---------------------------------------------
    def now_ps(self):
        """Simulated time (ps) as of the last call."""
        return self._lib.ernic_now_ps(self._handle())

    def delay_ns(self, ns):
        """Lets the simulation run ns nanoseconds."""
        self._lib.ernic_delay_ns(self._handle(), _u64("delay", ns))
        self._check()

    def wait_irq(self, timeout_ns):
        """Waits up to timeout_ns of simulated time for the NIC's interrupt:
        True if one came (it is consumed), False on timeout."""
        r = self._lib.ernic_wait_irq(self._handle(), _u64("timeout", timeout_ns))
        self._check()
        return r == 1

    def wait_event(self, timeout_ns, what):
        """Waits up to timeout_ns of simulated time for what the program names
        (ernic_wait_event): WAIT_IRQ (the NIC's interrupt; consumed),
        WAIT_DMA_WRITE (the NIC's first DMA write into the program's memory
        during this call), or both. Returns the bits of what happened (0: the
        timeout)."""
        r = self._lib.ernic_wait_event(self._handle(), _u64("timeout", timeout_ns), self._what(what))
        self._check()
        return r

    def wait_until(self, deadline_ps, what):
        """wait_event with an absolute deadline in picoseconds of simulated time (ernic_wait_until)."""
        r = self._lib.ernic_wait_until(self._handle(), _u64("deadline", deadline_ps), self._what(what))
        self._check()
        return r

    @staticmethod
    def _what(what):
        if not isinstance(what, int) or what == 0 or what & ~(WAIT_IRQ | WAIT_DMA_WRITE):
            raise ValueError("wait: what = %r (WAIT_IRQ 1, WAIT_DMA_WRITE 2, at least one)" % (what,))
        return what

    def set_irq_handler(self, handler):
        """handler(vector) is called inside the library as each interrupt
        arrives (in any waiting call), before wait_irq sees it; None removes
        it. An exception it raises is raised by the call that was waiting."""
        h = self._handle()
        if handler is None:
            self._lib.ernic_set_irq_handler(h, _IRQ_HANDLER(), None)
            self._irq_cb = None
            return

        def tramp(_ctx, vector):
            try:
                handler(vector)
            except BaseException as e:  # ctypes would print and drop it
                if self._irq_exc is None:
                    self._irq_exc = e

        self._irq_cb = _IRQ_HANDLER(tramp)  # kept alive while installed
        self._lib.ernic_set_irq_handler(h, self._irq_cb, None)

    def stats(self):
        """Messages this program exchanged: mmio_reads, mmio_writes, dma_reads,
        dma_writes, dma_read_bytes, dma_write_bytes, interrupts."""
        s = _Stats()
        self._lib.ernic_get_stats(self._handle(), ctypes.byref(s))
        return {n: getattr(s, n) for n, _ in _Stats._fields_}

    # -- the end ----------------------------------------------------------
    def close(self):
        """Ends the session (TERMINATE) and frees its memory; raises
        BridgeError if the session had an error. Closing twice is a no-op."""
        if self._h is None:
            return
        err = _text(self._lib.ernic_error(self._h))
        for mv in self._views:  # the memory goes with the session
            try:
                mv.release()
            except BufferError:
                pass
        self._views = []
        h, self._h = self._h, None
        rc = self._lib.ernic_close(h)
        self._irq_cb = None
        if rc != 0:
            raise BridgeError(err or "ernic_close failed")

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            try:
                self.close()
            except BridgeError:
                pass  # the exception already on its way says more
        return False

    def __repr__(self):
        return "<ernic_bridge.Bridge %s>" % ("closed" if self._h is None else "open")
