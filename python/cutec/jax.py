"""cutec host functions as JAX operations: XLA custom calls (the XLA FFI) that `jax.jit` programs
run on the GPU, with no Python in the way at run time.

    import cutec, cutec.jax, jax, jax.numpy as jnp
    m = cutec.load("fast_add.cubin")
    add = cutec.jax.register(m.fast_add, "mylib.fast_add", writes=["mC"])

    @jax.jit
    def f(a, b):
        return add(a, b, mC=a) * 2    # mC: a result shaped like `a` (any .shape and .dtype)

The op takes the host function's parameters in order, less those in `writes`: tensors as JAX
arrays, scalars as Python numbers (static: each becomes an attribute of the custom call, so a
new value compiles a new program). Each parameter in `writes` is a result whose shape and dtype
the call gives by keyword (`mC=jax.ShapeDtypeStruct(shape, dtype)`, or an array to take them
from): the manifest constrains a written tensor but does not say its shape. A parameter in
`updates` is read and written: it is passed like a read one and aliased to its result (XLA
copies it first when the input is still used). The op returns the written tensors (`writes` and
`updates`) in parameter order: one array, or a tuple of them.

While JAX traces a call, it is checked against the manifest as a call on the GPU is (dtypes,
ranks, static extents, divisibility, alignment, `require` and `assert` lines), on stand-ins for
the arrays: a call the GPU would refuse raises `cutec.Refused` then. At run time XLA calls
cutec's handler (in the native extension), which calls the host function on XLA's stream; a
refusal there is an XLA error with the runtime's message.

This module imports JAX only when an op is called or registered (`custom_call` and `Op` work
without it); it needs jax >= 0.4.35 with a CUDA jaxlib (>= 0.4.36 for `updates`).
"""

import inspect
from collections import namedtuple

from . import _native, _signature
from ._signature import FLOAT_SCALARS, INT_SCALARS, element

MIN_JAX = (0, 4, 35)
# The custom call's string attribute naming the op (the handler looks the host function up by it).
OP_ATTRIBUTE = "cutec_op"

CustomCall = namedtuple("CustomCall", "operands results aliases attributes sources")
CustomCall.__doc__ = """How a host function's parameters map onto an XLA custom call: `operands`
and `results` (parameter names, in order), `aliases` (`{operand index: result index}`, for
`input_output_aliases`), `attributes` (the scalar parameters' names) and `sources` (per parameter,
where the handler finds it: `("operand", k)`, `("result", k)` or `("attribute", 0)`)."""


def custom_call(params, writes, updates=(), host="the host function"):
    """The custom call of a host function with parameters `params` (`[(name, type)]`, as
    `HostFunction.params` gives them) that writes the tensors named in `writes` and reads and
    writes those in `updates` (see `CustomCall`). Raises ValueError for a parameter JAX cannot
    pass (a `stream`), a name that is not a tensor parameter or is in both lists, or no written
    tensor at all."""
    writes = _signature.written(params, writes, host, "writes")
    updates = _signature.written(params, updates, host, "updates")
    both = sorted(set(writes) & set(updates))
    if both:
        raise ValueError(f"{host}: {', '.join(both)} in both writes= and updates=: a parameter is one or the other")
    if not writes and not updates:
        raise ValueError(
            f"{host}: writes= and updates= are empty: name the tensor parameters it writes (its results in JAX)"
        )
    operands, results, aliases, attributes, sources = [], [], {}, [], []
    for name, ty in params:
        if name in writes:
            sources.append(("result", len(results)))
            results.append(name)
        elif name in updates:
            aliases[len(operands)] = len(results)
            sources.append(("result", len(results)))
            operands.append(name)
            results.append(name)
        elif element(ty) is not None:
            sources.append(("operand", len(operands)))
            operands.append(name)
        elif ty in FLOAT_SCALARS or ty in INT_SCALARS or ty == "bool":
            if name == OP_ATTRIBUTE:
                raise ValueError(f"{host}: a scalar parameter named {name!r} clashes with cutec's own attribute")
            sources.append(("attribute", 0))
            attributes.append(name)
        else:
            raise ValueError(
                f"{host}: parameter {name!r} is a {ty}, which a JAX op cannot take (ops run on XLA's stream); "
                f"wrap a host function without it"
            )
    return CustomCall(operands, results, aliases, attributes, sources)


def _jax():
    """`(jax, jax's ffi module)`; ImportError saying what to install when JAX is missing or old."""
    try:
        import jax
    except ImportError as e:
        raise ImportError(
            f"cutec.jax needs JAX (jax >= {'.'.join(map(str, MIN_JAX))} with a CUDA jaxlib, e.g. "
            f"pip install 'jax[cuda12]'): import jax failed: {e}"
        ) from e
    version = tuple(int(p) for p in jax.__version__.split(".")[:3] if p.isdigit())
    if version < MIN_JAX:
        raise ImportError(f"cutec.jax needs jax >= {'.'.join(map(str, MIN_JAX))}; this is jax {jax.__version__}")
    try:
        from jax import ffi
    except ImportError:  # jax < 0.4.38: the same functions under jax.extend
        from jax.extend import ffi
    return jax, ffi


def _attribute(value):
    """A scalar argument as the custom call attribute the handler reads (a 64-bit integer or
    float, or a bool; the handler converts it to the parameter's type as a call from Python does)."""
    import numpy as np

    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return np.bool_(value)
    if isinstance(value, int):
        return np.uint64(value) if value >= 2**63 else np.int64(value)
    return np.float64(value)


class Op:
    """A host function of a manifest as a JAX operation named `name` (the custom call target).
    `register` makes one for a loaded host function and registers its handler; an `Op` made
    directly traces and lowers (for tests without a GPU) but runs only once registered."""

    def __init__(self, manifest_text, host, name, writes=(), updates=()):
        self.name = name
        self.checks = _signature.CallChecks(manifest_text, host, name)
        self.host = host
        self.call = custom_call(self.checks.params, writes, updates, host)
        self.writes = set(writes)
        self.takes = [n for n, _ in self.checks.params if n not in self.writes]

    def __repr__(self):
        return f"<cutec.jax op {self.name}: {self.host}({', '.join(self.takes)}) -> {', '.join(self.call.results)}>"

    def _bind(self, args, kwargs):
        """The call's value per parameter name (result specs for `writes`)."""
        if len(args) > len(self.takes):
            raise TypeError(f"{self.name} takes {len(self.takes)} arguments ({', '.join(self.takes)}), got {len(args)}")
        given = dict(zip(self.takes, args))
        for k, v in kwargs.items():
            if k not in dict(self.checks.params):
                raise TypeError(f"{self.name} has no parameter {k!r}")
            if k in given:
                raise TypeError(f"{self.name} got {k!r} twice")
            given[k] = v
        missing = [n for n, _ in self.checks.params if n not in given]
        if missing:
            hint = [f"{n}=jax.ShapeDtypeStruct(shape, dtype)" for n in missing if n in self.writes]
            raise TypeError(
                f"{self.name} is missing {', '.join(missing)}"
                + (f" (a result's shape and dtype: {', '.join(hint)})" if hint else "")
            )
        return given

    def _check(self, given):
        """The manifest's checks of the call, on stand-ins (row-major: XLA's layout)."""
        import numpy as np

        views = []
        for k, ((name, _), elements) in enumerate(zip(self.checks.params, self.checks.elements)):
            a = given[name]
            if elements is None:
                if not isinstance(a, (bool, int, float, np.generic)):
                    raise TypeError(
                        f"{self.name}: parameter `{name}` is a scalar, which a JAX op takes as a Python number "
                        f"(a compile-time attribute), not a {type(a).__name__}"
                    )
                views.append(a.item() if isinstance(a, np.generic) else a)
                continue
            if not hasattr(a, "shape") or not hasattr(a, "dtype"):
                raise TypeError(f"{self.name}: parameter `{name}` is a tensor: pass an array, not a {type(a).__name__}")
            what = "result" if name in self.writes else "array"
            dtype = self.checks.element_type(k, str(a.dtype), f"a {a.dtype} {what}")
            shape = [int(s) for s in a.shape]
            strides, acc = [], 1
            for s in reversed(shape):
                strides.append(acc)
                acc *= max(s, 1)
            views.append(self.checks.view(k, dtype, shape, strides[::-1]))
        self.checks.check(views)

    def __call__(self, *args, **kwargs):
        jax, ffi = _jax()
        given = self._bind(args, kwargs)
        self._check(given)
        results = [jax.ShapeDtypeStruct(tuple(given[n].shape), given[n].dtype) for n in self.call.results]
        attributes = {n: _attribute(given[n]) for n in self.call.attributes}
        options = {"vmap_method": "sequential"}
        if self.call.aliases:
            if "input_output_aliases" not in inspect.signature(ffi.ffi_call).parameters:
                raise ImportError(
                    f"{self.name}: updates= needs ffi_call's input_output_aliases (jax >= 0.4.36); "
                    f"this is jax {jax.__version__}"
                )
            options["input_output_aliases"] = self.call.aliases
        call = ffi.ffi_call(self.name, results, **options)
        out = call(*(given[n] for n in self.call.operands), **{OP_ATTRIBUTE: self.name}, **attributes)
        return out[0] if len(out) == 1 else tuple(out)


def register(host_fn, name, writes=(), updates=()):
    """Registers host function `host_fn` (of a loaded module: `m.fast_add`) as the JAX operation
    `name` (the XLA custom call target, e.g. `"mylib.fast_add"`), which writes the tensor
    parameters named in `writes` and reads and writes those in `updates`, and returns it (an
    `Op`). See the module's docs for how it is called. Registering a name again replaces what it
    calls."""
    if not isinstance(name, str) or not name or any(c.isspace() for c in name):
        raise ValueError(f"a JAX op name is a non-empty string without spaces, not {name!r}")
    manifest = host_fn.manifest
    if manifest is None:
        raise ValueError(f"{host_fn.name}: its cubin has no manifest, so there is no signature to derive an op from")
    _, ffi = _jax()
    op = Op(manifest, host_fn.name, name, writes, updates)
    _native.jax_register(name, host_fn, op.call.sources)
    ffi.register_ffi_target(name, _native.xla_ffi_handler(), platform="CUDA")
    return op
