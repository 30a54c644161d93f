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

from . import _signature
from ._signature import FLOAT_SCALARS, INT_SCALARS, element

_libraries = {}  # namespace -> torch.library.Library (an op lives as long as its library)


def schema(params, mutates, host="the host function"):
    """The torch operator schema of a host function with parameters `params` (`[(name, type)]`, as
    `HostFunction.params` gives them) that writes the tensors named in `mutates`:
    `(Tensor mA, Tensor mB, Tensor(a!) mC) -> ()`. Raises ValueError for a parameter torch cannot
    take (a `stream`), a name in `mutates` that is not a tensor parameter, or an empty `mutates`."""
    mutates = _signature.written(params, mutates, host, "mutates")
    if not mutates:
        raise ValueError(
            f"{host}: mutates= is empty: name the tensor parameters it writes (an op that returns nothing "
            f"and writes nothing is removed by torch.compile)"
        )
    if len(mutates) > 26:
        raise ValueError(f"{host}: at most 26 mutated tensors (one alias set a-z each), not {len(mutates)}")
    alias = {m: chr(ord("a") + i) for i, m in enumerate(mutates)}
    args = []
    for name, ty in params:
        if name in alias:
            args.append(f"Tensor({alias[name]}!) {name}")
        elif element(ty) is not None:
            args.append(f"Tensor {name}")
        elif ty in FLOAT_SCALARS:
            args.append(f"float {name}")
        elif ty in INT_SCALARS:
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
        self.calls = _signature.CallChecks(manifest_text, host, op)
        self.device = device

    def check(self, *args):
        calls = self.calls
        if len(args) != len(calls.params):
            raise calls.refuse(f"takes {len(calls.params)} arguments, got {len(args)}")
        concrete = True
        views = []
        for k, ((name, _), elements, a) in enumerate(zip(calls.params, calls.elements, args)):
            if elements is None:
                concrete = concrete and isinstance(a, (int, float, bool))
                views.append(a)
                continue
            dtype = calls.element_type(k, str(a.dtype).removeprefix("torch."), f"a {a.dtype} tensor")
            dev = a.device
            if dev.type not in ("cuda", "meta") or (dev.type == "cuda" and dev.index not in (None, self.device)):
                raise calls.refuse(f"argument `{name}` is on {dev}; the module is loaded on cuda:{self.device}")
            shape, stride, offset = list(a.shape), list(a.stride()), a.storage_offset()
            if not all(type(x) is int for x in [*shape, *stride, offset]):
                concrete = False  # symbolic sizes (dynamic shapes): checked by the call itself
                continue
            views.append(calls.view(k, dtype, shape, stride, offset, a.element_size()))
        if concrete:
            calls.check(views)


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
