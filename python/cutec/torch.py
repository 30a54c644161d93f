"""cutec host functions as torch custom operators, which `torch.compile(fullgraph=True)` traces
without a graph break and CUDA graphs capture.

    import cutec, cutec.torch, torch
    m = cutec.load("elementwise_add.cubin")
    add = cutec.torch.register(m.elementwise_add, "mylib::add", mutates=["mC"])
    add(a, b, c)                      # torch.ops.mylib.add(a, b, c): writes c, returns None

The op's schema comes from the host function's parameters: a tensor is `Tensor`, or `Tensor(a!)`
when it is in `mutates` (the manifest does not record which tensors a host function writes, so
the caller says); a float scalar (f16, bf16, f32, f64) is `float`, an integer one `int`, a bool
`bool`. Its fake implementation (what `torch.compile` runs while tracing) checks each tensor's
dtype against the host function's (every instance's, for a generic one) and its device, then,
when the shapes are concrete, the whole call against the manifest (`Plan.check` on views of the
fake tensors: ranks, static extents and strides, divisibility, alignment of the storage offset,
`require` and `assert` lines): a call the GPU would refuse fails at trace time, with the
runtime's message. The real implementation calls the host function on torch's current stream.

This module imports torch only when an op is registered: `schema` works without it.
"""

from . import _native

# torch dtype names (`str(torch.float16)` without `torch.`) -> cutec element type names.
_TORCH_DTYPE = {
    "float16": "f16",
    "bfloat16": "bf16",
    "float32": "f32",
    "float64": "f64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "float8_e4m3fn": "f8e4m3",
    "float8_e5m2": "f8e5m2",
    "bool": "bool",
}
_FLOAT_SCALARS = {"f16", "bf16", "tf32", "f32", "f64"}
_INT_SCALARS = {"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}
# Fake device addresses for trace-time checks: distinct, 256-byte aligned, never dereferenced.
_FAKE_BASE = 0x7F00_0000_0000
_FAKE_STEP = 0x10_0000_0000

_libraries = {}  # namespace -> torch.library.Library (an op lives as long as its library)


def _element(ty):
    """`f16` of `tensor<f16, gmem, ...>`; None for a scalar or stream type."""
    if not ty.startswith("tensor<"):
        return None
    return ty[len("tensor<") :].split(",", 1)[0].strip()


def schema(params, mutates, host="the host function"):
    """The torch operator schema of a host function with parameters `params` (`[(name, type)]`, as
    `HostFunction.params` gives them) that writes the tensors named in `mutates`:
    `(Tensor mA, Tensor mB, Tensor(a!) mC) -> ()`. Raises ValueError for a parameter torch cannot
    take (a `stream`), a name in `mutates` that is not a tensor parameter, or an empty `mutates`."""
    mutates = list(mutates)
    if not mutates:
        raise ValueError(
            f"{host}: mutates= is empty: name the tensor parameters it writes (an op that returns nothing "
            f"and writes nothing is removed by torch.compile)"
        )
    tensors = [n for n, t in params if _element(t) is not None]
    for m in mutates:
        if m not in tensors:
            raise ValueError(
                f"{host}: mutates= names {m!r}, which is not one of its tensor parameters ({', '.join(tensors) or 'none'})"
            )
    if len(mutates) > 26:
        raise ValueError(f"{host}: at most 26 mutated tensors (one alias set a-z each), not {len(mutates)}")
    alias = {m: chr(ord("a") + i) for i, m in enumerate(mutates)}
    args = []
    for name, ty in params:
        if name in alias:
            args.append(f"Tensor({alias[name]}!) {name}")
        elif _element(ty) is not None:
            args.append(f"Tensor {name}")
        elif ty in _FLOAT_SCALARS:
            args.append(f"float {name}")
        elif ty in _INT_SCALARS:
            args.append(f"int {name}")
        elif ty == "bool":
            args.append(f"bool {name}")
        else:
            raise ValueError(
                f"{host}: parameter {name!r} is a {ty}, which a torch op cannot take (ops run on torch's "
                f"current stream); wrap a host function without it"
            )
    return f"({', '.join(args)}) -> ()"


class TraceChecks:
    """What the fake implementation of an op checks, derived from a host function's manifest:
    `check(*args)` raises `cutec.Refused` for a call the GPU would refuse. Tensors are duck-typed
    (`.dtype`, `.device`, `.shape`, `.stride()`, `.storage_offset()`, `.element_size()`), so it
    runs on FakeTensors, meta tensors and real ones."""

    def __init__(self, manifest_text, host, op, device):
        m = _native.parse_manifest(manifest_text)
        self.plan = m.host(host)
        self.op = op
        self.device = device
        self.params = self.plan.params
        # Per parameter: the element types its instances take (None for a scalar).
        per_instance = (
            [m.host(i).params for i in self.plan.instances] if len(self.plan.instances) > 1 else [self.params]
        )
        self.elements = [
            None if _element(ty) is None else sorted({_element(p[k][1]) for p in per_instance})
            for k, (_, ty) in enumerate(self.params)
        ]

    def _refuse(self, what):
        e = _native.Refused(f"{self.op} (at trace time): {what}")
        e.status = "CUTE_ERROR_ARGUMENT_MISMATCH"
        return e

    def check(self, *args):
        if len(args) != len(self.params):
            raise self._refuse(f"takes {len(self.params)} arguments, got {len(args)}")
        concrete = True
        views = []
        for k, ((name, _), elements, a) in enumerate(zip(self.params, self.elements, args)):
            if elements is None:
                concrete = concrete and isinstance(a, (int, float, bool))
                views.append(a)
                continue
            dtype = _TORCH_DTYPE.get(str(a.dtype).removeprefix("torch."), str(a.dtype))
            if dtype not in elements:
                raise self._refuse(
                    f"argument `{name}` is a {a.dtype} tensor; {self.plan.name} takes {' or '.join(elements)} there"
                )
            dev = a.device
            if dev.type not in ("cuda", "meta") or (dev.type == "cuda" and dev.index not in (None, self.device)):
                raise self._refuse(f"argument `{name}` is on {dev}; the module is loaded on cuda:{self.device}")
            shape, stride, offset = list(a.shape), list(a.stride()), a.storage_offset()
            if not all(type(x) is int for x in [*shape, *stride, offset]):
                concrete = False  # symbolic sizes (dynamic shapes): checked by the call itself
                continue
            ptr = _FAKE_BASE + k * _FAKE_STEP + offset * a.element_size()
            views.append(_native.TensorView(ptr, dtype, shape, stride))
        if concrete:
            try:
                self.plan.check(*views)
            except _native.Refused as e:
                raise self._refuse(str(e)) from None


def register(host_fn, name, mutates):
    """Registers host function `host_fn` (of a loaded module: `m.elementwise_add`) as the torch
    operator `name` (`"namespace::op"`) that writes the tensor parameters named in `mutates`, and
    returns it (`torch.ops.namespace.op`). See the module's docs for the schema and the checks."""
    import torch

    ns, sep, op = name.partition("::")
    if not sep or not ns.isidentifier() or not op.isidentifier():
        raise ValueError(f"an op name is 'namespace::name' (two identifiers), not {name!r}")
    manifest = host_fn.manifest
    if manifest is None:
        raise ValueError(f"{host_fn.name}: its cubin has no manifest, so there is no signature to derive an op from")
    checks = TraceChecks(manifest, host_fn.name, name, host_fn.device)
    lib = _libraries.get(ns)
    if lib is None:
        lib = _libraries[ns] = torch.library.Library(ns, "FRAGMENT")
    lib.define(op + schema(host_fn.params, mutates, host_fn.name))

    # The kernel is the host function itself (a native callable; its default stream is torch's
    # current one, read with one C call): no Python frame between torch's dispatcher and the call.
    # A Python wrapper cost 0.3-0.7 us a call on the H100, more inside a compiled graph, where
    # dynamo's frame callback sees every Python frame.
    lib.impl(op, host_fn, "CUDA")

    def fake(*args):
        checks.check(*args)

    torch.library.register_fake(name, fake, lib=lib)
    return getattr(getattr(torch.ops, ns), op)
