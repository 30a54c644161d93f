"""What a host function's manifest says about calling it from a framework that traces programs
(torch custom ops: `cutec.torch`; XLA custom calls: `cutec.jax`): which parameters are tensors and
of which element types, which are scalars, which of them the caller says it writes, and the
checks of a whole call made on stand-ins for its tensors while the framework traces it, so a call
the GPU would refuse fails then, with the runtime's message."""

from . import _native

# Framework dtype names (torch's `str(torch.float16)` without `torch.`, NumPy's and JAX's
# `str(dtype)`: the same names) -> cutec element type names.
DTYPE_NAMES = {
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
FLOAT_SCALARS = {"f16", "bf16", "tf32", "f32", "f64"}
INT_SCALARS = {"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}
# Fake device addresses for trace-time checks: distinct, 256-byte aligned, never dereferenced.
_FAKE_BASE = 0x7F00_0000_0000
_FAKE_STEP = 0x10_0000_0000


def element(ty):
    """`f16` of `tensor<f16, gmem, ...>`; None for a scalar or stream type."""
    if not ty.startswith("tensor<"):
        return None
    return ty[len("tensor<") :].split(",", 1)[0].strip()


def written(params, names, host, keyword):
    """`names` (what the caller passed as `keyword=`) as a list, each checked to be a tensor
    parameter of `params` (`[(name, type)]`): ValueError otherwise."""
    names = list(names)
    tensors = [n for n, t in params if element(t) is not None]
    for m in names:
        if m not in tensors:
            raise ValueError(
                f"{host}: {keyword}= names {m!r}, which is not one of its tensor parameters ({', '.join(tensors) or 'none'})"
            )
    return names


class CallChecks:
    """The checks of a call of host function `host` of a manifest (its text), made at trace time
    for the op `op`: each tensor's element type against those the host function takes (every
    instance's, for a generic one), then the whole call against the manifest (`Plan.check` on
    views with fake pointers: ranks, static extents and strides, divisibility, alignment,
    `require` and `assert` lines). Failures raise `cutec.Refused`, prefixed with the op."""

    def __init__(self, manifest_text, host, op):
        m = _native.parse_manifest(manifest_text)
        self.plan = m.host(host)
        self.op = op
        self.params = self.plan.params
        # Per parameter: the element types its instances take (None for a scalar).
        per_instance = (
            [m.host(i).params for i in self.plan.instances] if len(self.plan.instances) > 1 else [self.params]
        )
        self.elements = [
            None if element(ty) is None else sorted({element(p[k][1]) for p in per_instance})
            for k, (_, ty) in enumerate(self.params)
        ]

    def refuse(self, what):
        e = _native.Refused(f"{self.op} (at trace time): {what}")
        e.status = "CUTE_ERROR_ARGUMENT_MISMATCH"
        return e

    def element_type(self, k, dtype, what):
        """The cutec element type of argument `k`, whose dtype's name is `dtype` (`float16`) and
        which messages call `what` (`a torch.float16 tensor`): refused when parameter `k` does not
        take it."""
        name = DTYPE_NAMES.get(dtype, dtype)
        if name not in self.elements[k]:
            raise self.refuse(
                f"argument `{self.params[k][0]}` is {what}; {self.plan.name} takes {' or '.join(self.elements[k])} there"
            )
        return name

    @staticmethod
    def view(k, dtype, shape, strides, offset=0, element_size=1):
        """A stand-in for tensor argument `k`: a view at a fake, aligned address (plus `offset`
        elements of `element_size` bytes), with cutec element type `dtype`."""
        return _native.TensorView(_FAKE_BASE + k * _FAKE_STEP + offset * element_size, dtype, shape, strides)

    def check(self, views):
        """The manifest's checks of a call with `views` (stand-ins for the tensors, numbers for the
        scalars)."""
        try:
            self.plan.check(*views)
        except _native.Refused as e:
            raise self.refuse(str(e)) from None
