"""Atomics on the GPU (issue 32): samples/atomic_counters.cute (and atomic_add_fragment.cute, f32, f16
and bf16 fragments) under contention (every thread of every block on one address) against exact
results, and samples/column_sum_atomic.cute (a
one-launch column sum over many blocks) against torch. Needs a GPU and torch (skipped otherwise)."""

import pytest

import cutec

BLOCKS, THREADS = 512, 256


@pytest.fixture(scope="module")
def load(gpu, cubin):
    return lambda name: cutec.load(cubin(name))


def test_count_add_max_min(gpu, load):
    torch = gpu
    k = load("atomic_counters").kernel("count")
    c = torch.tensor([0, -1, 1 << 30, 0], device="cuda", dtype=torch.int32)
    u = torch.zeros(4, device="cuda", dtype=torch.uint32)
    q = torch.zeros(4, device="cuda", dtype=torch.uint64)
    k(c, u, q, grid=BLOCKS, block=THREADS)
    torch.cuda.synchronize()
    n = BLOCKS * THREADS
    assert c.tolist()[:3] == [n, n - 1, 0]
    assert int(u[0].item()) == n and int(q[0].item()) == n


def test_ticket_counter_hands_out_each_ticket_once(gpu, load):
    torch = gpu
    k = load("atomic_counters").kernel("tickets")
    n = BLOCKS * THREADS
    nxt = torch.zeros(1, device="cuda", dtype=torch.uint32)
    seen = torch.zeros(n, device="cuda", dtype=torch.int32)
    k(nxt, seen, grid=BLOCKS, block=THREADS)
    torch.cuda.synchronize()
    assert int(nxt[0].item()) == n
    assert bool((seen == 1).all())


@pytest.mark.parametrize("blocks", [1, 132, 4096])
def test_spin_lock_counts_every_block(gpu, load, blocks):
    torch = gpu
    k = load("atomic_counters").kernel("locked_count")
    lock = torch.zeros(1, device="cuda", dtype=torch.int32)
    counter = torch.zeros(1, device="cuda", dtype=torch.int32)
    k(lock, counter, grid=blocks, block=64)
    torch.cuda.synchronize()
    assert counter.item() == blocks and lock.item() == 0


def test_exchange_takes_out_each_value_once(gpu, load):
    torch = gpu
    k = load("atomic_counters").kernel("exchange")
    n = BLOCKS * THREADS
    slot = torch.full((1,), -7, device="cuda", dtype=torch.int64)
    took = torch.zeros(n, device="cuda", dtype=torch.int64)
    k(slot, took, grid=BLOCKS, block=THREADS)
    torch.cuda.synchronize()
    values = torch.cat([took, slot]).sort().values
    want = torch.cat([torch.tensor([-7], device="cuda"), torch.arange(n, device="cuda")]).sort().values
    assert torch.equal(values, want)


def test_shared_histogram(gpu, load):
    torch = gpu
    k = load("atomic_counters").kernel("histogram")
    hist = torch.zeros(32, device="cuda", dtype=torch.int32)
    k(hist, grid=BLOCKS, block=THREADS)
    torch.cuda.synchronize()
    assert bool((hist == BLOCKS * THREADS // 32).all())


def test_fragment_add_v4(gpu, load):
    torch = gpu
    k = load("atomic_add_fragment").kernel("add_fragments")
    out = torch.zeros(8, device="cuda", dtype=torch.float32)
    k(out, grid=BLOCKS, block=THREADS)
    torch.cuda.synchronize()
    assert bool((out == float(BLOCKS * THREADS)).all())


# 16-bit fragments under contention: every thread of every block adds x into one tile. The sums are
# exact in any order: x[i] = 2^-(i % 8) and n threads, every partial sum k * x[i] (k <= n) needs at
# most log2(n) + 1 significant bits (f16 has 11: n = 2048; bf16 8: n = 256). The values differ
# within each packed pair, so a pair added in the wrong halves shows.
@pytest.mark.parametrize(
    "kernel,dtype,size,grid,block",
    [
        ("add_f16_fragments", "float16", 16, 16, 128),
        ("add_bf16_fragments", "bfloat16", 8, 8, 32),
        ("add_f16_pairs", "float16", 8, 16, 128),
    ],
)
def test_fragment_add_16_bit_pairs(gpu, load, kernel, dtype, size, grid, block):
    torch = gpu
    k = load("atomic_add_fragment").kernel(kernel)
    dt = getattr(torch, dtype)
    x = (2.0 ** -(torch.arange(size, device="cuda") % 8).float()).to(dt)
    out = torch.zeros(size, device="cuda", dtype=dt)
    k(x, out, grid=grid, block=block)
    torch.cuda.synchronize()
    want = x.double() * (grid * block)
    assert torch.equal(out.double(), want), (out, want)


# The returning pair: n threads add x = (1, 1/2) into one pair; the old pairs they get back are
# the partial sums k * x, k = 0 .. n - 1, each exactly once (exact: f16 holds integers to 2048, bf16
# to 256), element 0 in the low half (every old pair has old[0] == 2 * old[1]).
@pytest.mark.parametrize(
    "kernel,dtype,grid,block",
    [("add_f16_pair_old", "float16", 8, 256), ("add_bf16_pair_old", "bfloat16", 2, 128)],
)
def test_pair_add_returns_each_partial_sum_once(gpu, load, kernel, dtype, grid, block):
    torch = gpu
    k = load("atomic_add_fragment").kernel(kernel)
    dt = getattr(torch, dtype)
    n = grid * block
    x = torch.tensor([1.0, 0.5], device="cuda", dtype=dt)
    out = torch.zeros(2, device="cuda", dtype=dt)
    olds = torch.full((2 * n,), -1.0, device="cuda", dtype=dt)
    k(x, out, olds, grid=grid, block=block)
    torch.cuda.synchronize()
    assert out.double().tolist() == [float(n), n / 2]
    pairs = olds.double().view(n, 2).cpu()
    assert torch.equal(pairs[:, 0], 2 * pairs[:, 1]), pairs
    got = sorted(pairs[:, 0].tolist())
    assert got == [float(i) for i in range(n)]


@pytest.mark.parametrize("shape", [(1, 1), (7, 300), (64, 256), (1000, 1000), (4097, 513), (65536, 256)])
def test_column_sum(gpu, load, shape):
    torch = gpu
    f = load("column_sum_atomic").column_sum
    x = torch.rand(shape, device="cuda") * 2 - 1
    out = torch.zeros(shape[1], device="cuda")
    f(x, out)
    torch.cuda.synchronize()
    want = x.double().sum(0).float()
    # Blocks add their partial sums in any order: f32 rounding of up to M additions.
    assert torch.allclose(out, want, rtol=1e-4, atol=1e-4 * shape[0] ** 0.5), (out - want).abs().max().item()
    bad = torch.zeros(shape[1] + 1, device="cuda")
    with pytest.raises(cutec.Refused, match="out needs one entry per column of x"):
        f(x, bad)


def test_column_sum_time_beside_torch(gpu, load):
    """Median kernel time of the one-launch atomic column sum and of torch's `x.sum(0)` (CUDA
    events, 20 runs each); printed for the suite's log, checked only for agreement."""
    torch = gpu
    f = load("column_sum_atomic").column_sum
    x = torch.rand((16384, 4096), device="cuda")
    out = torch.zeros(4096, device="cuda")

    def median_us(run):
        times = []
        for _ in range(20):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            run()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1000)
        return sorted(times)[len(times) // 2]

    def ours():
        out.zero_()
        f(x, out)

    us, torch_us = median_us(ours), median_us(lambda: x.sum(0))
    gbps = x.numel() * 4 / us / 1e3
    print(
        f"RESULT column_sum 16384x4096 f32: cutec {us:.1f} us ({gbps:.0f} GB/s, zeroing included), torch {torch_us:.1f} us"
    )
    assert torch.allclose(out, x.sum(0), rtol=1e-3, atol=1e-2)
