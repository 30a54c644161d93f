"""Call cutec host functions with torch tensors through the runtime's C ABI (libcute_runtime.so, ctypes).

Started from the team's ../shared/peers/cutec_ctypes.py (same structs, same stream choice) with:
  * errors from the C ABI raised as CuteError, which carries the status code, its name
    (cute_status_name) and the runtime's message (cute_last_error);
  * Host.check / Host.call / Host.bind; bind() checks once and returns a zero-argument callable
    for timing loops;
  * read_manifest() and host_signatures(): the cubin's manifest read on the host (no GPU, no
    torch: cute_manifest_read_file);
  * scalar arguments (Scalar) beside tensors.

Tensors: any CUDA torch tensor of a dtype in DTYPES (bf16, f16, f32, ...). The view passed is the
tensor's own shape and strides (in elements), so a transposed view `B.t()` is passed as such; `bytes`
is what the storage holds from the tensor's first element, so the runtime's bound check applies.

Stream: calls go on the legacy default stream (cute_stream_default), the stream torch records its
events on unless the caller changed torch's current stream; CUDA events recorded by torch around a
call therefore bracket it exactly as they bracket a torch kernel. The runtime opens the device's
primary context, the one torch uses, so torch's device pointers are valid in it.
"""
import ctypes as C
import os

MAX_LEAVES = 16
ARG_TENSOR, ARG_SCALAR = 1, 2
# cute_dtype codes (runtime/include/cute_runtime.h), keyed by torch's dtype name.
DTYPES = {"int8": 1, "int16": 2, "int32": 3, "int64": 4, "uint8": 5, "uint16": 6, "uint32": 7, "uint64": 8,
          "float16": 9, "bfloat16": 10, "float32": 12, "float64": 13,
          "float8_e4m3fn": 14, "float8_e5m2": 15, "bool": 16}

# cute_status codes.
OK, UNAVAILABLE, ARGUMENT_MISMATCH, INVALID_ARGUMENT, INVALID_LAUNCH, NOT_FOUND = 0, 1, 2, 3, 4, 5
INVALID_IMAGE, IO, DRIVER, NO_MANIFEST, INTERNAL = 6, 7, 8, 9, 10
# Statuses by which a host call refuses its arguments (nothing launched): argument checks,
# `require` lines and partial tiles (ARGUMENT_MISMATCH), bad values (INVALID_ARGUMENT), grids out
# of range (INVALID_LAUNCH).
REFUSALS = (ARGUMENT_MISMATCH, INVALID_ARGUMENT, INVALID_LAUNCH)


class CuteError(RuntimeError):
    """A failing C-ABI call: .status (int), .status_name, .message (cute_last_error), .what (the call)."""

    def __init__(self, what, status, status_name, message):
        super().__init__(f"{what}: {status_name} ({status}): {message}")
        self.what, self.status, self.status_name, self.message = what, status, status_name, message

    @property
    def refused(self):
        return self.status in REFUSALS


class Tensor(C.Structure):
    _fields_ = [("ptr", C.c_uint64), ("dtype", C.c_int32), ("nleaves", C.c_int32),
                ("shape", C.c_int64 * MAX_LEAVES), ("stride", C.c_int64 * MAX_LEAVES), ("bytes", C.c_uint64)]


class _Val(C.Union):
    _fields_ = [("tensor", C.POINTER(Tensor)), ("i", C.c_int64), ("u", C.c_uint64), ("f", C.c_double)]


class Arg(C.Structure):
    _fields_ = [("kind", C.c_int32), ("dtype", C.c_int32), ("value", _Val)]


class Scalar:
    """A scalar argument: Scalar("int32", 5), Scalar("float32", 0.5). (f16/bf16 scalars: pass the bits as
    Scalar("float16", bits, bits=True).)"""

    def __init__(self, dtype, value, bits=False):
        if dtype not in DTYPES:
            raise ValueError(f"unknown scalar dtype {dtype!r}; known: {', '.join(DTYPES)}")
        self.dtype, self.value, self.bits = dtype, value, bits


def _dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def tensor_of(t):
    """A cute_tensor view of a CUDA torch tensor: pointer, dtype, shape and strides in elements, bytes."""
    name = _dtype_name(t)
    if name not in DTYPES:
        raise TypeError(f"torch dtype {t.dtype} has no cute_dtype (supported: {', '.join(DTYPES)})")
    if not t.is_cuda:
        raise ValueError(f"a {tuple(t.shape)} {name} tensor on {t.device}: host functions need CUDA tensors")
    if t.dim() > MAX_LEAVES:
        raise ValueError(f"rank {t.dim()} > {MAX_LEAVES}")
    v = Tensor()
    v.ptr = t.data_ptr()
    v.dtype = DTYPES[name]
    v.nleaves = t.dim()
    for i, (s, d) in enumerate(zip(t.shape, t.stride())):
        v.shape[i] = s
        v.stride[i] = d
    v.bytes = t.untyped_storage().nbytes() - t.storage_offset() * t.element_size()
    return v


def _marshal(values):
    """(Arg array, keep-alive list) for tensors and Scalars."""
    args = (Arg * len(values))()
    keep = []
    for a, x in zip(args, values):
        if isinstance(x, Scalar):
            a.kind, a.dtype = ARG_SCALAR, DTYPES[x.dtype]
            if x.bits:
                a.value.u = int(x.value)
            elif x.dtype.startswith("float"):
                a.value.f = float(x.value)
            else:
                a.value.i = int(x.value)
        else:
            v = tensor_of(x)
            keep.append(v)
            a.kind, a.dtype = ARG_TENSOR, 0
            a.value.tensor = C.pointer(v)
    return args, keep


class Lib:
    """libcute_runtime.so with the prototypes set; no device opened (usable without a GPU)."""

    def __init__(self, lib_path):
        self.path = os.path.abspath(lib_path)
        self.lib = L = C.CDLL(self.path)
        L.cute_last_error.restype = C.c_char_p
        L.cute_last_error.argtypes = []
        L.cute_status_name.restype = C.c_char_p
        L.cute_status_name.argtypes = [C.c_int]
        L.cute_driver_available.restype = C.c_int
        L.cute_driver_available.argtypes = []
        L.cute_string_free.restype = None
        L.cute_string_free.argtypes = [C.c_void_p]
        for fn, args in [("cute_device_open", [C.c_int, C.POINTER(C.c_void_p)]),
                         ("cute_stream_default", [C.c_void_p, C.POINTER(C.c_void_p)]),
                         ("cute_module_load_file", [C.c_void_p, C.c_char_p, C.POINTER(C.c_void_p)]),
                         ("cute_module_host", [C.c_void_p, C.c_char_p, C.POINTER(C.c_void_p)]),
                         ("cute_manifest_read_file", [C.c_char_p, C.POINTER(C.c_void_p)]),
                         ("cute_host_check", [C.c_void_p, C.POINTER(Arg), C.c_size_t]),
                         ("cute_host_call", [C.c_void_p, C.c_void_p, C.POINTER(Arg), C.c_size_t])]:
            getattr(L, fn).argtypes = args
            getattr(L, fn).restype = C.c_int

    def ok(self, rc, what):
        if rc != OK:
            msg = (self.lib.cute_last_error() or b"").decode(errors="replace")
            name = (self.lib.cute_status_name(rc) or b"?").decode()
            raise CuteError(what, rc, name, msg)

    def driver_available(self):
        return bool(self.lib.cute_driver_available())

    def read_manifest(self, cubin):
        """The manifest text of a cubin file, or None when it has none (host only, no GPU)."""
        out = C.c_void_p()
        self.ok(self.lib.cute_manifest_read_file(os.fsencode(cubin), C.byref(out)), f"cute_manifest_read_file({cubin})")
        if not out.value:
            return None
        try:
            return C.string_at(out.value).decode(errors="replace")
        finally:
            self.lib.cute_string_free(out)


def host_signatures(manifest_text):
    """{host name: [its `param ...` and `require ...` lines]} from a manifest's `host NAME` ... `end` blocks."""
    hosts, cur = {}, None
    for line in (manifest_text or "").splitlines():
        w = line.split()
        if not w:
            continue
        if cur is None:
            if w[0] == "host" and len(w) >= 2:
                cur = hosts.setdefault(w[1], [])
        elif w[0] == "end":
            cur = None
        elif w[0] in ("param", "require"):
            cur.append(line.strip())
    return hosts


def readable(line):
    """A manifest line with its `s:HEX` text fields decoded: `require $0 | 128 | "a run-time extent ..."`."""
    out = []
    for w in line.split(" "):
        if w.startswith("s:"):
            try:
                w = '"' + bytes.fromhex(w[2:]).decode(errors="replace") + '"'
            except ValueError:
                pass
        out.append(w)
    return " ".join(out)


class Runtime(Lib):
    """Opens device `ordinal` (its primary context) and the legacy default stream."""

    def __init__(self, lib_path, ordinal=0):
        super().__init__(lib_path)
        L = self.lib
        self.dev = C.c_void_p()
        self.ok(L.cute_device_open(ordinal, C.byref(self.dev)), f"cute_device_open({ordinal})")
        self.stream = C.c_void_p()
        self.ok(L.cute_stream_default(self.dev, C.byref(self.stream)), "cute_stream_default")
        self.modules = {}

    def module(self, cubin):
        if cubin not in self.modules:
            m = C.c_void_p()
            self.ok(self.lib.cute_module_load_file(self.dev, os.fsencode(cubin), C.byref(m)),
                    f"cute_module_load_file({cubin})")
            self.modules[cubin] = m
        return self.modules[cubin]

    def host(self, cubin, name):
        """The host function `name` of `cubin`; CuteError with status NOT_FOUND when the cubin has none
        of that name (the message lists those it has)."""
        h = C.c_void_p()
        self.ok(self.lib.cute_module_host(self.module(cubin), name.encode(), C.byref(h)), f"cute_module_host({name})")
        return Host(self, h, name)


class Host:
    def __init__(self, rt, handle, name):
        self.rt, self.h, self.name = rt, handle, name

    def check(self, *values):
        """The call's checks and plan evaluation without launching (raises CuteError on a refusal)."""
        args, _keep = _marshal(values)
        self.rt.ok(self.rt.lib.cute_host_check(self.h, args, len(values)), f"cute_host_check({self.name})")

    def call(self, *values):
        """One asynchronous call on the legacy default stream (raises CuteError on a refusal)."""
        args, _keep = _marshal(values)
        self.rt.ok(self.rt.lib.cute_host_call(self.h, self.rt.stream, args, len(values)), f"cute_host_call({self.name})")

    def bind(self, *values):
        """Marshal and check once; returns a zero-argument callable that issues the call (for timing
        loops). The tensors must stay alive and unchanged in shape while the callable is used."""
        args, keep = _marshal(values)
        lib, h, s, n, ok = self.rt.lib, self.h, self.rt.stream, len(values), self.rt.ok
        ok(lib.cute_host_check(h, args, n), f"cute_host_check({self.name})")

        def call(_keep=(keep, args, values)):
            rc = lib.cute_host_call(h, s, args, n)
            if rc != OK:
                ok(rc, f"cute_host_call({self.name})")
        return call
