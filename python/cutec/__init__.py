"""cutec: call CUDA kernels compiled by cutec (cubins) from Python, PyTorch, CuPy and JAX.

    import cutec, torch
    m = cutec.load("elementwise_add.cubin")          # a path or the cubin's bytes
    a = torch.randn(2048, 2048, device="cuda", dtype=torch.float16)
    b, c = torch.randn_like(a), torch.empty_like(a)
    m.elementwise_add(a, b, c)                       # host function: checked, then launched
    m.kernel("vector_add")(x, y, z, grid=4, block=256)

Every argument is checked against the cubin's manifest exactly as the C ABI checks it (dtype,
rank, static extents and strides, divisibility, alignment, bounds, the host function's `require`
and `assert` lines, partial tiles); a refusal raises `cutec.Refused` with the runtime's message and
launches nothing. Tensors: anything with `__dlpack__` (torch, CuPy, JAX, ...) or
`__cuda_array_interface__`, torch tensors through torch's DLPack C exchange API (one C call each),
or a `cutec.TensorView` (a raw pointer). Launches are asynchronous, on `stream=` when given (an int
handle or a stream object), else on torch's current stream when torch has been imported, else on
the legacy default stream; they are captured by `torch.cuda.graph`. No GPU is needed to read a
manifest or check a call: `cutec.manifest(path).host(name).check(*args)`.

    m = cutec.compile("gemm.cute", consts={"BM": 128})   # .cute to a cubin (cached on disk), loaded
    op = cutec.torch.register(m.host_fn, "mylib::op", mutates=["out"])  # a torch custom op
    op = cutec.jax.register(m.host_fn, "mylib.op", writes=["out"])  # a JAX op (an XLA custom call)

Compiling needs the compiler: `pip install cutec-compiler` (or `cutec[compiler]`).

The guide: docs/python.md in the cutec repository.
"""

from . import _compile, _native, cache
from ._compile import CompileError
from ._native import (
    Error,
    HostFunction,
    KernelFunction,
    KernelSignature,
    Manifest,
    NotFound,
    Plan,
    Refused,
    TensorView,
    Unavailable,
    compute_capability,
    device_count,
    driver_available,
    parse_manifest,
)


def __getattr__(name):
    # `__version__` read on first use: importlib.metadata costs ~35 ms to import.
    if name == "__version__":
        try:
            from importlib.metadata import version

            return version("cutec")
        except Exception:  # not installed as a distribution (a source checkout on sys.path)
            return "0+unknown"
    # `cutec.torch` (torch custom ops) and `cutec.jax` (XLA custom calls) imported on first use:
    # `import cutec` stays fast without torch or JAX, and imports neither.
    if name in ("torch", "jax"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'cutec' has no attribute {name!r}")


__all__ = [
    "CompileError",
    "Error",
    "HostFunction",
    "KernelFunction",
    "KernelSignature",
    "Manifest",
    "Module",
    "NotFound",
    "Plan",
    "Refused",
    "TensorView",
    "Unavailable",
    "build",
    "cache",
    "compile",
    "compute_capability",
    "device_count",
    "driver_available",
    "find_compiler",
    "load",
    "manifest",
    "parse_manifest",
]


class Module:
    """A cubin loaded on a CUDA device (`cutec.load`). Each host function is an attribute
    (`m.elementwise_add(a, b, c, stream=None)`, unless the name collides with a method below: then
    `m.host(name)`); kernels are `m.kernel(name)`."""

    def __init__(self, native):
        self._native = native
        self._unusable = {}
        for name in native.hosts:
            try:
                f = native.host(name)
            except Error as e:  # an unusable plan: raised again when the host is asked for
                self._unusable[name] = e
                continue
            if name.isidentifier() and not hasattr(type(self), name):
                setattr(self, name, f)

    def host(self, name):
        """The host function `name` (a `cutec.HostFunction`)."""
        return self._native.host(name)

    def kernel(self, name):
        """The kernel `name` (a `cutec.KernelFunction`: `k(*args, grid=, block=, smem=0, stream=None)`)."""
        return self._native.kernel(name)

    @property
    def hosts(self):
        """Names of the host functions."""
        return self._native.hosts

    @property
    def kernels(self):
        """Names of the kernels."""
        return self._native.kernels

    @property
    def manifest(self):
        """The manifest text (None for an image without one)."""
        return self._native.manifest

    @property
    def arch(self):
        return self._native.arch

    @property
    def device(self):
        """The CUDA device ordinal the module is loaded on."""
        return self._native.device

    @property
    def label(self):
        """Where the module came from (its path, or `<bytes>`)."""
        return self._native.label

    def synchronize(self):
        """Waits for all work on the module's device (kernel faults surface here)."""
        self._native.synchronize()

    def __getattr__(self, name):
        # Only reached for names not set in __init__: a host with an unusable plan, or none.
        unusable = self.__dict__.get("_unusable", {})
        if name in unusable:
            raise unusable[name]
        raise AttributeError(
            f"cutec module {self._native.label} has no host function {name!r}; "
            f"host functions: {', '.join(self._native.hosts) or '(none)'}"
        )

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._native.hosts))

    def __repr__(self):
        return (
            f"<cutec.Module {self._native.label} on cuda:{self._native.device} ({self._native.arch}): "
            f"hosts {', '.join(self._native.hosts) or '(none)'}>"
        )


def load(source, device=0):
    """Loads a cubin (a path, `os.PathLike`, or its bytes) on CUDA device `device` (needs a GPU)."""
    return Module(_native.load(source, device))


def manifest(source):
    """The manifest of a cubin (a path or its bytes), read on the host without a GPU: a
    `cutec.Manifest`, or None when the image has none."""
    return _native.read_manifest(source)


def find_compiler():
    """The cutec compiler `compile` runs: $CUTEC, else the `cutec-compiler` package's, else `cutec` on
    PATH; None when there is none."""
    try:
        return _compile.find().exe
    except Error:
        return None


def build(
    source,
    arch=None,
    consts=None,
    device=0,
    output=None,
    compiler=None,
    release_asserts=True,
    include_dirs=None,
    base_dir=None,
):
    """Compiles `.cute` source to a cubin, through the disk cache (`cutec.cache`), and returns the
    cubin's path: the cache entry, or `output` (a copy) when given. No GPU is needed.

    `source`: a path (`os.PathLike`, or a `str` without a newline or `{`) or the source text.
    `arch`: the target (sm_80, sm_90, sm_90a); by default the one the source asks for on a line
    `// cutec-build: --arch ARCH`, else that of CUDA device `device` (compute capability 9.x: sm_90,
    8.x: sm_80), else sm_90. `consts`: `{"NAME": value}` replaces top-level `const` items' values
    (`cutec build -D NAME=VALUE`): an int, float, bool, tuple or a str holding a `.cute` expression.
    `release_asserts=False` leaves kernels' run-time asserts out. `compiler`: the compiler's path
    (default: `find_compiler()`). `include_dirs`: where `import "PATH";` looks after the importing
    file's directory (`cutec build -I`); a source given as text imports relative to `base_dir`
    (default: the working directory). The cache key covers every imported file's contents.
    Raises `cutec.CompileError` (the compiler's rendered diagnostics) when the source is refused."""
    return _compile.build(source, arch, consts, device, output, compiler, release_asserts, include_dirs, base_dir)


def compile(
    source,
    arch=None,
    consts=None,
    device=0,
    output=None,
    compiler=None,
    release_asserts=True,
    include_dirs=None,
    base_dir=None,
):
    """`build` (same arguments), then `load` on CUDA device `device`: a `Module`. A cached build
    costs a hash of the source and one file read (and a hash of each file it imports)."""
    built = build(source, arch, consts, device, output, compiler, release_asserts, include_dirs, base_dir)
    return load(built, device)


def tune(source, shapes, output, host=None, arch=None, iters=50, report=None, device=0, compiler=None, quiet=False):
    """Tunes the `tune` blocks of the `.cute` file `source` on CUDA device `device` at `shapes`
    (`["1024x1024", (4096, 4096)]`) and writes a cubin dispatching to the winners to `output`
    (`cutec tune FILE --shapes ... -o OUT`; docs/python.md, "Tuning"). Each candidate is built
    (cached), checked against the default instance's results and timed (CUDA events, inputs rotated
    past the L2, median of `iters` calls). Returns the report (a dict; printed unless `quiet`, also
    written as JSON to `report`). Needs torch and a GPU."""
    from . import _tune

    return _tune.tune(source, shapes, output, host, arch, iters, report, device, compiler, quiet)
