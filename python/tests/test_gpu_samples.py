"""Every sample on the GPU, called from Python with torch tensors: fresh random inputs, torch
references, outputs poisoned first (NaN) and guard regions around them where a kernel could write
out of bounds; shapes the manifest excludes must be refused with nothing written; printf samples
compared with the output their comments give. Needs a GPU and torch (skipped otherwise):
scripts/gpu-suite/python.sh runs them on the GPU machine.

(These were the sample checks of the Rust runner `cute-run`; the Rust and C host programs in
examples/ remain as examples.)"""

import math
import os

import pytest

import cutec
from printed import flushed_stdout, tensor_values

GUARD = 1024
# CUTEC_TEST_SHAPES=small: only the first two shapes of each list (under compute-sanitizer).
SMALL = os.environ.get("CUTEC_TEST_SHAPES") == "small"


def shapes(full):
    return full[:2] if SMALL else full


@pytest.fixture(scope="module")
def load(gpu, cubin):
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = cutec.load(cubin(name))
        return cache[name]

    return get


def guarded(torch, shape, dtype, fill=float("nan")):
    """(buffer, view): a tensor of `shape` inside a buffer with GUARD elements before and after."""
    n = math.prod(shape)
    buf = torch.full((GUARD + n + GUARD,), fill, device="cuda", dtype=dtype)
    return buf, buf[GUARD : GUARD + n].view(shape)


def guards_untouched(buf, n):
    import torch

    return bool(torch.isnan(buf[:GUARD]).all()) and bool(torch.isnan(buf[GUARD + n :]).all())


def assert_refused_untouched(torch, call, out, *args):
    before = out.clone()
    with pytest.raises(cutec.Refused) as e:
        call(*args)
    torch.cuda.synchronize()
    assert torch.equal(out.isnan(), before.isnan()) and torch.equal(out.nan_to_num(), before.nan_to_num()), (
        f"refused ({e.value}) but the output was written"
    )
    return str(e.value)


# ---- vector_add: a checked kernel launch ------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 1000003, 1 << 24])
def test_vector_add(gpu, load, n):
    torch = gpu
    k = load("vector_add").kernel("vector_add")
    a, b = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
    buf, c = guarded(torch, (n,), torch.float32)
    k(a, b, c, grid=(n + 255) // 256, block=256)
    torch.cuda.synchronize()
    assert torch.equal(c, a + b) and guards_untouched(buf, n)
    assert "dtype mismatch: the kernel expects f32 elements but the view has f16" in assert_refused_untouched(
        torch, lambda: k(a, b, c.half(), grid=1, block=256), c
    )


# ---- elementwise adds (three generic host functions, each for f16, f32 and bf16) --------------------

ADD_HOSTS = ["naive_elementwise_add", "vectorized_elementwise_add", "elementwise_add"]


@pytest.mark.parametrize("dtype", ["float16", "float32", "bfloat16"])
@pytest.mark.parametrize("host", ADD_HOSTS)
def test_elementwise_add(gpu, load, dtype, host):
    torch = gpu
    # One cubin: the call picks the instance of the tensors' dtype.
    f = getattr(load("elementwise_add"), host)
    dt = getattr(torch, dtype)
    vec = 16 // torch.tensor([], dtype=dt).element_size()
    # Row lengths that are not powers of two (n / 8 = 125, 12345) only for the naive and vectorized
    # hosts, whose kernels divide by a multiplier and a shift the runtime computes (design.md (n));
    # the TV host's (16, 256) tiles need whole tiles, and the others whole blocks of 256 threads
    # (256 rows make M * N / 4, the vectorized add's (1, 4) tiles, a multiple of 256).
    odd = [] if host == "elementwise_add" else [(256, 1000), (256, 98760)]
    for m, n in shapes([(16, 256), (2048, 2048), (1008, 2304), (16384, 4096)]) + odd:
        a = torch.randn(m, n, device="cuda", dtype=dt)
        b = torch.randn(m, n, device="cuda", dtype=dt)
        buf, c = guarded(torch, (m, n), dt)
        f(a, b, c)
        torch.cuda.synchronize()
        # One IEEE add of two values of the type: bit-exact with torch's.
        assert torch.equal(c, a + b), (host, m, n)
        assert guards_untouched(buf, m * n)
    a = torch.randn(1000, 2048, device="cuda", dtype=dt)
    c = torch.full_like(a, float("nan"))
    if host == "elementwise_add":
        # Its (16, 256) tiles are accessed unpredicated: a partial tile is refused.
        msg = assert_refused_untouched(torch, f, c, a, a, c)
        assert "mA extent 1000 (mode 0) is not a multiple of the tile 16" in msg
    else:
        # Any M works where M * N fills whole blocks (the naive and vectorized grids round down).
        f(a, a, c)
        torch.cuda.synchronize()
        assert torch.equal(c, a + a), (host, 1000, 2048)
    # Column-major: the host wants row-major rows (stride (?{div=VEC}, 1)).
    assert "stride entry 0 = 1" in assert_refused_untouched(torch, f, c, a.t().contiguous().t(), a, c)
    # A row length that is not a multiple of VEC = 16 / sizeof(T) (8 for f16 and bf16, 4 for f32).
    a = torch.randn(16, 256 + vec // 2, device="cuda", dtype=dt)
    c = torch.full_like(a, float("nan"))
    assert f"must be a multiple of {vec}" in assert_refused_untouched(torch, f, c, a, a, c)


@pytest.mark.parametrize("host", ADD_HOSTS)
def test_elementwise_add_refuses_other_dtypes(gpu, load, host):
    torch = gpu
    f = getattr(load("elementwise_add"), host)
    assert f.instances == [f"{host}<f16>", f"{host}<f32>", f"{host}<bf16>"]
    a = torch.randn(16, 256, device="cuda", dtype=torch.float64)
    c = torch.full_like(a, float("nan"))
    msg = assert_refused_untouched(torch, f, c, a, a, c)
    assert (
        f"host `{host}` has no instance for T = f64 (from `mA`); it was compiled for T = f16; T = f32; T = bf16" in msg
    )
    # Mixing element types where the source says they agree (all three are `tensor<T, ...>`).
    h = torch.randn(16, 256, device="cuda", dtype=torch.float16)
    c = torch.full((16, 256), float("nan"), device="cuda", dtype=torch.float32)
    msg = assert_refused_untouched(torch, f, c, h, h, c)
    assert "mixed element types for `T`: `mA` is f16 but `mC` is f32" in msg
    # An instance by its own name takes only its type.
    one = load("elementwise_add").host(f"{host}<f32>")
    assert "dtype mismatch" in assert_refused_untouched(torch, one, c, h, h, c)


# ---- fast_add: the add tuned per shape (a host `if` picks the block and vectors per thread) ---------


@pytest.mark.parametrize("dtype", ["float16", "float32", "bfloat16"])
def test_fast_add(gpu, load, dtype):
    torch = gpu
    m_ = load("fast_add")
    dt = getattr(torch, dtype)
    # Both branches of `fast_add` (up to 8 MiB per operand, and above), and `add_ilp`/`add_ilp8` with each ILP at
    # sizes that leave a partial last block (the predicated path): 1 x 8, 3 x 1000, 1000 x 1000.
    for m, n in shapes([(1, 8), (3, 1000), (1000, 1000), (2048, 2048), (4096, 4104), (8192, 8192)]):
        a = torch.randn(m, n, device="cuda", dtype=dt)
        b = torch.randn(m, n, device="cuda", dtype=dt)
        buf, c = guarded(torch, (m, n), dt)
        m_.fast_add(a, b, c)
        torch.cuda.synchronize()
        assert torch.equal(c, a + b), ("fast_add", m, n)
        assert guards_untouched(buf, m * n)
        for host in ("add_ilp", "add_ilp8", "add_flat16", "add_flat8"):
            for threads, ilp in [(128, 1), (256, 2), (1024, 4)]:
                c.fill_(float("nan"))
                if host.startswith("add_flat"):
                    m_.add_flat(a, b, c, int(host[8:]), threads, ilp)
                else:
                    getattr(m_, host)(a, b, c, threads, ilp)
                torch.cuda.synchronize()
                assert torch.equal(c, a + b), (host, threads, ilp, m, n)
                assert guards_untouched(buf, m * n)
    # Padded rows (a row stride past the row) are fine; a row that is not whole vectors is refused.
    whole = torch.randn(64, 1040, device="cuda", dtype=dt)
    a = whole[:, :1024]
    c = torch.full((64, 1024), float("nan"), device="cuda", dtype=dt)
    m_.fast_add(a, a, c)
    torch.cuda.synchronize()
    assert torch.equal(c, a + a)
    vec = 16 // whole.element_size()
    a = torch.randn(4, 8 * vec + vec // 2, device="cuda", dtype=dt)
    c = torch.full_like(a, float("nan"))
    assert f"must be a multiple of {vec}" in assert_refused_untouched(torch, m_.fast_add, c, a, a, c)
    x = torch.randn(4, 64, device="cuda", dtype=dt)
    c = torch.full_like(x, float("nan"))
    assert "a, b and c must have one shape" in assert_refused_untouched(torch, m_.fast_add, c, x, x[:2], c)
    # add_flat takes contiguous rows only (fast_add falls back to the 2-D kernel for padded ones).
    out = torch.full((64, 1024), float("nan"), device="cuda", dtype=dt)
    msg = assert_refused_untouched(torch, m_.add_flat, out, whole[:, :1024], whole[:, :1024], out, 16, 256, 2)
    assert "add_flat takes rows without padding" in msg, msg


@pytest.mark.parametrize("host", ["fast_mul", "fast_mul_relu"])
def test_fast_mul(gpu, load, host):
    """fast_add.cute's launch of elementwise_apply's operations (f16, within 1 ulp as there)."""
    torch = gpu
    f = getattr(load("fast_add"), host)
    for m, n in shapes([(3, 1000), (2048, 2048), (8192, 8192)]):
        a = (torch.rand(m, n, device="cuda") * 4 - 2).half()
        b = (torch.rand(m, n, device="cuda") * 4 - 2).half()
        buf, c = guarded(torch, (m, n), torch.float16)
        f(a, b, c)
        torch.cuda.synchronize()
        assert_f16_products(torch, a, b, c, relu=host.endswith("relu"))
        assert guards_untouched(buf, m * n)


# ---- elementwise_apply: mul and mul+relu in f16 ------------------------------------------------------


def f16_ordinal(h):
    """f16 values as integers ordered like the values (+0 and -0 equal): ulp distances."""
    import torch

    i = h.view(torch.int16).int()
    return torch.where(i < 0, -(i & 0x7FFF), i)


def assert_f16_products(torch, a, b, c, relu):
    """c holds a * b (relu'd when `relu`) for f16 a and b, computed in f16: the f32 product of two
    f16 values is exact, so within 1 ulp of it rounded to f16; every element written."""
    ref = (a.float() * b.float()).half()
    if relu:
        ref = torch.where(ref > 0, ref, torch.zeros_like(ref))
    assert not c.isnan().any()
    assert int((f16_ordinal(c) - f16_ordinal(ref)).abs().max()) <= 1


@pytest.mark.parametrize("host", ["elementwise_mul", "elementwise_mul_relu"])
def test_elementwise_apply(gpu, load, host):
    torch = gpu
    f = getattr(load("elementwise_apply"), host)
    for m, n in shapes([(2048, 2048), (1008, 2304)]):
        a = (torch.rand(m, n, device="cuda") * 4 - 2).half()
        b = (torch.rand(m, n, device="cuda") * 4 - 2).half()
        c = torch.full_like(a, float("nan"))
        f(a, b, c)
        torch.cuda.synchronize()
        assert_f16_products(torch, a, b, c, relu=host.endswith("relu"))
    for m, n in [(2048, 1000), (1000, 2048)]:
        a = torch.zeros(m, n, device="cuda", dtype=torch.float16)
        c = torch.full_like(a, float("nan"))
        assert "is not a multiple of the tile" in assert_refused_untouched(torch, f, c, a, a, c)


# ---- predicated_add: any shape ----------------------------------------------------------------------


def test_predicated_add(gpu, load):
    torch = gpu
    f = load("predicated_add").predicated_add
    for m, n in shapes([(1, 1), (3, 5), (1000, 1000), (1023, 33), (4, 32), (4096, 4097), (8192, 8192)]):
        a = torch.rand(m, n, device="cuda") * 2 - 1
        b = torch.rand(m, n, device="cuda") * 2 - 1
        buf, c = guarded(torch, (m, n), torch.float32)
        f(a, b, c)
        torch.cuda.synchronize()
        assert torch.equal(c, a + b), (m, n)
        assert guards_untouched(buf, m * n), (m, n)


# ---- control_flow: early return, while, break, continue; f32/f64/u32/bool host parameters ---------


@pytest.mark.parametrize("a,b", [(1.5, -0.25), (-3.0, 2.0), (0.0, 7.0)])
def test_axpb_float_scalars(gpu, load, a, b):
    torch = gpu
    f = load("control_flow").axpb
    for n in shapes([1, 255, 257, 1 << 20]):
        x = torch.randn(n, device="cuda")
        buf, y = guarded(torch, (n,), torch.float32)
        f(x, y, a, b)
        torch.cuda.synchronize()
        # One multiply and one add (or one fma) in f32: at most two roundings, each within half an
        # ulp of |a * x| + |b|.
        ref = x.double() * a + b
        tol = 2.0**-23 * ((x.double() * a).abs() + abs(b)) + 1e-30
        assert bool(((y.double() - ref).abs() <= tol).all()), (n, a, b)
        # Threads past the end returned early: nothing outside y was written.
        assert guards_untouched(buf, n), n
    x = torch.randn(10, device="cuda")
    y = torch.full((10,), float("nan"), device="cuda")
    # An int is a float parameter's value too; a non-number is refused before launching.
    f(x, y, 2, 1)
    torch.cuda.synchronize()
    assert torch.allclose(y, 2 * x + 1)
    with pytest.raises(cutec.Refused):
        f(x, y, "2.0", 1.0)


def collatz_ref(v, limit):
    k = 0
    while v > 1 and k < limit:
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        k += 1
    return k


@pytest.mark.parametrize("limit", [0, 7, 1000])
def test_collatz_while_break(gpu, load, limit):
    torch = gpu
    f = load("control_flow").collatz
    for n in shapes([1, 127, 129, 5000]):
        vals = torch.randint(1, 10000, (n,), dtype=torch.int32)
        steps = torch.full((n,), -7, dtype=torch.int32, device="cuda")
        f(vals.cuda(), steps, limit)
        torch.cuda.synchronize()
        assert steps.cpu().tolist() == [collatz_ref(int(v), limit) for v in vals], (n, limit)
    # `limit` is a u32: a negative int or a float is refused.
    v = torch.ones(4, dtype=torch.int32, device="cuda")
    for bad in (-1, 1.5):
        with pytest.raises(cutec.Refused):
            f(v, v, bad)


def test_first_negative_for_break(gpu, load):
    torch = gpu
    f = load("control_flow").first_negative
    for m, n in shapes([(1, 1), (200, 37), (1000, 1000)]):
        x = torch.rand(m, n, device="cuda") + 0.01
        # About one row in three has no negative entry.
        mask = torch.rand(m, n, device="cuda") < 0.3 / n * 3
        x = torch.where(mask, -x, x)
        out = torch.full((m,), -99, dtype=torch.int32, device="cuda")
        f(x, out)
        torch.cuda.synchronize()
        neg = x < 0
        ref = torch.where(neg.any(1), neg.int().argmax(1), torch.full((m,), -1, device="cuda")).int()
        assert torch.equal(out, ref), (m, n)


@pytest.mark.parametrize("scale,negate", [(1.0, False), (0.5, True), (-3.25, False)])
def test_sum_positive_continue(gpu, load, scale, negate):
    torch = gpu
    f = load("control_flow").sum_positive
    for m in shapes([1, 129, 10000]):
        x = torch.randn(m, 8, device="cuda")
        buf, out = guarded(torch, (m,), torch.float32)
        f(x, out, scale, negate)
        torch.cuda.synchronize()
        ref = x.clamp(min=0).double().sum(1) * scale * (-1 if negate else 1)
        tol = 8 * 2.0**-23 * x.abs().double().sum(1) * abs(scale) + 1e-30
        assert bool(((out.double() - ref).abs() <= tol).all()), (m, scale, negate)
        assert guards_untouched(buf, m), m


# ---- row reductions -------------------------------------------------------------------------------

REDUCE = {
    "reduce_sum": ("reduce_sum", [(1, 1), (7, 33), (1000, 1000), (1024, 4096), (513, 8192), (2, 131072)], []),
    "reduce_rows": ("reduce_sum_tiled_copy", [(4, 1024), (1000, 1024), (4096, 1024)], [(1001, 1024), (6, 1024)]),
    "reduce_compositional": (
        "reduce_sum_compositional",
        [(4, 1024), (1000, 1024), (4096, 1024)],
        [(1001, 1024), (6, 1024)],
    ),
    "reduce_nd": (
        "reduce_sum_nd",
        [(1, 256, 1), (3, 256, 1), (1, 256, 5), (5, 256, 3), (7, 256, 33), (64, 256, 64), (2, 256, 1000)],
        [],
    ),
    "reduce_mid": (
        "reduce_sum_nd",
        [
            (1, 256, 1),
            (3, 256, 1),
            (1, 256, 5),
            (5, 256, 3),
            (7, 256, 33),
            (64, 256, 64),
            (2, 256, 1000),
            (64, 256, 1024),
        ],
        [],
    ),
}


def assert_row_sums(x, out, buf, out_shape):
    """`out` holds the sums of `x` over mode 1 (f32 within rounding) and nothing past it was written."""
    ref = x.double().sum(1)
    # The worst case of an f32 summation tree of depth N/32 + 16 (N: the reduced extent).
    tol = (x.shape[1] / 32 + 16) * 2.0**-24 * x.double().abs().sum(1)
    err = (out.double() - ref).abs()
    assert bool((err <= tol).all()), (tuple(x.shape), float((err / tol).max()))
    assert guards_untouched(buf, math.prod(out_shape)), tuple(x.shape)


@pytest.mark.parametrize("host", list(REDUCE))
def test_reductions(gpu, load, host):
    torch = gpu
    sample, full, refused = REDUCE[host]
    f = getattr(load(sample), host)
    for shape in shapes(full):
        x = torch.rand(shape, device="cuda") * 2 - 1
        out_shape = (shape[0], shape[2]) if len(shape) == 3 else (shape[0],)
        buf, out = guarded(torch, out_shape, torch.float32)
        f(x, out)
        torch.cuda.synchronize()
        assert_row_sums(x, out, buf, out_shape)
    for shape in refused:
        x = torch.zeros(shape, device="cuda")
        out = torch.full((shape[0],), float("nan"), device="cuda")
        assert "is not a multiple of the tile 4" in assert_refused_untouched(torch, f, out, x, out)


# ---- row_sum: a host `if` picks the kernel by the row length ---------------------------------------


@pytest.mark.parametrize(
    "shape,kernel",
    [
        ((1, 1), "warp_row_sum_kernel"),
        ((5, 33), "warp_row_sum_kernel"),
        ((1001, 1024), "warp_row_sum_kernel"),
        ((3, 1025), "block_row_sum_kernel"),
        ((513, 8192), "block_row_sum_kernel"),
        ((2, 131072), "block_row_sum_kernel"),
    ],
)
def test_row_sum_both_branches(gpu, load, shape, kernel):
    torch = gpu
    f = load("row_sum").row_sum
    x = torch.rand(shape, device="cuda") * 2 - 1
    buf, out = guarded(torch, (shape[0],), torch.float32)
    # The branch this shape takes (checked offline by the same plan), then the sums against torch.
    (launch,) = f.check(x, out)
    assert launch["kernel"] == kernel, (shape, launch["kernel"])
    f(x, out)
    torch.cuda.synchronize()
    assert_row_sums(x, out, buf, (shape[0],))
    # The host's assert holds for both branches: a wrong-sized output is refused, untouched.
    bad = torch.full((shape[0] + 1,), float("nan"), device="cuda")
    assert "out needs one entry per row of x" in assert_refused_untouched(torch, f, bad, x, bad)


# ---- row_sum_v4 and fast_row_sum: 16-byte vectors, lanes or a block per row ----------------------

# M = 1 and N = 4 (one vector); rows that are not whole chunks of threads * 4 * ilp (100, 1020,
# 4100: the clamped tail); rows past M in the last block of the lanes-per-row kernel (5, 7, 33);
# the bench shapes 65536x256 and 4096x4096.
V4_SHAPES = [(1, 4), (3, 4), (5, 100), (1, 1000), (7, 1020), (33, 4100), (2, 131072), (65536, 256), (4096, 4096)]


@pytest.mark.parametrize("shape", V4_SHAPES)
def test_fast_row_sum(gpu, load, shape):
    torch = gpu
    f = load("row_sum").fast_row_sum
    x = torch.rand(shape, device="cuda") * 2 - 1
    buf, out = guarded(torch, (shape[0],), torch.float32)
    # Lanes per row up to 1024 columns, a block per row above (the plan, checked offline).
    (launch,) = f.check(x, out)
    want = "lanes_row_sum_v4_kernel" if shape[1] <= 1024 else "block_row_sum_v4_kernel"
    assert launch["kernel"].startswith(want), (shape, launch["kernel"])
    f(x, out)
    torch.cuda.synchronize()
    assert_row_sums(x, out, buf, (shape[0],))


# (threads per row, vectors per thread per chunk): each lanes-per-row width, block sizes from 64
# to 1024, every ILP.
V4_CONFIGS = [(4, 1), (4, 8), (8, 2), (16, 4), (32, 1), (32, 8), (64, 1), (128, 2), (256, 4), (512, 8), (1024, 8)]


@pytest.mark.parametrize("threads,ilp", V4_CONFIGS)
def test_row_sum_v4(gpu, load, threads, ilp):
    torch = gpu
    f = load("row_sum").row_sum_v4
    for shape in shapes(V4_SHAPES):
        if shape[0] * shape[1] > 1 << 22 and (threads, ilp) not in [(32, 8), (512, 8), (16, 4), (256, 4)]:
            continue  # the two big shapes only with a few configurations
        x = torch.rand(shape, device="cuda") * 2 - 1
        buf, out = guarded(torch, (shape[0],), torch.float32)
        (launch,) = f.check(x, out, threads, ilp)
        want = "lanes_row_sum_v4_kernel" if threads <= 32 else "block_row_sum_v4_kernel"
        assert launch["kernel"].startswith(want), (threads, ilp, shape, launch["kernel"])
        f(x, out, threads, ilp)
        torch.cuda.synchronize()
        assert_row_sums(x, out, buf, (shape[0],))
    # Padded rows: a row stride (1028) past the row (1000), a multiple of 4 as the host requires.
    whole = torch.rand(9, 1028, device="cuda") * 2 - 1
    x = whole[:, :1000]
    buf, out = guarded(torch, (9,), torch.float32)
    f(x, out, threads, ilp)
    torch.cuda.synchronize()
    assert_row_sums(x, out, buf, (9,))


def test_row_sum_v4_refusals(gpu, load):
    torch = gpu
    m_ = load("row_sum")
    out = torch.full((4,), float("nan"), device="cuda")
    # Rows that are not whole 16-byte vectors (N = 6, and a row stride of 1030), for both hosts.
    x = torch.rand(4, 6, device="cuda")
    assert "must be a multiple of 4" in assert_refused_untouched(torch, m_.fast_row_sum, out, x, out)
    assert "must be a multiple of 4" in assert_refused_untouched(torch, m_.row_sum_v4, out, x, out, 32, 2)
    x = torch.rand(4, 1030, device="cuda")[:, :1024]
    assert "must be a multiple of 4" in assert_refused_untouched(torch, m_.fast_row_sum, out, x, out)
    # One output per row.
    x = torch.rand(5, 256, device="cuda")
    assert "out needs one entry per row of x" in assert_refused_untouched(torch, m_.fast_row_sum, out, x, out)
    x = torch.rand(4, 256, device="cuda")
    # Knobs without a kernel: threads must be 4, 8, 16, 32 or a multiple of 32 in 64..1024; ilp 1, 2, 4, 8.
    for threads, ilp in [(48, 2), (2048, 2), (0, 2), (2, 1), (32, 3), (128, 16)]:
        msg = assert_refused_untouched(torch, m_.row_sum_v4, out, x, out, threads, ilp)
        assert ("threads must be" in msg) if ilp in (1, 2, 4, 8) else ("ilp must be 1, 2, 4 or 8" in msg), (
            threads,
            ilp,
            msg,
        )


# ---- chunked_add: host run-time loops, one launch per chunk of rows ---------------------------------


@pytest.mark.parametrize("rows,cols,chunk", [(1, 1, 1), (100, 300, 32), (96, 300, 32), (1000, 77, 7), (3, 4096, 1000)])
def test_chunked_add_loops_at_run_time(gpu, load, rows, cols, chunk):
    torch = gpu
    f = load("chunked_add").chunked_add
    a = torch.rand(rows, cols, device="cuda") * 2 - 1
    b = torch.rand(rows, cols, device="cuda") * 2 - 1
    buf, c = guarded(torch, (rows, cols), torch.float32)
    assert len(f.check(a, b, c, chunk)) == -(-rows // chunk)
    f(a, b, c, chunk)
    torch.cuda.synchronize()
    assert torch.equal(c, a + b), (rows, cols, chunk)
    assert guards_untouched(buf, rows * cols)
    # A step that is not positive is refused, nothing written.
    buf, c = guarded(torch, (rows, cols), torch.float32)
    for bad in (0, -chunk):
        assert "the step of a loop must be positive" in assert_refused_untouched(torch, f, c, a, b, c, bad)


def test_chunked_add_in_a_cuda_graph(gpu, load):
    """A looping host call captured into a CUDA graph: every trip's launch is recorded, none runs
    until the replay, and the replay computes the whole sum."""
    torch = gpu
    f = load("chunked_add").chunked_add
    rows, cols, chunk = 1000, 130, 64
    a = torch.rand(rows, cols, device="cuda")
    b = torch.rand(rows, cols, device="cuda")
    buf, c = guarded(torch, (rows, cols), torch.float32)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(side):
        with torch.cuda.graph(g):
            f(a, b, c, chunk)
    torch.cuda.synchronize()
    assert bool(c.isnan().all()), "a captured call ran"
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(c, a + b)
    assert guards_untouched(buf, rows * cols)


@pytest.mark.parametrize("rows,cols", [(16, 64), (48, 192), (256, 1024)])
def test_tiled_add_nested_loops(gpu, load, rows, cols):
    torch = gpu
    f = load("chunked_add").tiled_add
    a = torch.rand(rows, cols, device="cuda")
    b = torch.rand(rows, cols, device="cuda")
    buf, c = guarded(torch, (rows, cols), torch.float32)
    f(a, b, c)
    torch.cuda.synchronize()
    assert torch.equal(c, a + b), (rows, cols)
    assert guards_untouched(buf, rows * cols)
    bad = torch.full((rows + 8, cols), float("nan"), device="cuda")
    x = torch.rand(rows + 8, cols, device="cuda")
    assert "whole 16 x 64 tiles" in assert_refused_untouched(torch, f, bad, x, x, bad)


# ---- printf samples ------------------------------------------------------------------------------


def run_printing(torch, capfd, fn):
    flushed_stdout(capfd)
    fn()
    torch.cuda.synchronize()
    return flushed_stdout(capfd)


def test_hello_world(gpu, load, capfd):
    out = run_printing(gpu, capfd, lambda: load("hello_world").hello_world())
    assert out == "hello world\nHello world\n"


def test_cuda_graph_captures_host_calls(gpu, load, capfd):
    torch = gpu
    host = load("cuda_graph").hello_world
    out = run_printing(torch, capfd, host)  # warm-up, outside the capture
    assert out == "Hello world\n"
    g = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        with torch.cuda.graph(g):
            host()
            host()
    torch.cuda.synchronize()
    assert flushed_stdout(capfd) == "", "a captured call ran"
    out = run_printing(torch, capfd, g.replay)
    assert out == "Hello world\nHello world\n"


def test_printing(gpu, load, capfd):
    torch = gpu
    m = load("printing")
    assert run_printing(torch, capfd, lambda: m.print_example(8)) == ">?? 8\n>?? 2\n>?? (8,2):(1,8)\n"
    assert run_printing(torch, capfd, lambda: m.format_string_example(8)) == ""
    x = torch.zeros(4, 8, device="cuda")
    x[1, 2] = 10.0
    out = run_printing(torch, capfd, lambda: m.kernel("print_in_kernel")(x, grid=1, block=32))
    assert out == "block 0 of 1: x = (4,8):(8,1), x[1,2] = 10.000000\n"


def test_layout_algebra_on_the_device(gpu, load, capfd):
    from test_offline import LAYOUT_OUTPUT

    m = load("layout_algebra")
    for (name, args), want in LAYOUT_OUTPUT.items():
        assert run_printing(gpu, capfd, lambda name=name, args=args: getattr(m, name)(*args)) == want, name


NUMERIC = {
    "run_bar": ["a(dynamic) = 3.140000", "b(dynamic) = 5"],
    "run_type_conversion": [
        "Int32(42) => Float32(42.000000)",
        "Float32(3.140000) => Int32(3)",
        "Int32(127) => Int8(127)",
        "Int32(300) => Int8(44) (truncated due to range limitation)",
    ],
    "run_operator_demo": [
        "a: Int32(10), b: Int32(3)",
        "x: Float32(5.500000)",
        "a + b = 13",
        "x * 2 = 11.000000",
        "a + x = 15.500000 (Int32 + Float32 promotes to Float32)",
        "a / b = 3",
        "x / 2.0 = 2.750000",
        "a > b = 1",
        "a & b = 2",
        "-a = -10",
        "~a = -11",
        "-7 / 2 = -4, -7 % 2 = 1",
        "7 / -2 = -3, 7 % -2 = 1",
    ],
}


@pytest.mark.parametrize("host", list(NUMERIC))
def test_numeric_types(gpu, load, capfd, host):
    out = run_printing(gpu, capfd, getattr(load("numeric_types"), host))
    assert out.splitlines() == NUMERIC[host]


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_four_ways_copy(gpu, load, capfd, k):
    torch = gpu
    # mA[i, j] = 128 i + j: thread 1 holds row 0, columns 8..15.
    a = torch.arange(8 * 128, device="cuda", dtype=torch.float32).view(8, 128)
    out = run_printing(torch, capfd, lambda: getattr(load("four_ways_copy"), f"cute_copy_{k}")(a))
    assert tensor_values(out) == [[float(v) for v in range(8, 16)]], out


def test_tensor_ssa(gpu, load, capfd):
    torch = gpu
    m = load("tensor_ssa")
    f32 = lambda *v: torch.tensor(v, device="cuda", dtype=torch.float32)  # noqa: E731
    nan3 = lambda: torch.full((3,), float("nan"), device="cuda")  # noqa: E731
    same = lambda v, n=3: [float(v)] * n  # noqa: E731

    res = torch.full((3, 4), float("nan"), device="cuda")
    run_printing(
        torch,
        capfd,
        lambda: m.run_load_and_store(res, torch.ones(3, 4, device="cuda"), torch.ones(3, 4, device="cuda")),
    )
    assert torch.equal(res, torch.full((3, 4), 2.0, device="cuda"))

    src = torch.arange(24, device="cuda", dtype=torch.float32).view(4, 2, 3)
    dst = torch.full((4, 3), float("nan"), device="cuda")
    out = run_printing(torch, capfd, lambda: m.kernel("apply_slice")(src, dst, grid=1, block=1))
    want = [3.0, 4.0, 5.0, 9.0, 10.0, 11.0, 15.0, 16.0, 17.0, 21.0, 22.0, 23.0]
    assert dst.flatten().tolist() == want and [sorted(v) for v in tensor_values(out)] == [want]

    res = nan3()
    out = run_printing(torch, capfd, lambda: m.kernel("binary_op_1")(res, f32(1, 1, 1), f32(2, 2, 2), grid=1, block=1))
    assert tensor_values(out) == [same(3), same(-1), same(2), same(0.5), same(0), same(1)]
    assert res.tolist() == same(1)  # the last store: a % b

    res = nan3()
    out = run_printing(torch, capfd, lambda: m.run_binary_op_2(res, f32(1, 1, 1)))
    assert tensor_values(out) == [same(3), same(-1), same(2), same(0.5)] and res.tolist() == same(0.5)

    flags = torch.full((3,), True, device="cuda")
    run_printing(torch, capfd, lambda: m.kernel("binary_op_3")(flags, f32(1, 2, 3), f32(2, 1, 4), grid=1, block=1))
    assert flags.tolist() == [False, True, False]

    ints = torch.full((3,), -1, device="cuda", dtype=torch.int32)
    i32 = lambda *v: torch.tensor(v, device="cuda", dtype=torch.int32)  # noqa: E731
    run_printing(torch, capfd, lambda: m.kernel("binary_op_4")(ints, i32(1, 2, 3), i32(2, 2, 4), grid=1, block=1))
    assert ints.tolist() == [3, 0, 7]

    res = nan3()
    out = run_printing(torch, capfd, lambda: m.kernel("unary_op_1")(res, f32(4, 4, 4), grid=1, block=1))
    vals = tensor_values(out)
    assert vals[0] == same(2) and vals[2] == same(16) and all(abs(v - math.sin(4)) < 1e-5 for v in vals[1])
    assert res.tolist() == same(16)  # the last store: exp2(4)

    out = run_printing(
        torch, capfd, lambda: m.kernel("reduction_op")(f32(1, 2, 3, 4, 5, 6).view(2, 3), grid=1, block=1)
    )
    assert "21.000000" in out.splitlines() and tensor_values(out) == [[6.0, 15.0], [6.0, 8.0, 10.0]]


def test_tensors_print(gpu, load, capfd):
    torch = gpu
    m = load("tensors")
    # Example 1: x(i,j,k) = 6i + 2j + k for (4,3,2):(6,2,1); CuTe prints the last mode outermost,
    # then the rows of mode 0, each holding mode 1.
    x = torch.arange(24, device="cuda", dtype=torch.float32).view(4, 3, 2)
    out = run_printing(torch, capfd, lambda: m.tensor_print_example1(x))
    assert out.splitlines().count("Basic output:") == 1
    rows = [[float(6 * i + 2 * j + k) for j in range(3)] for k in range(2) for i in range(4)]
    from printed import tensor_prints

    assert tensor_prints(out) == [rows], out
    # Example 2 (verbose): one line per coordinate of arange(12) as (4,3):(3,1).
    x = torch.arange(12, device="cuda", dtype=torch.float32).view(4, 3)
    out = run_printing(torch, capfd, lambda: m.tensor_print_example2(x))
    lines = out.splitlines()
    want = ["Verbose output:"] + [f"\t({i},{j})= {3 * i + j}.000000" for i in range(4) for j in range(3)]
    it = iter(lines)
    assert all(any(line == w for line in it) for w in want), out
    assert all(lines.count(w) == 1 for w in want)
    # Example 3: column 0, then row 1.
    out = run_printing(torch, capfd, lambda: m.tensor_print_example3(x))
    assert out.splitlines().count("Slice output:") == 2
    assert tensor_values(out) == [[0.0, 3.0, 6.0, 9.0], [3.0, 4.0, 5.0]]


# ---- tensor cores -------------------------------------------------------------------------------


def tf32_truncated(torch, x):
    # The tensor cores read a tf32 operand from a 32-bit register and ignore its low 13 mantissa bits.
    return (x.view(torch.int32) & ~0x1FFF).view(torch.float32)


# One MMA of each SM80 atom that runs on the H100 (samples/mma_atom.cute): host, A and B shapes,
# input and accumulator dtypes, tolerance relative to max|C|.
MMA_ATOMS = [
    # f32 accumulation of 16 exact bf16 products.
    ("mma_16x8x16", (16, 16), (8, 16), "bfloat16", "float32", 1e-5),
    # f16 accumulation: each of the 16 adds rounds to 11 bits.
    ("mma_16x8x16_f16", (16, 16), (8, 16), "float16", "float16", 2.0**-7),
    # f32 accumulation of 8 exact tf32 products (the reference clears the bits the hardware ignores).
    ("mma_16x8x8_tf32", (16, 8), (8, 8), "float32", "float32", 1e-5),
    # The bf16 MMA with A and B through shared memory: ldmatrix.x4 (A) and ldmatrix.x2 (B).
    ("mma_16x8x16_ldmatrix", (16, 16), (8, 16), "bfloat16", "float32", 1e-5),
]


@pytest.mark.parametrize("host,sa,sb,din,dout,tol", MMA_ATOMS, ids=[c[0] for c in MMA_ATOMS])
def test_mma_atom(gpu, load, host, sa, sb, din, dout, tol):
    torch = gpu
    f = load("mma_atom").host(host)
    for _ in range(5):
        a = torch.randn(*sa, device="cuda").to(getattr(torch, din))
        b = torch.randn(*sb, device="cuda").to(getattr(torch, din))
        c = torch.full((16, 8), float("nan"), device="cuda", dtype=getattr(torch, dout))
        f(a, b, c)
        torch.cuda.synchronize()
        if din == "float32":
            a, b = tf32_truncated(torch, a), tf32_truncated(torch, b)
        ref = a.double() @ b.double().T
        assert float((c.double() - ref).abs().max() / ref.abs().max()) < tol


def need_sm90a(torch):
    """sm_90a cubins (wgmma) run on compute capability 9.0 devices only."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip(f"wgmma cubins are sm_90a: needs a Hopper GPU, found {torch.cuda.get_device_name()}")


# samples/wgmma_atom.cute: one wgmma m64n128k16 bf16 -> f32 (32-byte swizzled tiles), and four
# m64n64k16 f16 -> f32 along K = 64 over two warpgroups (128-byte swizzle). samples/wgmma_rs.cute:
# A from registers (RS atoms), one m64n256k16 bf16 -> f32 (A through ldmatrix.x4), four
# m64n64k16 f16 -> f32 along K = 64 over two warpgroups (A through a universal 32-bit copy), and
# four m64n64k32 e4m3 -> f32 along K = 128 (the same, 16 e4m3 values a thread and k-block).
# Sample, host, A, B, C shapes, dtype.
WGMMA_ATOMS = [
    ("wgmma_atom", "wgmma_64x128x16", (64, 16), (128, 16), (64, 128), "bfloat16"),
    ("wgmma_atom", "wgmma_128x64x64_sw128", (128, 64), (64, 64), (128, 64), "float16"),
    ("wgmma_rs", "wgmma_rs_64x256x16", (64, 16), (256, 16), (64, 256), "bfloat16"),
    ("wgmma_rs", "wgmma_rs_128x64x64", (128, 64), (64, 64), (128, 64), "float16"),
    ("wgmma_rs", "wgmma_rs_fp8_128x64x128", (128, 128), (64, 128), (128, 64), "float8_e4m3fn"),
]


@pytest.mark.parametrize("sample,host,sa,sb,sc,din", WGMMA_ATOMS, ids=[c[1] for c in WGMMA_ATOMS])
def test_wgmma_atom(gpu, load, sample, host, sa, sb, sc, din):
    torch = gpu
    need_sm90a(torch)
    f = load(sample).host(host)
    for _ in range(5):
        a = torch.randn(*sa, device="cuda").to(getattr(torch, din))
        b = torch.randn(*sb, device="cuda").to(getattr(torch, din))
        c = torch.full(sc, float("nan"), device="cuda", dtype=torch.float32)
        f(a, b, c)
        torch.cuda.synchronize()
        ref = a.double() @ b.double().T
        # FP8's wgmma adds its products with fewer bits than f32 (tutorial §17.7, "Promotion").
        tol = 1e-3 if din.startswith("float8") else 1e-5
        assert float((c.double() - ref).abs().max() / ref.abs().max()) < tol


# samples/stmatrix_epilogue.cute: MMA accumulators converted to bf16, through stmatrix (and its
# .trans form into an M-major tile) into shared memory, then to global; each against the same
# epilogue through the universal copy and torch. Small integer inputs: every product and sum of
# the 16 is exact in f32 and in bf16 (|C| <= 144), so all must agree bit for bit.
# Sample host, its universal-copy twin, A, B and C shapes.
STMATRIX_EPILOGUES = [
    ("mma_epilogue_stmatrix", "mma_epilogue_universal", (32, 16), (64, 16), (32, 64)),
    ("mma_epilogue_stmatrix_trans", "mma_epilogue_universal", (32, 16), (64, 16), (32, 64)),
    ("wgmma_epilogue_stmatrix", "wgmma_epilogue_universal", (64, 16), (128, 16), (64, 128)),
]


@pytest.mark.parametrize("host,twin,sa,sb,sc", STMATRIX_EPILOGUES, ids=[c[0] for c in STMATRIX_EPILOGUES])
def test_stmatrix_epilogue(gpu, load, host, twin, sa, sb, sc):
    torch = gpu
    need_sm90a(torch)
    m = load("stmatrix_epilogue")
    f, g = m.host(host), m.host(twin)
    for _ in range(5):
        a = torch.randint(-3, 4, sa, device="cuda").to(torch.bfloat16)
        b = torch.randint(-3, 4, sb, device="cuda").to(torch.bfloat16)
        c = torch.full(sc, float("nan"), device="cuda", dtype=torch.bfloat16)
        d = torch.full(sc, float("nan"), device="cuda", dtype=torch.bfloat16)
        f(a, b, c)
        g(a, b, d)
        torch.cuda.synchronize()
        ref = (a.double() @ b.double().T).to(torch.bfloat16)
        assert torch.equal(c, ref), f"{host}: {(c != ref).sum().item()} of {c.numel()} differ from torch"
        assert torch.equal(c, d), f"{host} and {twin} differ"


# GEMM operand layouts (samples/gemm_sm80.cute): how A and B are stored, the views passed (the
# first the host's checks accept on a one-tile probe), and C = X @ Y of the stored operands.
GEMM_LAYOUTS = {
    "tn": (lambda M, N, K: ((M, K), (N, K)), [lambda a, b: (a, b)], lambda a, b: (a, b.t())),
    "nn": (
        lambda M, N, K: ((K, M), (N, K)),
        [lambda a, b: (a, b), lambda a, b: (a.t(), b)],
        lambda a, b: (a.t(), b.t()),
    ),
    "nt": (
        lambda M, N, K: ((K, M), (K, N)),
        [lambda a, b: (a, b), lambda a, b: (a.t(), b.t())],
        lambda a, b: (a.t(), b),
    ),
}
GEMM_TOL = {"bfloat16": 4 * 2.0**-7, "float16": 4 * 2.0**-10, "float32": 1e-3}


def gemm_hosts(cubin):
    hosts = cutec.manifest(cubin("gemm_sm80")).hosts
    out = []
    for layout in GEMM_LAYOUTS:
        for din, short in (("bfloat16", "bf16"), ("float16", "f16")):
            for dout, suffix in ((din, ""), ("float32", "_f32")):
                name = f"gemm_{layout}_{short}{suffix}"
                if name in hosts:
                    out.append((name, layout, din, dout))
    return out


# The tails come first, so that the sanitizer run (the first two shapes) covers predication.
GEMM_SHAPES = [
    (100, 200, 72),
    (128, 256, 64),
    (256, 512, 192),
    (128, 128, 128),
    (1, 8, 8),
    (1000, 1000, 1000),
    (200, 264, 136),
    (4096, 4096, 4104),
    (4096, 4096, 4096),
]


@pytest.mark.parametrize("shape", shapes(GEMM_SHAPES), ids=lambda s: "x".join(map(str, s)))
def test_gemm(gpu, load, cubin, shape):
    torch = gpu
    m = load("gemm_sm80")
    hosts = gemm_hosts(cubin)
    assert hosts, "no gemm host function in gemm_sm80.cubin"
    M, N, K = shape
    # Every tail is predicated; only a contiguous extent that is not a multiple of 8 (16-byte
    # copies) may be refused.
    multiple = M % 8 == 0 and N % 8 == 0 and K % 8 == 0
    for name, layout, din, dout in hosts:
        store, views, mm = GEMM_LAYOUTS[layout]
        host = m.host(name)
        sa, sb = store(M, N, K)
        a = (torch.randn(sa, device="cuda") * K**-0.25).to(getattr(torch, din))
        b = (torch.randn(sb, device="cuda") * K**-0.25).to(getattr(torch, din))
        buf, c = guarded(torch, (M, N), getattr(torch, dout))
        chosen = None
        for v in views:
            try:
                host.check(*v(a, b), c)
                chosen = v
                break
            except cutec.Refused as e:
                refusal = e
        if chosen is None:
            assert not multiple, f"{name} refused {shape}, whose extents are multiples of 8: {refusal}"
            continue
        host(*chosen(a, b), c)
        torch.cuda.synchronize()
        x, y = mm(a.double(), b.double())
        ref = x @ y
        rel = float((c.double() - ref).abs().max() / ref.abs().max())
        assert rel <= GEMM_TOL[dout], (name, shape, rel)
        assert guards_untouched(buf, M * N), (name, shape)


# samples/gemm_sm90.cute (warp-specialized TMA + wgmma, sm_90a): C = A @ B^T for the logical A (M,K)
# and B (N,K), bf16/f16 in, f32 accumulation, C of the input type or f32, in the four operand
# layouts: K-major operands through K-major wgmma tiles, M-/N-major ones through MN-major tiles
# (the instruction's transpose bits) filled by 64-row TMA boxes. Per layout: how A and B are
# stored (row-major torch tensors), the logical views the host takes, and C = X @ Y of the stored
# ones (torch's semantics). Tails (200x264x136, 100x200x72, 1x8x8, 7x1000x128, 127x1000x1000,
# 1000x1000x1000, K = 8 and 4104: one k-tile and a partial last k-tile) are zero-filled by TMA and
# predicated in the epilogue; 8192x128x64 runs more blocks than the GPU holds at once. TMA needs
# 16-byte strides: the contiguous extent of each operand, K of a K-major one, M of an M-major A,
# N of an N-major B, must be a multiple of 8 (and C's N, 8 for 16-bit C, 4 for f32): other shapes
# are refused by the host function's checks, before any launch.
GEMM90_LAYOUTS = {
    "tn": (lambda M, N, K: ((M, K), (N, K)), lambda a, b: (a, b), lambda a, b: (a, b.t()), ("K", "K")),
    "nt": (lambda M, N, K: ((K, M), (K, N)), lambda a, b: (a.t(), b.t()), lambda a, b: (a.t(), b), ("M", "N")),
    "nn": (lambda M, N, K: ((K, M), (N, K)), lambda a, b: (a.t(), b), lambda a, b: (a.t(), b.t()), ("M", "K")),
    "tt": (lambda M, N, K: ((M, K), (K, N)), lambda a, b: (a, b.t()), lambda a, b: (a, b), ("K", "N")),
}
GEMM90_SHAPES = [
    (200, 264, 136),
    (100, 200, 72),
    (128, 128, 128),
    (1, 8, 8),
    (7, 1000, 128),
    (127, 1000, 1000),
    (256, 512, 192),
    (1000, 1000, 1000),
    (4096, 4096, 4096),
    (136, 264, 4104),
    (8192, 128, 64),
    (8192, 8192, 8192),
]


def check_gemm90(torch, host, layout, shape, din, dout, extra=()):
    """One call of a gemm_sm90* host function for `layout` (GEMM90_LAYOUTS) on fresh operands of
    dtype `din` into a guarded C of `dout` (then the arguments `extra`, a workspace), against
    float64; a shape whose contiguous extents TMA cannot take must be refused instead. Returns the
    call's arguments (None when refused)."""
    M, N, K = shape
    store, views, mm, contiguous = GEMM90_LAYOUTS[layout]
    extent = {"M": M, "N": N, "K": K}
    sa, sb = store(M, N, K)
    a = (torch.randn(sa, device="cuda") * K**-0.25).to(getattr(torch, din))
    b = (torch.randn(sb, device="cuda") * K**-0.25).to(getattr(torch, din))
    buf, c = guarded(torch, (M, N), getattr(torch, dout))
    fits = all(extent[d] % 8 == 0 for d in contiguous) and N % (4 if dout == "float32" else 8) == 0
    args = (*views(a, b), c, *extra)
    if not fits:
        with pytest.raises(cutec.Refused):
            host.check(*args)
        return None
    host(*args)
    torch.cuda.synchronize()
    x, y = mm(a.double(), b.double())
    ref = x @ y
    rel = float((c.double() - ref).abs().max() / ref.abs().max())
    assert rel <= GEMM_TOL[dout], (layout, din, dout, shape, rel)
    assert guards_untouched(buf, M * N), (layout, din, dout, shape)
    return args


@pytest.mark.parametrize("layout", list(GEMM90_LAYOUTS))
@pytest.mark.parametrize("shape", shapes(GEMM90_SHAPES), ids=lambda s: "x".join(map(str, s)))
def test_gemm_sm90(gpu, load, shape, layout):
    torch = gpu
    need_sm90a(torch)
    m = load("gemm_sm90")
    for din, short in (("bfloat16", "bf16"), ("float16", "f16")):
        for dout, suffix in ((din, ""), ("float32", "_f32")):
            check_gemm90(torch, m.host(f"gemm_{layout}_{short}{suffix}"), layout, shape, din, dout)


# samples/gemm_sm90_persistent.cute: the same GEMM made persistent (grid = min(tiles, 132 SMs),
# each block walking tiles with its pipeline running on from one to the next, C stored from a
# shared staging tile with TMA), its host functions picking the tile per call (the rule in the
# sample's header; test_offline.py checks which instance each shape gets). Four layouts x bf16/f16,
# C of the input type, against float64. Per tile (the comment), fewer tiles than SMs and more
# (a block then computes several, its producer loading the next tile's k-tiles during the
# epilogue), with one or two k-tiles (short K: the producer runs whole tiles ahead), and the tails
# M, N, K of 1, 7, 127, 1000 where TMA's 16-byte strides allow them: K of 1, 7, 127 in NT only
# (both operands M-/N-major), M of 1, 7, 127 in TN and TT (A K-major), N of 1 and 7 never (C's
# rows are stored by TMA); those calls must be refused before any launch.
GEMM90P_SHAPES = [
    (1, 8, 8),  # 128x64, one tile
    (7, 1000, 128),  # 64x128, 8 tiles
    (127, 1000, 1000),  # 64x128, 16
    (1000, 1000, 1000),  # 64x128, 128
    (200, 264, 136),  # 64x128, 12; a partial last k-tile
    (136, 264, 4104),  # 64x128, 9
    (256, 512, 1),  # 64x128; K = 1, 7, 127: NT only
    (256, 512, 7),
    (256, 512, 127),
    (1000, 7, 128),  # refused: C's N
    (1000, 1, 64),  # refused
    (1000, 1064, 1000),  # 128x128, 72 tiles
    (20000, 120, 136),  # 128x128, 157 tiles: more than SMs
    (1536, 1536, 1536),  # 128x256, 72 tiles
    (4096, 4096, 4096),  # 128x256, 512
    (4096, 4096, 64),  # 128x256, 512 tiles of one k-tile each
    (8200, 8200, 136),  # 128x256, 2145 tiles, tails in M and N
    (17000, 64, 72),  # 128x64, 133 tiles: block 0 computes two
    (30000, 48, 8),  # 128x64, 235 tiles of one k-tile each
]


@pytest.mark.parametrize("layout", list(GEMM90_LAYOUTS))
@pytest.mark.parametrize("shape", shapes(GEMM90P_SHAPES), ids=lambda s: "x".join(map(str, s)))
def test_gemm_sm90_persistent(gpu, load, shape, layout):
    check_gemm90_16bit(gpu, load, "gemm_sm90_persistent", layout, shape)


def check_gemm90_16bit(torch, load, sample, layout, shape):
    """check_gemm90 of the sample's `gemm_{layout}_bf16` and `_f16` host functions, C of the input type."""
    need_sm90a(torch)
    m = load(sample)
    for din, short in (("bfloat16", "bf16"), ("float16", "f16")):
        check_gemm90(torch, m.host(f"gemm_{layout}_{short}"), layout, shape, din, din)


# samples/gemm_sm90_splitk.cute: split-K for few output tiles and long K. Where the host's rule splits
# (test_offline.py checks which shapes do), either (N or M at most 64) the slices of each 64x64 tile
# run as one thread-block cluster and sum through distributed shared memory into C, or a partial
# kernel per (tile, K slice) writes f32 partial tiles into the workspace W and a second kernel sums
# them in slice order into C; elsewhere the call is the persistent kernel's. Four layouts x bf16/f16
# against float64, M, N, K from 1, 7, 127, 1000, 4096 (with 8, 16, 96 of issue 31's skinny shapes,
# whose N TMA can store): skinny M and N in clusters of 2, 4 and 8 (skinny N in 64x16 and 64x32
# tiles, skinny M so too as C^T = B A^T) with tails in M and N, K not a
# multiple of the k-tile, uneven slices, shapes the rule leaves unsplit, and the refusals of
# extents TMA cannot take; then the persistent kernel's full waves with the last wave split. W is
# poisoned with NaN before each call (a slice the partial kernel failed to write would reach C),
# and a second call must give a bit-identical C (the fixed summation order: no atomics).
SPLITK_WORKSPACE = 132 * 128 * 128  # f32 elements: the size the sample's header gives, for every shape
GEMM90SK_SHAPES = [
    (16, 4096, 4096),  # 64 tiles in clusters of 2: C^T = B A^T in 64x16 tiles
    (24, 4104, 2104),  # C^T in 64x32 tiles: tails in M, N and K
    (1, 2056, 4096),  # C^T in 64x16 tiles: 33 tiles, one row (TN, TT; refused where A is M-major)
    (8, 2056, 4096),  # C^T in 64x16 tiles: 33 tiles, 8 rows
    (1, 1000, 4096),  # 16 tiles in clusters of 4
    (8, 960, 4096),  # 15 tiles in clusters of 8
    (7, 4096, 1000),  # not split (16 k-tiles): the persistent kernel, M = 7
    (127, 1000, 4096),  # 128x128 through W: 8 tiles, 16 slices
    (127, 4096, 1000),  # not split (16 k-tiles)
    (4096, 16, 4096),  # clusters of 2 in 64x16 tiles
    (2056, 16, 4096),  # 33 tiles in clusters of 2 (64x16), a tail in M
    (4104, 24, 2104),  # 65 tiles (64x32), tails in M, N, K (33 k-tiles: slices of 16, 17)
    (4096, 96, 1000),  # not split (16 k-tiles)
    (1000, 8, 4096),  # 16 tiles in clusters of 4, the last 40 rows
    (1, 8, 4096),  # one tile, a cluster of 8
    (16, 4096, 1600),  # C^T in 64x16 tiles, 25 k-tiles (narrow tiles split from 24): slices of 12, 13
    (4104, 24, 1560),  # 64x32 tiles, 25 k-tiles; tails in M, N and K
    (16, 4096, 1472),  # not split (23 k-tiles)
    (768, 768, 768),  # not split (12 k-tiles): the persistent kernel, 64x128
    (1000, 1000, 1000),  # not split: the persistent kernel
    (1000, 4096, 127),  # not split; K = 127 in NT only
    (7, 1000, 127),  # refused in every layout (M = 7 or K = 127 against TMA's strides)
    (1000, 7, 4096),  # refused: C's N
    # The full waves on the persistent kernel, the last wave's tiles split (test_offline.py checks
    # the launches): tiles the persistent kernel leaves must be exactly those the split computes.
    (5000, 5000, 1024),  # 128x256: 6 waves, then 8 tiles as 16 128x128 halves x 4 slices
    (8200, 8200, 1024),  # 128x256, persistent (a last wave of 33 tiles: too many to split); tails in M and N
    (2824, 5768, 1000),  # 128x256: 4 waves, then one tile (2 halves, the second past N) x 4; tails in M, N, K
    (6728, 520, 1000),  # 128x128: 2 waves, then one tile x 4; tails in M, N and K
    (1536, 1536, 1536),  # 128x192, persistent (one wave)
    (1496, 1544, 1000),  # 128x192, persistent (one wave); tails in M, N and K
    (17000, 64, 1024),  # 64x64, persistent (266 tiles: two full waves and 2 tiles, the last 40 rows tall)
]


@pytest.mark.parametrize("layout", list(GEMM90_LAYOUTS))
@pytest.mark.parametrize("shape", shapes(GEMM90SK_SHAPES), ids=lambda s: "x".join(map(str, s)))
def test_gemm_sm90_splitk(gpu, load, shape, layout):
    torch = gpu
    need_sm90a(torch)
    m = load("gemm_sm90_splitk")
    w = torch.empty(SPLITK_WORKSPACE, device="cuda", dtype=torch.float32)
    for din, short in (("bfloat16", "bf16"), ("float16", "f16")):
        w.fill_(float("nan"))
        host = m.host(f"gemm_{layout}_{short}")
        args = check_gemm90(torch, host, layout, shape, din, din, extra=(w,))
        if args is not None:
            first = args[2].clone()
            w.fill_(float("nan"))
            host(*args)
            torch.cuda.synchronize()
            assert torch.equal(first, args[2]), (layout, din, shape)


# samples/gemm_sm90_multicast.cute: gemm_sm90.cute's TN GEMM in clusters of 2 blocks (M tiles 2i and
# 2i+1 of one N tile) that share the B tile through TMA multicast, bf16/f16 in and out, against
# float64. Odd M-tile counts (the grid padded with a block whose tile is past M, which still loads
# its half of B and arrives on its partner's barriers), even ones, a single M tile (the pair is one
# real block and one padding block), one k-tile and partial k-tiles, tails in M and N (a half of B
# wholly past N), many clusters; N of 7 refused before any launch (C's 16-byte rows).
GEMM90MC_SHAPES = [
    (1, 8, 8),  # one M tile: block 1 of the cluster is padding
    (128, 256, 64),  # one tile, one k-tile
    (129, 256, 64),  # two M tiles, the second of one row
    (200, 264, 136),  # 2 M tiles x 2 N tiles (the second N tile's upper half of B past N)
    (384, 1000, 72),  # 3 M tiles: padded; a partial second k-tile
    (7, 1000, 128),
    (127, 1000, 1000),
    (1000, 1000, 1000),  # 8 M tiles
    (1000, 7, 128),  # refused: C's N
    (1100, 520, 8),  # 9 M tiles (padded), K = 8: one k-tile
    (4096, 4096, 4096),
    (136, 264, 4104),  # 2 x 2 tiles, 65 k-tiles
    (8200, 8200, 136),  # 65 M tiles (padded) x 33 N tiles
    (8192, 8192, 8192),
]


@pytest.mark.parametrize("shape", shapes(GEMM90MC_SHAPES), ids=lambda s: "x".join(map(str, s)))
def test_gemm_sm90_multicast(gpu, load, shape):
    torch = gpu
    need_sm90a(torch)
    m = load("gemm_sm90_multicast")
    for din, short in (("bfloat16", "bf16"), ("float16", "f16")):
        check_gemm90(torch, m.host(f"gemm_tn_{short}"), "tn", shape, din, din)


# samples/gemm_sm90_persistent_multicast.cute: the persistent GEMM in clusters of 2 blocks along M
# that walk the schedule in lockstep on pairs of tiles (M tiles 2i, 2i+1 of one N tile), sharing
# each B k-tile through TMA multicast (each block loads half of it into both blocks' rings), for
# 128x256 and 128x128 tiles with at least 132 pairs where A's or B's rows are not 128-byte
# aligned (a K-major operand's K, an M-/N-major one's M or N not a multiple of 64); other calls
# fall back to the plain persistent kernel (test_offline.py checks which instance and grid each
# shape gets). Four layouts x bf16/f16
# against float64: odd M-tile counts (a padding tile past M in each N tile's last pair), one
# k-tile, K tails, M tails of 1, 7, 127 (M-major A refused: TMA's strides), N tails where rank
# 1's half of an N-major B is partly or wholly past N, many waves of clusters, and the fallbacks.
# A hang is a barrier missing the peer's arrival or bytes: pytest-timeout names the shape.
GEMM90PM_SHAPES = [
    (33544, 72, 8),  # 128x128 multicast: 263 M tiles (odd), 132 pairs, one k-tile; B's 72 rows
    (1, 8, 8),  # fallback: 128x64, one tile
    (4096, 4096, 520),  # 128x256 multicast where K-major (K rows of 1040 bytes): 256 pairs, 3.9 waves
    (4096, 4096, 512),  # rows aligned: the plain kernel
    (4096, 4096, 64),  # one k-tile a tile: the producers run whole tiles ahead
    (3912, 4096, 1000),  # 31 M tiles (odd, the last 72 rows), a partial last k-tile
    (4097, 4096, 128),  # M tail 1 (K-major A only): the 33rd M tile one row, beside a padding tile
    (4103, 4104, 1000),  # M tail 7, N tail 8 (17 N tiles), K tail
    (4223, 4096, 136),  # M tail 127
    (3968, 4104, 1),  # K = 1 (NT only: both operands M-/N-major): 31 M tiles (odd)
    (4096, 4096, 127),  # K = 127 (NT only)
    (5000, 5000, 1000),  # tails in M, N and K: 40 x 20 tiles
    (8200, 8200, 136),  # 65 M tiles (odd) x 33 N tiles
    (40000, 128, 136),  # 128x128 multicast: 313 M tiles (odd), one N tile
    (34000, 96, 64),  # 128x128 multicast, N = 96: rank 1's half of B partly past N
    (8192, 8192, 8192),
    (1000, 1000, 1000),  # fallback: 64x128
    (2048, 2048, 2048),  # fallback: 128x256, 64 pairs (one wave)
    (20000, 120, 136),  # fallback: 128x128, 79 pairs
    (17000, 64, 72),  # fallback: 128x64
    (1000, 7, 128),  # refused: C's N
]


@pytest.mark.parametrize("layout", list(GEMM90_LAYOUTS))
@pytest.mark.parametrize("shape", shapes(GEMM90PM_SHAPES), ids=lambda s: "x".join(map(str, s)))
def test_gemm_sm90_persistent_multicast(gpu, load, shape, layout):
    check_gemm90_16bit(gpu, load, "gemm_sm90_persistent_multicast", layout, shape)


# samples/gemm_sm90_pingpong.cute: the persistent GEMM's ping-pong schedule, each consumer warpgroup
# computing whole tiles (the block's tiles 2i + w for warpgroup w), the two taking turns at the
# tensor cores through named barriers (samples/lib/gemm_sm90_pingpong_kernel.cute). Its tile rule,
# per warpgroup: 128x64 for N <= 64, 128x128 where that makes at least 132 tiles, else 64x128
# (test_offline.py checks which instance and grid each shape gets). Four layouts x bf16/f16 against
# float64: blocks with one tile (warpgroup 1 never takes a turn), two, and an odd count (warpgroup 0
# one tile more: its last main loop hands no turn on), k-tile counts equal to the stages and to
# twice the stages (the pipeline states' skip over the partner's k-tiles flips the phase only, or
# moves nothing), one k-tile a tile, the tails M, N, K of 1, 7, 127, 1000 where TMA's strides allow
# them (else refused), 4096³. A hang is a turn or a barrier never arriving: pytest-timeout names
# the shape.
GEMM90PP_SHAPES = [
    (1, 8, 8),  # 128x64, one tile: warpgroup 1 has none
    (128, 128, 64),  # 64x128, 2 tiles in 2 blocks: a tile each
    (7, 1000, 128),  # 64x128, 8 tiles
    (127, 1000, 1000),  # 64x128, 16
    (1000, 1000, 1000),  # 64x128, 128 tiles of 16 k-tiles (twice the 8 stages)
    (1064, 1064, 1000),  # 64x128, 153 tiles: blocks 0-20 two
    (200, 264, 136),  # 64x128, 12; a partial last k-tile
    (136, 264, 4104),  # 64x128, 9 tiles of 65 k-tiles
    (256, 512, 1),  # 64x128; K = 1, 7, 127: NT only
    (256, 512, 7),
    (256, 512, 127),
    (1000, 7, 128),  # refused: C's N
    (1000, 1, 64),  # refused
    (17024, 128, 72),  # 128x128, 133 tiles: block 0 two (a turn each), the others one
    (16896, 256, 128),  # 128x128, 264 tiles: every block two
    (33920, 128, 136),  # 128x128, 265 tiles: block 0 three (warpgroup 0 two, 1 one)
    (1536, 1536, 1536),  # 128x128, 144 tiles
    (4096, 4096, 4096),  # 128x128, 1024 tiles: 7 or 8 a block
    (4096, 4096, 64),  # 128x128, one k-tile a tile: the producer runs tiles ahead
    (4096, 4096, 320),  # 5 k-tiles, the 5 stages: a skip flips the phase only
    (4096, 4096, 640),  # 10 k-tiles: a skip moves nothing
    (8200, 8200, 136),  # 65 x 65 tiles, tails in M and N
    (4097, 4096, 128),  # M tail 1 (K-major A only)
    (4103, 4104, 1000),  # M tail 7, N tail 8, K tail
    (4223, 4096, 136),  # M tail 127
    (3968, 4104, 1),  # K = 1 (NT only)
    (4096, 4096, 127),  # K = 127 (NT only)
    (5000, 5000, 1000),  # tails in M, N and K
    (17000, 64, 72),  # 128x64, 133 tiles
    (30000, 48, 8),  # 128x64, 235 tiles of one k-tile each
]


@pytest.mark.parametrize("layout", list(GEMM90_LAYOUTS))
@pytest.mark.parametrize("shape", shapes(GEMM90PP_SHAPES), ids=lambda s: "x".join(map(str, s)))
def test_gemm_sm90_pingpong(gpu, load, shape, layout):
    check_gemm90_16bit(gpu, load, "gemm_sm90_pingpong", layout, shape)


# samples/gemm_sm90_fp8.cute: C = (scale_a * scale_b) * (A @ B^T), A (M,K) and B (N,K)
# row-major FP8 (torch.float8_e4m3fn / float8_e5m2, any pair), the scales 1-element f32 device
# tensors (torch._scaled_mm's 0-dim scales, `.view(1)`), C bf16/f16 (gemm_tn_fp8) or f32
# (gemm_tn_fp8_f32). The reference is the float64 product of the dequantized inputs (the FP8
# values are exact in float64). Tolerance, max |C - ref| / max |ref|: wgmma's FP8 accumulation is
# not IEEE f32 (Hopper's FP8 tensor cores keep fewer bits while adding, and gemm_sm90_fp8.cute and
# gemm_sm90_fp8_persistent_fast.cute's *_fast_accum functions have no periodic promotion into an f32
# accumulator; gemm_sm90_fp8_persistent.cute's gemm_tn_fp8* promote: test_gemm_sm90_fp8_promotion
# below checks them tighter), so 1e-2 for f32
# and f16 C, 1e-2 + bf16's rounding for bf16 C; each case prints its measured error (pytest -s)
# for the accuracy note in docs/language.md §9. Tails: M, N of 1, 7, 127, 1000; C's N must be a
# multiple of 8 (4 for f32 C) and K of 16 (TMA's 16-byte rows): other shapes are refused. The
# f32 results are also compared with torch._scaled_mm (cuBLAS, f32 out) where this torch and
# cuBLAS have the type pair.
#
# Each case runs on the three FP8 kernels: gemm_sm90_fp8.cute's (a block per tile) and the two of
# the persistent files (the same host functions on the persistent kernel, 128x256 tiles, promoting
# in gemm_sm90_fp8_persistent.cute, their *_fast_accum twins in gemm_sm90_fp8_persistent_fast.cute:
# grid min(tiles, 132), tiles b, b + grid, ... per block, the TMA-store epilogue through a staging
# tile of C's type). Shapes with more tiles
# than 132 SMs (2048x4096x512: 256 of 128x256; 4096³: 512; 2000x4104x272, tails in M, N and K: 272)
# make its blocks take several tiles each, so the producer runs ahead into the next tile and the
# staging tile is reused; the others have fewer.
FP8_GEMM_SAMPLES = [
    ("gemm_sm90_fp8", ""),
    ("gemm_sm90_fp8_persistent", ""),
    ("gemm_sm90_fp8_persistent_fast", "_fast_accum"),
]
FP8_GEMM_SAMPLE_IDS = ["gemm_sm90_fp8", "gemm_sm90_fp8_persistent", "gemm_sm90_fp8_persistent_fast"]
FP8_TYPES = {"f8e4m3": "float8_e4m3fn", "f8e5m2": "float8_e5m2"}
FP8_GEMM_TOL = {"float32": 1e-2, "float16": 1e-2, "bfloat16": 1e-2 + 2.0**-8}
FP8_GEMM_SHAPES = [
    (200, 264, 144),
    (1, 8, 16),
    (7, 1000, 128),
    (127, 1000, 1008),
    (1000, 1000, 1024),
    (1000, 127, 256),
    (1000, 7, 128),
    (1000, 1, 64),
    (136, 264, 4112),
    (4096, 4096, 4096),
    (8192, 256, 8192),
    (2048, 4096, 512),
    (2000, 4104, 272),
]


@pytest.mark.parametrize("shape", shapes(FP8_GEMM_SHAPES), ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("sample", FP8_GEMM_SAMPLES, ids=FP8_GEMM_SAMPLE_IDS)
def test_gemm_sm90_fp8(gpu, load, sample, shape):
    torch = gpu
    need_sm90a(torch)
    sample, suffix = sample
    m = load(sample)
    M, N, K = shape
    sa = torch.tensor([0.5], device="cuda")
    sb = torch.tensor([0.25], device="cuda")
    for qa, ta in FP8_TYPES.items():
        for qb, tb in FP8_TYPES.items():
            a = (torch.randn(M, K, device="cuda") * 2).to(getattr(torch, ta))
            b = (torch.randn(N, K, device="cuda") * 2).to(getattr(torch, tb))
            ref = (a.double() * 0.5) @ (b.double() * 0.25).t()
            for dout in ("bfloat16", "float16", "float32"):
                host = m.host(("gemm_tn_fp8_f32" if dout == "float32" else "gemm_tn_fp8") + suffix)
                buf, c = guarded(torch, (M, N), getattr(torch, dout))
                args = (fp8_arg(torch, a, qa), fp8_arg(torch, b, qb), c, sa, sb)
                if N % (4 if dout == "float32" else 8) != 0:
                    with pytest.raises(cutec.Refused):
                        host.check(*args)
                    continue
                host(*args)
                torch.cuda.synchronize()
                rel = float((c.double() - ref).abs().max() / ref.abs().max().clamp_min(1e-30))
                print(f"{sample}{suffix} {qa}x{qb}->{dout} {M}x{N}x{K}: max error / max |ref| = {rel:.3e}")
                assert rel <= FP8_GEMM_TOL[dout], (qa, qb, dout, shape, rel)
                assert guards_untouched(buf, M * N), (qa, qb, dout, shape)
                if dout == "float32" and hasattr(torch, "_scaled_mm") and M % 16 == 0 and N % 16 == 0:
                    try:
                        want = torch._scaled_mm(
                            a, b.t(), scale_a=sa.view(()), scale_b=sb.view(()), out_dtype=torch.float32
                        )
                    except (RuntimeError, ValueError) as e:  # a type pair cuBLAS lacks (e5m2 x e5m2)
                        print(f"torch._scaled_mm {qa}x{qb}: {e}".splitlines()[0])
                        continue
                    vs = float((c.double() - want.double()).abs().max() / ref.abs().max())
                    print(f"  vs torch._scaled_mm: {vs:.3e}")
                    assert vs <= FP8_GEMM_TOL[dout], (qa, qb, shape, vs)


# gemm_tn_fp8_rowwise: torch._scaled_mm's row-wise scaling (scale_a (M,1), scale_b (1,N); e4m3
# inputs, bf16/f16 C): C[m, n] = scale_a[m] * scale_b[n] * (A @ B^T)[m, n], against the float64
# product of the dequantized, scaled inputs, and against torch._scaled_mm's row-wise mode where this
# torch has it; scale tensors of the wrong length are refused.
@pytest.mark.parametrize("shape", shapes(FP8_GEMM_SHAPES), ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("sample", FP8_GEMM_SAMPLES, ids=FP8_GEMM_SAMPLE_IDS)
def test_gemm_sm90_fp8_rowwise(gpu, load, sample, shape):
    torch = gpu
    need_sm90a(torch)
    sample, suffix = sample
    m = load(sample)
    rowwise = m.host("gemm_tn_fp8_rowwise" + suffix)
    M, N, K = shape
    g = torch.Generator(device="cuda").manual_seed(M * 7 + N)
    sa = torch.rand(M, device="cuda", generator=g) + 0.25
    sb = torch.rand(N, device="cuda", generator=g) + 0.25
    a = (torch.randn(M, K, device="cuda", generator=g) * 2).to(torch.float8_e4m3fn)
    b = (torch.randn(N, K, device="cuda", generator=g) * 2).to(torch.float8_e4m3fn)
    ref = (a.double() * sa.double()[:, None]) @ (b.double() * sb.double()[:, None]).t()
    for dout in ("bfloat16", "float16"):
        dt = getattr(torch, dout)
        buf, c = guarded(torch, (M, N), dt)
        args = (fp8_arg(torch, a, "f8e4m3"), fp8_arg(torch, b, "f8e4m3"), c, sa, sb)
        if N % 8 != 0:
            with pytest.raises(cutec.Refused):
                rowwise.check(*args)
            continue
        with pytest.raises(cutec.Refused, match="scale_a"):
            rowwise.check(args[0], args[1], c, sa[: max(M - 1, 0)] if M > 1 else sa.repeat(2), sb)
        rowwise(*args)
        torch.cuda.synchronize()
        rel = float((c.double() - ref).abs().max() / ref.abs().max().clamp_min(1e-30))
        print(f"{sample}{suffix} rowwise e4m3 -> {dout} {M}x{N}x{K}: max error / max |ref| = {rel:.3e}")
        assert rel <= FP8_GEMM_TOL[dout], (dout, shape, rel)
        assert guards_untouched(buf, M * N), (dout, shape)
        if dout == "bfloat16" and M % 16 == 0 and N % 16 == 0:
            try:
                want = torch._scaled_mm(a, b.t(), scale_a=sa.view(M, 1), scale_b=sb.view(1, N), out_dtype=dt)
            except (RuntimeError, ValueError) as e:  # a torch without row-wise scaling
                print(f"torch._scaled_mm row-wise: {e}".splitlines()[0])
                continue
            vs = float((c.double() - want.double()).abs().max() / ref.abs().max())
            print(f"  vs torch._scaled_mm row-wise: {vs:.3e}")
            assert vs <= FP8_GEMM_TOL[dout], (shape, vs)


# FP8 promotion (gemm_sm90_fp8_persistent.cute's gemm_tn_fp8 / gemm_tn_fp8_f32, torch._scaled_mm's
# default) at long K, where wgmma's own accumulation drifts: inputs in [1, 2] (every product
# positive, so the partial sums grow to K x 2.25 and every addition's lost bits push the same
# way), K = 16384 and 32784 (a partial last k-tile). The tolerance is tight, 1e-3 of max |ref|
# plus C's rounding; the reasoning, with wgmma keeping about 13 bits below the larger addend's
# leading bit (the error growth test_gemm_sm90_fp8 prints for the fast kernels fits it):
#   fast accumulation: the n = K / 32 k32 steps each lose about 2^-14 of the running sum, which is
#     j / n of the total at step j, so about n / 2 x 2^-14 of it: 1.6e-2 at K = 16384, 3e-2 at
#     32784;
#   promoted: only the four steps of one k-tile share a wgmma accumulator, so about 2 x 2^-14 =
#     1.2e-4 of it (and f32's adds, 2^-24 each), far inside 1e-3.
# The *_fast_accum twins (gemm_sm90_fp8_persistent_fast.cute) run on the same data: their error is printed (not checked) with whether
# it would pass the promoted tolerance. Measured on the H100 (session 22) it is far above the
# estimate: 0.29 of max |ref| at K = 16384 and 0.56 at 32784 (promoted: 3.7e-5 and 3.4e-5, the
# same as torch._scaled_mm's default, 3.7e-5), so wgmma's accumulator keeps fewer bits than 13 or
# truncates; torch._scaled_mm(use_fast_accum=True) read 5.7e-2 at 128x256x16384 (one output tile:
# cuBLAS may well split K there, which promotes in effect). torch._scaled_mm's default and fast
# errors are printed beside them where torch has the type pair and M and N are multiples of 16.
FP8_PROMOTED_TOL = {"float32": 1e-3, "float16": 1e-3 + 2.0**-11, "bfloat16": 1e-3 + 2.0**-8}
FP8_PROMOTION_SHAPES = [(128, 256, 16384), (200, 264, 32784)]


@pytest.mark.parametrize("shape", shapes(FP8_PROMOTION_SHAPES), ids=lambda s: "x".join(map(str, s)))
def test_gemm_sm90_fp8_promotion(gpu, load, shape):
    torch = gpu
    need_sm90a(torch)
    mods = {"": load("gemm_sm90_fp8_persistent"), "_fast_accum": load("gemm_sm90_fp8_persistent_fast")}
    M, N, K = shape
    g = torch.Generator(device="cuda").manual_seed(K + M)
    sa = torch.tensor([0.5], device="cuda")
    sb = torch.tensor([0.25], device="cuda")
    for qa, qb in (("f8e4m3", "f8e4m3"), ("f8e4m3", "f8e5m2")):
        a = (1 + torch.rand(M, K, device="cuda", generator=g)).to(getattr(torch, FP8_TYPES[qa]))
        b = (1 + torch.rand(N, K, device="cuda", generator=g)).to(getattr(torch, FP8_TYPES[qb]))
        ref = (a.double() * 0.5) @ (b.double() * 0.25).t()
        for dout in ("float32", "bfloat16", "float16"):
            name = "gemm_tn_fp8_f32" if dout == "float32" else "gemm_tn_fp8"
            rels = {}
            for suffix in ("", "_fast_accum"):
                buf, c = guarded(torch, (M, N), getattr(torch, dout))
                mods[suffix].host(name + suffix)(fp8_arg(torch, a, qa), fp8_arg(torch, b, qb), c, sa, sb)
                torch.cuda.synchronize()
                rels[suffix] = float((c.double() - ref).abs().max() / ref.abs().max())
                assert guards_untouched(buf, M * N), (qa, qb, dout, shape, suffix)
            promoted, fast = rels[""], rels["_fast_accum"]
            tol = FP8_PROMOTED_TOL[dout]
            print(
                f"promotion {qa}x{qb}->{dout} {M}x{N}x{K}: promoted {promoted:.3e}, fast accum {fast:.3e} "
                f"({'fails' if fast > tol else 'passes'} the promoted tolerance {tol:.1e})"
            )
            assert promoted <= tol, (qa, qb, dout, shape, promoted)
            if dout == "float32" and M % 16 == 0 and N % 16 == 0:
                errs = {}
                try:
                    for fast_accum in (False, True):
                        want = torch._scaled_mm(
                            a,
                            b.t(),
                            scale_a=sa.view(()),
                            scale_b=sb.view(()),
                            out_dtype=torch.float32,
                            use_fast_accum=fast_accum,
                        )
                        errs[fast_accum] = float((want.double() - ref).abs().max() / ref.abs().max())
                except (RuntimeError, ValueError) as e:  # a torch or cuBLAS without the pair
                    print(f"torch._scaled_mm {qa}x{qb}: {e}".splitlines()[0])
                if errs:
                    print(f"  torch._scaled_mm default {errs[False]:.3e}, use_fast_accum {errs[True]:.3e}")


# samples/gemm_sm90_epilogue.cute: linear layers with the activation fused into the persistent
# GEMM's epilogue, D = act(A @ W^T + bias) for A (M,K), W (N,K), bias (N), bf16/f16, against
# torch's float64 act(F.linear) (gelu exact and tanh, silu, relu, none). The epilogue rounds the
# accumulators to D's type once before its f32 arithmetic (as torch's unfused F.linear + act
# does), so the error bound is GEMM_TOL's against the largest pre-activation. Shapes: every tile
# of the rule (128x64 for N <= 64, 128x256, 128x128, 64x128), more tiles than SMs, M of 1, 7,
# 127, 1000 (M is free in TN), partial k-tiles; N of 7 and K of 7 are refused (TMA's 16-byte
# rows: D's N and the K-major K must be multiples of 8).
EPILOGUE_ACTS = {
    "none": lambda F, x: x,
    "relu": lambda F, x: F.relu(x),
    "gelu": lambda F, x: F.gelu(x),
    "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
    "silu": lambda F, x: F.silu(x),
}
EPILOGUE_SHAPES = [
    (1, 8, 8),  # 128x64
    (7, 1000, 128),  # 64x128
    (127, 1000, 1000),
    (1000, 1000, 1000),
    (200, 264, 136),  # a partial last k-tile
    (1000, 64, 72),  # 128x64, 8 tiles
    (20000, 120, 136),  # 128x128, 157 tiles: more than SMs
    (4096, 4096, 4096),  # 128x256, 512 tiles
    (1000, 7, 128),  # refused: D's N
    (1000, 1000, 7),  # refused: K
]
EPILOGUE_DTYPES = ("bfloat16", "float16")


def epilogue_error(got, ref, scale):
    return float((got.double() - ref).abs().max() / scale.abs().max().clamp_min(1e-30))


@pytest.mark.parametrize("act", list(EPILOGUE_ACTS))
@pytest.mark.parametrize("shape", shapes(EPILOGUE_SHAPES), ids=lambda s: "x".join(map(str, s)))
def test_gemm_sm90_epilogue(gpu, load, shape, act):
    torch = gpu
    import torch.nn.functional as F

    need_sm90a(torch)
    m = load("gemm_sm90_epilogue")
    host = getattr(m, f"linear_{act}")
    M, N, K = shape
    g = torch.Generator(device="cuda").manual_seed(M + N * 3 + K * 7)
    for din in EPILOGUE_DTYPES:
        dt = getattr(torch, din)
        a = (torch.randn(M, K, device="cuda", generator=g) * K**-0.25).to(dt)
        w = (torch.randn(N, K, device="cuda", generator=g) * K**-0.25).to(dt)
        bias = torch.randn(N, device="cuda", generator=g).to(dt)
        buf, d = guarded(torch, (M, N), dt)
        if N % 8 or K % 8:
            with pytest.raises(cutec.Refused):
                host.check(a, w, bias, d)
            continue
        with pytest.raises(cutec.Refused, match="bias"):
            host.check(a, w, torch.zeros(N + 8, device="cuda", dtype=dt), d)
        host(a, w, bias, d)
        torch.cuda.synchronize()
        pre = F.linear(a.double(), w.double(), bias.double())
        rel = epilogue_error(d, EPILOGUE_ACTS[act](F, pre), pre)
        assert rel <= GEMM_TOL[din], (act, din, shape, rel)
        assert guards_untouched(buf, M * N), (act, din, shape)


# samples/gemm_sm90_addmm.cute: D = alpha A @ B^T + beta C (torch.addmm(C, A, B.t() or B,
# beta=, alpha=)) with B (N,K) (addmm_tn) or (K,N) row-major (addmm_tt), C full or a broadcast
# row (C.expand(M, N), stride (0, 1): addmm's bias vector), and addmm_rowbias_tn's bias per row
# (M); against float64, the bound GEMM_TOL's against the largest |alpha A B^T| or |ref|. Tails as
# the linear layers'; TT's B (K,N) needs N a multiple of 8 as D does.
ADDMM_SHAPES = EPILOGUE_SHAPES


@pytest.mark.parametrize("shape", shapes(ADDMM_SHAPES), ids=lambda s: "x".join(map(str, s)))
def test_gemm_sm90_addmm(gpu, load, shape):
    torch = gpu
    need_sm90a(torch)
    m = load("gemm_sm90_addmm")
    M, N, K = shape
    g = torch.Generator(device="cuda").manual_seed(M * 5 + N + K)
    alpha, beta = 0.75, -1.5
    for din in EPILOGUE_DTYPES:
        dt = getattr(torch, din)
        a = (torch.randn(M, K, device="cuda", generator=g) * K**-0.25).to(dt)
        b = (torch.randn(N, K, device="cuda", generator=g) * K**-0.25).to(dt)
        b_kn = b.t().contiguous()  # (K, N) row-major: addmm_tt's B is its transpose view
        c_full = torch.randn(M, N, device="cuda", generator=g).to(dt)
        c_row = torch.randn(N, device="cuda", generator=g).to(dt).expand(M, N)
        row_bias = torch.randn(M, device="cuda", generator=g).to(dt)
        prod = alpha * (a.double() @ b.double().t())
        cases = [
            ("tn", m.addmm_tn, (a, b), c_full, (), prod + beta * c_full.double()),
            ("tn broadcast C", m.addmm_tn, (a, b), c_row, (), prod + beta * c_row.double()),
            ("tt", m.addmm_tt, (a, b_kn.t()), c_full, (), prod + beta * c_full.double()),
            (
                "rowbias",
                m.addmm_rowbias_tn,
                (a, b),
                c_full,
                (row_bias,),
                prod + beta * c_full.double() + row_bias.double()[:, None],
            ),
        ]
        for name, host, ab, c, extra, ref in cases:
            buf, d = guarded(torch, (M, N), dt)
            args = (*ab, c, *extra, d, alpha, beta)
            if N % 8 or K % 8:
                with pytest.raises(cutec.Refused):
                    host.check(*args)
                continue
            host(*args)
            torch.cuda.synchronize()
            scale = torch.maximum(prod.abs().max(), ref.abs().max())
            rel = epilogue_error(d, ref, scale)
            assert rel <= GEMM_TOL[din], (name, din, shape, rel)
            assert guards_untouched(buf, M * N), (name, din, shape)
        if N % 8 == 0 and K % 8 == 0:
            with pytest.raises(cutec.Refused, match="bias"):
                m.addmm_rowbias_tn.check(a, b, c_full, row_bias.repeat(2), torch.empty_like(c_full), alpha, beta)
            with pytest.raises(cutec.Refused, match="C must"):
                m.addmm_tn.check(
                    a, b, c_full[: M - 1] if M > 1 else c_full.repeat(2, 1), torch.empty_like(c_full), alpha, beta
                )


# samples/gemm_sm90_bmm.cute: the strided-batched GEMM, C[l] = A[l] @ B[l]^T (torch.bmm), one
# persistent launch over batch x tiles with 3-D TMA maps: bmm_tn with B (L,N,K), bmm_tt with
# B = Y.transpose(1, 2) of Y (L,K,N) row-major; against float64 torch.bmm. Every tile of the rule,
# more tiles than SMs (many batches), M of 1, 7, 127, and strided batches: A every other batch of
# a larger tensor (x[::2]), A and C permuted views whose batch mode is not outermost ((M, L, K)
# storage seen as (L, M, K)); K or N not a multiple of 8 is refused, and so are mismatched batches.
BMM_SHAPES = [
    # (L, M, N, K)
    (1, 1, 8, 8),  # 128x64
    (3, 7, 1000, 128),  # 64x128
    (2, 127, 264, 1000),
    (8, 1000, 1000, 64),  # 128x256, 64 tiles x 8 batches
    (64, 128, 128, 72),  # 64 tiles of 128x128: 64x128
    (200, 64, 64, 64),  # 128x64, 200 tiles: more than SMs
    (4, 2048, 2048, 512),  # 128x256
    (3, 100, 7, 64),  # refused: N
    (3, 100, 64, 7),  # refused: K
]


def bmm_operands(torch, L, M, N, K, dt, g, layout):
    """(A, B-as-the-host-takes-it, B (L,N,K) for the reference), A and C possibly strided views."""
    a_big = (torch.randn(2 * L, M, K, device="cuda", generator=g) * K**-0.25).to(dt)
    a = a_big[::2]  # batch stride 2 M K
    b = (torch.randn(L, N, K, device="cuda", generator=g) * K**-0.25).to(dt)
    if layout == "tt":
        y = b.transpose(1, 2).contiguous()  # (L, K, N) row-major
        return a, y.transpose(1, 2), b
    return a, b, b


@pytest.mark.parametrize("layout", ["tn", "tt"])
@pytest.mark.parametrize("shape", shapes(BMM_SHAPES), ids=lambda s: "x".join(map(str, s)))
def test_gemm_sm90_bmm(gpu, load, shape, layout):
    torch = gpu
    need_sm90a(torch)
    m = load("gemm_sm90_bmm")
    host = getattr(m, f"bmm_{layout}")
    L, M, N, K = shape
    g = torch.Generator(device="cuda").manual_seed(L + M * 3 + N * 5 + K * 7)
    for din in EPILOGUE_DTYPES:
        dt = getattr(torch, din)
        a, b_arg, b = bmm_operands(torch, L, M, N, K, dt, g, layout)
        buf, c = guarded(torch, (L, M, N), dt)
        if N % 8 or K % 8:
            with pytest.raises(cutec.Refused):
                host.check(a, b_arg, c)
            continue
        host(a, b_arg, c)
        torch.cuda.synchronize()
        ref = torch.bmm(a.double(), b.double().transpose(1, 2))
        rel = float((c.double() - ref).abs().max() / ref.abs().max().clamp_min(1e-30))
        assert rel <= GEMM_TOL[din], (layout, din, shape, rel)
        assert guards_untouched(buf, L * M * N), (layout, din, shape)
        # Batch modes that are not outermost: (M, L, K) storage for A, (M, L, N) for C.
        a_perm = a.permute(1, 0, 2).contiguous().permute(1, 0, 2)
        c_store = torch.full((M, L, N), float("nan"), device="cuda", dtype=dt)
        host(a_perm, b_arg, c_store.permute(1, 0, 2))
        torch.cuda.synchronize()
        rel = float((c_store.permute(1, 0, 2).double() - ref).abs().max() / ref.abs().max().clamp_min(1e-30))
        assert rel <= GEMM_TOL[din], (layout, din, shape, "permuted", rel)
        with pytest.raises(cutec.Refused, match="batch"):
            host.check(a[: L - 1] if L > 1 else a.repeat(2, 1, 1), b_arg, c)


# samples/gemm_sm90_grouped.cute: a grouped (MoE) GEMM, torch._grouped_mm's 2D x 3D form: group e
# is rows offs[e-1] .. offs[e] of A (M, K) and C (M, N), C_e = A_e @ W[e] for weights given as B
# (E, N, K): K-major (gemm_grouped_tn, nn.Linear's (out, in)) or N-major (gemm_grouped_tt, the
# transposed view of W (E, K, N) stored row-major). Groups of any size (empty ones, one row, not
# multiples of the 128-row tile), against float64 per group; rows past offs[E-1] stay untouched,
# and C's guards too. Offsets that run past M or go backwards are clamped (nothing outside C is
# written). The last three cases average at most 64 rows a group: the 64-row tiles.
GROUPED_CASES = [
    # (group sizes, N, K)
    ([64], 256, 64),
    ([1, 0, 127, 300], 264, 72),
    ([130, 1, 0, 255, 1000, 7, 3, 128], 512, 1000),
    ([2048, 3000, 17], 4096, 4096),
    ([5] * 64, 8, 64),
    ([1, 0, 127, 300, 3, 60, 0, 9], 264, 72),
    ([(i * 7) % 23 for i in range(128)], 512, 1000),
]


def grouped_weights(torch, layout, E, N, K, dt, g):
    """B (E, N, K) for the layout: K-major, or the N-major view of a row-major (E, K, N)."""
    if layout == "tn":
        return (torch.randn(E, N, K, device="cuda", generator=g) * K**-0.25).to(dt)
    return (torch.randn(E, K, N, device="cuda", generator=g) * K**-0.25).to(dt).transpose(-2, -1)


@pytest.mark.parametrize("layout", ["tn", "tt"])
@pytest.mark.parametrize("case", range(len(GROUPED_CASES)))
def test_gemm_sm90_grouped(gpu, load, case, layout):
    torch = gpu
    need_sm90a(torch)
    host = getattr(load("gemm_sm90_grouped"), f"gemm_grouped_{layout}")
    sizes, N, K = GROUPED_CASES[case]
    E, rows = len(sizes), sum(sizes)
    M = rows + 9  # rows past the last group: never written
    offs = torch.tensor(sizes, device="cuda", dtype=torch.int32).cumsum(0, dtype=torch.int32)
    g = torch.Generator(device="cuda").manual_seed(case)
    for dt in (torch.bfloat16, torch.float16):
        a = (torch.randn(M, K, device="cuda", generator=g) * K**-0.25).to(dt)
        b = grouped_weights(torch, layout, E, N, K, dt, g)
        buf, c = guarded(torch, (M, N), dt)
        host(a, b, c, offs)
        torch.cuda.synchronize()
        start = 0
        for e, n in enumerate(sizes):
            ref = a[start : start + n].double() @ b[e].double().t()
            err = float((c[start : start + n].double() - ref).abs().max()) if n else 0.0
            assert err <= 2e-2 * max(1.0, float(ref.abs().max()) if n else 1.0), (case, layout, dt, e, err)
            start += n
        assert bool(torch.isnan(c[rows:]).all()), (case, layout, dt, "rows past the groups were written")
        assert guards_untouched(buf, M * N), (case, layout, dt)
        if hasattr(torch, "_grouped_mm") and all(x % 16 == 0 for x in sizes):
            want = torch._grouped_mm(a[:rows], b.transpose(-2, -1), offs=offs)
            assert float((c[:rows].double() - want.double()).abs().max()) <= 2e-2, (case, layout, dt)
    # Offsets past M or going backwards are clamped: nothing outside C is written.
    bad = torch.tensor([M + 100, 3, M * 2][:E] + [M] * max(0, E - 3), device="cuda", dtype=torch.int32)
    buf, c = guarded(torch, (M, N), torch.bfloat16)
    host(a.to(torch.bfloat16), b.to(torch.bfloat16), c, bad)
    torch.cuda.synchronize()
    assert guards_untouched(buf, M * N), (case, layout, "clamped offsets")
    with pytest.raises(cutec.Refused, match="offs"):
        host.check(a, b, c.to(a.dtype), offs[:-1] if E > 1 else offs.repeat(2))
    if layout == "tt":
        with pytest.raises(cutec.Refused):  # K-major weights are the other host function's
            host.check(a, grouped_weights(torch, "tn", E, N, K, a.dtype, g), c.to(a.dtype), offs)


def test_gemm_sm90_grouped_backward_data(gpu, load):
    """The backward pass of a grouped TN layer, dA_e = dC_e @ B[e] for B (E, N, K) K-major, is the TT
    host function on B.transpose(-2, -1) (an (E, K, N) view with K contiguous)."""
    torch = gpu
    need_sm90a(torch)
    m = load("gemm_sm90_grouped")
    sizes, N, K = [300, 0, 17, 1000], 520, 264
    E, M = len(sizes), sum(sizes)
    offs = torch.tensor(sizes, device="cuda", dtype=torch.int32).cumsum(0, dtype=torch.int32)
    g = torch.Generator(device="cuda").manual_seed(7)
    b = (torch.randn(E, N, K, device="cuda", generator=g) * N**-0.25).to(torch.bfloat16)
    dc = (torch.randn(M, N, device="cuda", generator=g) * N**-0.25).to(torch.bfloat16)
    da = torch.full((M, K), float("nan"), device="cuda", dtype=torch.bfloat16)
    m.gemm_grouped_tt(dc, b.transpose(-2, -1), da, offs)
    torch.cuda.synchronize()
    start = 0
    for e, n in enumerate(sizes):
        ref = dc[start : start + n].double() @ b[e].double()
        err = float((da[start : start + n].double() - ref).abs().max()) if n else 0.0
        assert err <= 2e-2 * max(1.0, float(ref.abs().max()) if n else 1.0), (e, err)
        start += n


# FP8 (gemm_grouped_fp8_tn, promoted, and its _fast_accum twin): e4m3 A (M, K) and B (E, N, K)
# K-major, row-wise scales scale_a (M) and scale_b (E, N), bf16/f16 C, against the float64 product
# of the dequantized inputs per group (and torch._scaled_grouped_mm with the same accumulation where
# this torch has it and the groups are multiples of 16).
# The 16-bit cases' groups, K rounded up to a multiple of 16 (TMA's 16-byte rows of 8-bit elements).
GROUPED_FP8_CASES = [(sizes, N, -(-K // 16) * 16) for sizes, N, K in GROUPED_CASES]


@pytest.mark.parametrize("accum", ["", "_fast_accum"])
@pytest.mark.parametrize("case", range(len(GROUPED_FP8_CASES)))
def test_gemm_sm90_grouped_fp8(gpu, load, case, accum):
    torch = gpu
    need_sm90a(torch)
    host = getattr(load("gemm_sm90_grouped"), f"gemm_grouped_fp8_tn{accum}")
    sizes, N, K = GROUPED_FP8_CASES[case]
    E, rows = len(sizes), sum(sizes)
    M = rows + 9
    offs = torch.tensor(sizes, device="cuda", dtype=torch.int32).cumsum(0, dtype=torch.int32)
    g = torch.Generator(device="cuda").manual_seed(case)
    a = torch.randn(M, K, device="cuda", generator=g).to(torch.float8_e4m3fn)
    b = (torch.randn(E, N, K, device="cuda", generator=g) * 0.5).to(torch.float8_e4m3fn)
    scale_a = torch.rand(M, device="cuda", generator=g) + 0.5
    scale_b = torch.rand(E, N, device="cuda", generator=g) + 0.5
    for dt in (torch.bfloat16, torch.float16):
        buf, c = guarded(torch, (M, N), dt)
        host(a, b, c, offs, scale_a, scale_b)
        torch.cuda.synchronize()
        start = 0
        for e, n in enumerate(sizes):
            rows_e = slice(start, start + n)
            ref = (a[rows_e].double() * scale_a[rows_e, None].double()) @ (
                b[e].double() * scale_b[e, :, None].double()
            ).t()
            err = float((c[rows_e].double() - ref).abs().max()) if n else 0.0
            assert err <= 2e-2 * max(1.0, float(ref.abs().max()) if n else 1.0), (case, dt, e, err)
            start += n
        assert bool(torch.isnan(c[rows:]).all()), (case, dt, "rows past the groups were written")
        assert guards_untouched(buf, M * N), (case, dt)
        if hasattr(torch, "_scaled_grouped_mm") and all(x % 16 == 0 for x in sizes) and dt == torch.bfloat16:
            want = torch._scaled_grouped_mm(
                a[:rows],
                b.transpose(-2, -1),
                scale_a[:rows],
                scale_b,
                offs=offs,
                out_dtype=torch.bfloat16,
                use_fast_accum=accum == "_fast_accum",
            )
            assert float((c[:rows].double() - want.double()).abs().max()) <= 2e-2 * float(want.abs().max()), case
    c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(cutec.Refused, match="scale_a"):
        host.check(a, b, c, offs, scale_a[:-1], scale_b)
    with pytest.raises(cutec.Refused, match="scale_b"):
        host.check(a, b, c, offs, scale_a, scale_b[:, :-1])


def test_gemm_sm90_grouped_fp8_promotion(gpu, load):
    """A long K of inputs of one sign (in [1, 2]), where the FP8 wgmma accumulator's dropped bits
    add up: the promoting host function within 1e-3 of max |C| (plus C's bf16 rounding) of the
    float64 product; the fast one's error printed beside it."""
    torch = gpu
    need_sm90a(torch)
    m = load("gemm_sm90_grouped")
    sizes, N, K = [64, 200], 256, 16384
    E, M = len(sizes), sum(sizes)
    offs = torch.tensor(sizes, device="cuda", dtype=torch.int32).cumsum(0, dtype=torch.int32)
    g = torch.Generator(device="cuda").manual_seed(3)
    a = (torch.rand(M, K, device="cuda", generator=g) + 1).to(torch.float8_e4m3fn)
    b = (torch.rand(E, N, K, device="cuda", generator=g) + 1).to(torch.float8_e4m3fn)
    scale_a, scale_b = torch.ones(M, device="cuda"), torch.ones(E, N, device="cuda")
    ref = torch.cat([a[:64].double() @ b[0].double().t(), a[64:].double() @ b[1].double().t()])
    errs = {}
    for accum in ("", "_fast_accum"):
        c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        getattr(m, f"gemm_grouped_fp8_tn{accum}")(a, b, c, offs, scale_a, scale_b)
        torch.cuda.synchronize()
        errs[accum] = float((c.double() - ref).abs().max() / ref.abs().max())
    print(f"grouped FP8 K={K}: promoted {errs['']:.2e}, fast accumulation {errs['_fast_accum']:.2e} of max |C|")
    assert errs[""] <= 1e-3 + 2**-8, errs


# The groups along K (gemm_grouped_k_nt, the weight gradient of a grouped layer): C_e = A[:, k0:k1]
# @ B[:, k0:k1]^T for A (M, Ktot) M-major and B (N, Ktot) N-major (dC.t() and X.t() as stored), C
# (E, M, N). Columns past offs[E-1] hold NaN: the last group's last k-tile reads them, and the
# kernel must zero them (as it zeros the next group's columns in every group's last k-tile). An
# empty group's output is zeros.
GROUPED_K_CASES = [
    # (group sizes, M, N)
    ([64], 256, 256),
    ([1, 0, 127, 300], 264, 72),
    ([130, 1, 0, 255, 1000, 7, 3, 128], 136, 1000),
    ([5] * 64, 8, 64),
    ([2048, 3000, 17], 1024, 4096),
]


@pytest.mark.parametrize("case", range(len(GROUPED_K_CASES)))
def test_gemm_sm90_grouped_k(gpu, load, case):
    torch = gpu
    need_sm90a(torch)
    host = load("gemm_sm90_grouped").gemm_grouped_k_nt
    sizes, M, N = GROUPED_K_CASES[case]
    E, cols = len(sizes), sum(sizes)
    KT = cols + 9  # columns past the last group: NaN, never part of a sum
    offs = torch.tensor(sizes, device="cuda", dtype=torch.int32).cumsum(0, dtype=torch.int32)
    g = torch.Generator(device="cuda").manual_seed(case)
    for dt in (torch.bfloat16, torch.float16):
        a = (torch.randn(KT, M, device="cuda", generator=g) * 0.5).to(dt)
        b = (torch.randn(KT, N, device="cuda", generator=g) * 0.5).to(dt)
        a[cols:], b[cols:] = float("nan"), float("nan")
        buf, c = guarded(torch, (E, M, N), dt)
        host(a.t(), b.t(), c, offs)
        torch.cuda.synchronize()
        start = 0
        for e, n in enumerate(sizes):
            ref = a[start : start + n].double().t() @ b[start : start + n].double()
            err = float((c[e].double() - ref).abs().max())
            assert err <= 2e-2 * max(1.0, float(ref.abs().max())), (case, dt, e, n, err)
            start += n
        assert guards_untouched(buf, E * M * N), (case, dt)
        if hasattr(torch, "_grouped_mm") and all(x % 16 == 0 for x in sizes):
            want = torch._grouped_mm(a[:cols].t(), b[:cols], offs=offs)
            assert float((c.double() - want.double()).abs().max()) <= 1e-2 * float(want.abs().max()), (case, dt)
    with pytest.raises(cutec.Refused, match="same K_total"):
        host.check(a[:-1].t(), b.t(), c, offs)
    with pytest.raises(cutec.Refused, match=r"\(E, M, N\)"):
        host.check(a.t(), b.t(), c[:-1] if E > 1 else c.repeat(2, 1, 1), offs)


# ---- mbarrier_pipeline: a producer warp and a consumer warp through a 2-stage mbarrier ring -------


def need_sm90(torch):
    """mbarrier try_wait and transaction counts are sm_90 instructions."""
    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip(f"mbarrier waits need sm_90: found {torch.cuda.get_device_name()}")


# The same ring made with a pipeline value (mbarrier_pipeline) and written by hand (mbarrier_ring),
# and a ring whose stages the consumers of both blocks of a cluster release (cluster_pipeline:
# run-time states, `consumer_try_wait`, `consumer_release(st, cta: r)`; a lost arrival on the other
# block's barrier would hang its producer).
MBARRIER_RINGS = [
    ("mbarrier_pipeline", "pipeline"),
    ("mbarrier_ring", "ring_by_hand"),
    ("cluster_pipeline", "cluster_ring"),
]


@pytest.mark.parametrize("n", [256, 256 * 1000, 1 << 24])
@pytest.mark.parametrize("sample,host", MBARRIER_RINGS)
def test_mbarrier_pipeline(gpu, load, sample, host, n):
    torch = gpu
    need_sm90(torch)
    f = getattr(load(sample), host)
    x = torch.randn(n, device="cuda")
    buf, out = guarded(torch, (n,), torch.float32)
    f(x, out)
    torch.cuda.synchronize()
    assert torch.equal(out, x * 2)
    assert guards_untouched(buf, n)


def test_mbarrier_pipeline_refuses_partial_blocks(gpu, load):
    torch = gpu
    need_sm90(torch)
    f = load("mbarrier_pipeline").pipeline
    x = torch.randn(300, device="cuda")
    out = torch.full((300,), float("nan"), device="cuda")
    msg = assert_refused_untouched(torch, f, out, x, out)
    assert "256" in msg, msg


# ---- tma_copy: TMA loads of 64x64 tiles (a hidden tensor-map parameter), with and without swizzle --
# Extents that are not multiples of 64: TMA zero-fills the box out of bounds, the stores are predicated.
TMA_SHAPES = [(64, 64), (128, 192), (100, 72), (1, 8), (1000, 1000), (4096, 4096)]


@pytest.mark.parametrize("shape", shapes(TMA_SHAPES), ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("host,dtype", [("tma_copy_f32", "float32"), ("tma_copy_bf16_sw128", "bfloat16")])
def test_tma_copy(gpu, load, host, dtype, shape):
    torch = gpu
    need_sm90(torch)
    f = getattr(load("tma_copy"), host)
    M, N = shape
    a = torch.randn(M, N, device="cuda").to(getattr(torch, dtype))
    buf, out = guarded(torch, (M, N), getattr(torch, dtype))
    f(a, out)
    torch.cuda.synchronize()
    assert torch.equal(out, a), (host, shape)
    assert guards_untouched(buf, M * N), (host, shape)


def test_tma_copy_direct_launch(gpu, load):
    """A checked launch of the kernel itself (`k(...)`): the runtime encodes the tensor map too."""
    torch = gpu
    need_sm90(torch)
    k = load("tma_copy").kernel("tma_copy_bf16_sw128_kernel")
    M, N = 130, 200
    a = torch.randn(M, N, device="cuda").to(torch.bfloat16)
    buf, out = guarded(torch, (M, N), torch.bfloat16)
    k(a, out, grid=((N + 63) // 64, (M + 63) // 64), block=256)
    torch.cuda.synchronize()
    assert torch.equal(out, a)
    assert guards_untouched(buf, M * N)


def test_tma_copy_refuses_unaligned_rows(gpu, load):
    """TMA needs row strides that are multiples of 16 bytes: `?{div=4}` on an f32 row stride."""
    torch = gpu
    need_sm90(torch)
    f = load("tma_copy").tma_copy_f32
    a = torch.randn(70, 66, device="cuda")
    out = torch.full((70, 66), float("nan"), device="cuda")
    msg = assert_refused_untouched(torch, f, out, a, out)
    assert "4" in msg, msg


def test_tma_copy_refuses_misaligned_base(gpu, load):
    """A view starting 4 bytes into an allocation: the tensor map needs a 16-byte-aligned address."""
    torch = gpu
    need_sm90(torch)
    f = load("tma_copy").tma_copy_f32
    base = torch.randn(64 * 64 + 1, device="cuda")
    a = base[1:].view(64, 64)
    out = torch.full((64, 64), float("nan"), device="cuda")
    assert_refused_untouched(torch, f, out, a, out)


# ---- cluster_exchange: thread-block clusters, distributed shared memory ---------------------------
CLUSTER_N = 256  # elements per block in samples/cluster_exchange.cute (N), clusters of C = 2 blocks


def cluster_peer_reference(torch, x, rank_shift, mirrored):
    """What each block of `exchange`/`push` ends with: block b (rank b % 2 in its cluster of 2) holds
    the tile of the block of rank (rank + rank_shift) % 2 of the same cluster, its elements reversed
    when `mirrored`."""
    tiles = x.view(-1, CLUSTER_N)
    b = torch.arange(tiles.shape[0], device=x.device)
    peer = (b // 2) * 2 + (b % 2 + rank_shift) % 2
    out = tiles[peer]
    return (out.flip(1) if mirrored else out).reshape(-1)


@pytest.mark.parametrize("blocks", shapes([2, 8, 1000, 2 * 132 * 16]))
@pytest.mark.parametrize("host,mirrored", [("exchange", True), ("push", False)])
def test_cluster_neighbour_tiles(gpu, load, host, mirrored, blocks):
    """`exchange` reads its neighbour's tile (reversed) with dsmem_load; `push` writes its own into
    the neighbour's with dsmem_store, so block b ends with the tile of the rank that writes to it,
    (rank - 1) % 2 = (rank + 1) % 2: either way the neighbour's tile."""
    torch = gpu
    need_sm90a(torch)
    n = blocks * CLUSTER_N
    x = torch.randn(n, device="cuda")
    buf, out = guarded(torch, (n,), torch.float32)
    getattr(load("cluster_exchange"), host)(x, out)
    torch.cuda.synchronize()
    assert torch.equal(out, cluster_peer_reference(torch, x, 1, mirrored=mirrored)), host
    assert guards_untouched(buf, n)


@pytest.mark.parametrize("gy,gx", shapes([(2, 2), (4, 6), (32, 64)]))
def test_cluster_map_registers(gpu, load, gy, gx):
    """Every block writes its cluster registers; clusters of 2 x 2 blocks tile the grid."""
    torch = gpu
    need_sm90a(torch)
    out = torch.full((gy, gx, 8), -1, device="cuda", dtype=torch.int32)
    load("cluster_exchange").cluster_map(out)
    torch.cuda.synchronize()
    y, x = torch.meshgrid(torch.arange(gy), torch.arange(gx), indexing="ij")
    want = torch.stack(
        [
            x // 2,
            y // 2,
            x % 2,
            y % 2,
            (x % 2) + 2 * (y % 2),
            torch.full_like(x, gx // 2),
            torch.full_like(x, gy // 2),
            torch.full_like(x, 4),
        ],
        dim=-1,
    )
    assert torch.equal(out.cpu(), want.to(torch.int32))


def test_cluster_map_refuses_partial_clusters(gpu, load):
    """A run-time grid of 5 x 4 blocks is not whole clusters of 2 x 2: refused before launching."""
    torch = gpu
    need_sm90a(torch)
    out = torch.full((4, 5, 8), -1, device="cuda", dtype=torch.int32)
    msg = assert_refused_untouched(torch, load("cluster_exchange").cluster_map, out, out)
    assert "clusters of (2, 2, 1) blocks, but the grid (5, 4, 1)" in msg, msg


# ---- tma_copy: TMA stores (load, transform in shared memory, store) --------------------------------
# Out of bounds, TMA stores write nothing: partial tiles need no predicate. The guard bands prove
# nothing past the tensor is written; the padded-row tests that nothing past a row's end (inside
# the allocation, between rows) is written either.


@pytest.mark.parametrize("shape", shapes(TMA_SHAPES), ids=lambda s: "x".join(map(str, s)))
def test_tma_store_scale_f32(gpu, load, shape):
    torch = gpu
    need_sm90(torch)
    f = load("tma_copy").tma_scale_f32
    M, N = shape
    a = torch.randn(M, N, device="cuda")
    buf, out = guarded(torch, (M, N), torch.float32)
    f(a, out, -1.5)
    torch.cuda.synchronize()
    assert torch.equal(out, a * -1.5), shape
    assert guards_untouched(buf, M * N), shape


@pytest.mark.parametrize("shape", shapes(TMA_SHAPES), ids=lambda s: "x".join(map(str, s)))
def test_tma_store_transpose_bf16_sw128(gpu, load, shape):
    torch = gpu
    need_sm90(torch)
    f = load("tma_copy").tma_transpose_bf16_sw128
    M, N = shape
    a = torch.randn(M, N, device="cuda").to(torch.bfloat16)
    buf, out = guarded(torch, (N, M), torch.bfloat16)
    if M % 8:
        # The output's rows are M bf16 long: a row stride TMA cannot take (not 16-byte multiples).
        msg = assert_refused_untouched(torch, f, out, a, out)
        assert f"stride entry 0 = {M} must be a multiple of 8" in msg, msg
        return
    f(a, out)
    torch.cuda.synchronize()
    assert torch.equal(out, a.t()), shape
    assert guards_untouched(buf, M * N), shape


@pytest.mark.parametrize("shape", [(100, 72), (64, 8), (130, 200), (104, 200)], ids=lambda s: "x".join(map(str, s)))
def test_tma_store_padded_rows_untouched(gpu, load, shape):
    """Outputs whose rows are padded (a row stride past the row): the columns past N are inside
    the allocation but outside the tensor, and TMA must not write them. TMA stores write whole
    16-byte chunks, so rows that end inside one (M = 100 or 130 bf16) are refused: the store
    would write the rest of the chunk into the padding (it did, before the runtime refused it)."""
    torch = gpu
    need_sm90(torch)
    M, N = shape
    pad = 24  # keeps the row stride N + pad a multiple of 16 bytes in f32 (N is a multiple of 8)
    a = torch.randn(M, N, device="cuda")
    whole = torch.full((M, N + pad), float("nan"), device="cuda")
    out = whole[:, :N]
    load("tma_copy").tma_scale_f32(a, out, 2.0)
    torch.cuda.synchronize()
    assert torch.equal(out, a * 2.0)
    assert bool(torch.isnan(whole[:, N:]).all()), "a TMA store wrote past the end of a row"

    ab = a.to(torch.bfloat16)
    pad_t = pad + (-M) % 8  # the transposed rows are M long: round their stride up to 8 bf16
    whole_t = torch.full((N, M + pad_t), float("nan"), device="cuda", dtype=torch.bfloat16)
    out_t = whole_t[:, :M]
    if M % 8:
        msg = assert_refused_untouched(torch, load("tma_copy").tma_transpose_bf16_sw128, whole_t, ab, out_t)
        assert f"its rows are {M} elements = {2 * M} bytes" in msg and "a multiple of 8 elements" in msg, msg
        return
    load("tma_copy").tma_transpose_bf16_sw128(ab, out_t)
    torch.cuda.synchronize()
    assert torch.equal(out_t, ab.t())
    assert bool(torch.isnan(whole_t[:, M:]).all()), "a TMA store wrote past the end of a row"


def test_tma_store_direct_launch(gpu, load):
    """A checked launch of the kernel itself: both maps (gA's for the load, gB's for the store)."""
    torch = gpu
    need_sm90(torch)
    k = load("tma_copy").kernel("tma_transpose_bf16_sw128_kernel")
    M, N = 136, 200  # not tile multiples; the output row stride (136 bf16) a multiple of 16 bytes
    a = torch.randn(M, N, device="cuda").to(torch.bfloat16)
    buf, out = guarded(torch, (N, M), torch.bfloat16)
    k(a, out, grid=((N + 63) // 64, (M + 63) // 64), block=256)
    torch.cuda.synchronize()
    assert torch.equal(out, a.t())
    assert guards_untouched(buf, M * N)


def test_tma_store_refuses_unaligned_rows(gpu, load):
    """The store's map needs the output's row stride to be a multiple of 16 bytes too."""
    torch = gpu
    need_sm90(torch)
    f = load("tma_copy").tma_transpose_bf16_sw128
    a = torch.randn(64, 64, device="cuda").to(torch.bfloat16)
    whole = torch.full((64, 68), float("nan"), device="cuda", dtype=torch.bfloat16)
    out = whole[:, :64]  # row stride 68 elements: 136 bytes
    msg = assert_refused_untouched(torch, f, out, a, out)
    assert "8" in msg, msg


# ---- recast: f16 registers stored as i32 pairs; idx2crd/crd2idx of a run-time index ---------------


def test_recast_f16_pairs(gpu, load):
    torch = gpu
    f = load("recast").pairs
    for m in shapes([64, 1024, 65536]):
        a = torch.randn(m, 8, device="cuda", dtype=torch.float16)
        b = torch.zeros(m, 4, device="cuda", dtype=torch.int32)
        offsets = torch.full((m,), -1, device="cuda", dtype=torch.int32)
        f(a, b, offsets)
        torch.cuda.synchronize()
        # The same bits: each i32 holds two f16, the lower-addressed one in the low half.
        assert torch.equal(b.view(torch.float16), a), m
        assert torch.equal(offsets, torch.arange(m, device="cuda", dtype=torch.int32) * 8), m


# ---- fp8_convert: quantize to f8e4m3/f8e5m2 with a scale, dequantize back (sm_89+) ----------------
# cutec rounds to nearest even and saturates (cvt.rn.satfinite, CUTLASS's default); torch's casts
# round to nearest even too but overflow to NaN (e4m3fn) or inf (e5m2). So: bit-exact with torch on
# the clamped values, and the saturated bytes checked on their own.

FP8 = {"f8e4m3": ("float8_e4m3fn", 448.0), "f8e5m2": ("float8_e5m2", 57344.0)}


def fp8_arg(torch, t, q):
    """`t` itself where torch exports float8 through DLPack (codes 10 and 12 of DLPack 1.x), else a
    TensorView of its memory with cutec's dtype name."""
    try:
        torch.utils.dlpack.to_dlpack(t)
        return t
    except Exception:
        return cutec.TensorView(t.data_ptr(), q, tuple(t.shape), nbytes=t.numel(), device=t.device.index)


def need_sm89(torch):
    if torch.cuda.get_device_capability() < (8, 9):
        pytest.skip("fp8 conversions need sm_89 or newer")


@pytest.mark.parametrize("n", shapes([4096, 16, 2048 + 16, 1 << 20]))
def test_fp8_quantize_dequantize(gpu, load, n):
    torch = gpu
    need_sm89(torch)
    m = load("fp8_convert")
    for src in ("float32", "float16", "bfloat16"):
        for q, (tq, fmax) in FP8.items():
            dq = getattr(torch, tq)
            x = torch.randn(n, device="cuda") * fmax / 4
            x[: min(n, 8)] = torch.tensor([0.0, -0.0, fmax, -fmax, 2 * fmax, -3 * fmax, 1e-9, fmax * 1.03][: min(n, 8)])
            x = x.to(getattr(torch, src))
            for scale in (1.0, 0.25):
                buf, out = guarded(torch, (n,), torch.uint8, fill=0)
                m.quantize(x, fp8_arg(torch, out.view(dq), q), scale)
                torch.cuda.synchronize()
                want = (x.float() * scale).clamp(-fmax, fmax).to(dq)
                assert torch.equal(out, want.view(torch.uint8)), (src, q, scale, n)
                assert bool((buf[:GUARD] == 0).all()) and bool((buf[GUARD + n :] == 0).all())
            # Saturation: past the largest finite value gives it (0x7e / 0x7b, with the sign).
            if n >= 8:
                sat = {"f8e4m3": 0x7E, "f8e5m2": 0x7B}[q]
                m.quantize(x, fp8_arg(torch, out.view(dq), q), 1.0)
                torch.cuda.synchronize()
                assert out[4].item() == sat and out[5].item() == 0x80 | sat, (src, q)
            # Dequantize (exact widening, then the scale in f32) into every float type.
            qv = out.view(dq)
            for dst in ("float32", "float16", "bfloat16"):
                ybuf, y = guarded(torch, (n,), getattr(torch, dst))
                m.dequantize(fp8_arg(torch, qv, q), y, 2.0)
                torch.cuda.synchronize()
                assert torch.equal(y, (qv.float() * 2.0).to(getattr(torch, dst))), (q, dst, n)
                assert guards_untouched(ybuf, n)


def test_fp8_every_byte_widens_exactly(gpu, load):
    """All 256 codes of each fp8 type (NaNs aside) against torch's own widening."""
    torch = gpu
    need_sm89(torch)
    m = load("fp8_convert")
    codes = torch.arange(256, device="cuda", dtype=torch.int32).to(torch.uint8)
    for q, (tq, _) in FP8.items():
        qv = codes.view(getattr(torch, tq))
        y = torch.empty(256, device="cuda", dtype=torch.float32)
        m.dequantize(fp8_arg(torch, qv, q), y, 1.0)
        torch.cuda.synchronize()
        want = qv.float()
        finite = ~want.isnan()
        assert torch.equal(y[finite], want[finite]), q
        assert bool(y[~finite].isnan().all()), q
