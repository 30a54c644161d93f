"""The Python API on a GPU: streams (explicit and torch's current one), CUDA graph capture with
torch, every tensor protocol with real torch memory, refusals of device memory problems, the
module object. Needs a GPU and torch (skipped otherwise)."""

import pytest

import cutec


@pytest.fixture(scope="module")
def add(gpu, cubin):
    return cutec.load(cubin("elementwise_add"))


def tensors(torch, m=256, n=1024):
    a, b = torch.randn(m, n, device="cuda"), torch.randn(m, n, device="cuda")
    return a, b, torch.full_like(a, float("nan"))


class OnlyDLPack:
    """A torch tensor seen only through __dlpack__ (no exchange API, no array interface)."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


class OnlyArrayInterface:
    def __init__(self, t):
        self.__cuda_array_interface__ = t.__cuda_array_interface__


def test_module_object(add, cubin):
    assert add.hosts == ["naive_elementwise_add", "vectorized_elementwise_add", "elementwise_add"]
    assert add.arch == "sm_90" and add.device == 0 and add.label == str(cubin("elementwise_add"))
    assert isinstance(add.elementwise_add, cutec.HostFunction)
    # Version 3: the naive and vectorized kernels divide by run-time extents (fastdiv lines).
    assert "elementwise_add" in dir(add) and add.manifest.startswith("cutec-manifest 3\n")
    with pytest.raises(AttributeError, match="has no host function 'nope'"):
        _ = add.nope
    with pytest.raises(cutec.NotFound):
        add.host("nope")
    with open(cubin("elementwise_add"), "rb") as f:
        assert cutec.load(f.read()).hosts == add.hosts


@pytest.mark.parametrize(
    "wrap",
    [
        lambda t: t,
        OnlyDLPack,
        OnlyArrayInterface,
        lambda t: cutec.TensorView(
            t.data_ptr(), t.dtype, t.shape, t.stride(), t.untyped_storage().nbytes(), t.device.index
        ),
    ],
)
def test_every_protocol_reads_torch_memory(gpu, add, wrap):
    torch = gpu
    a, b, c = tensors(torch)
    add.elementwise_add(wrap(a), wrap(b), wrap(c))
    torch.cuda.synchronize()
    assert torch.equal(c, a + b)


def test_streams(gpu, add):
    torch = gpu
    a, b, c = tensors(torch, 4096, 4096)
    s = torch.cuda.Stream()
    for stream in (s, s.cuda_stream):
        c.fill_(float("nan"))
        torch.cuda.synchronize()
        add.elementwise_add(a, b, c, stream=stream)
        s.synchronize()
        assert torch.equal(c, a + b)
    # The default: torch's current stream.
    c.fill_(float("nan"))
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        add.elementwise_add(a, b, c)
        ev = torch.cuda.Event()
        ev.record()
    ev.synchronize()
    assert torch.equal(c, a + b)
    with pytest.raises(TypeError, match="stream= takes a CUstream handle"):
        add.elementwise_add(a, b, c, stream="fast")


def test_stream_order_on_many_streams(gpu, add):
    """Launches go through a one-node graph per (kernel, stream) for the first 8 streams of a
    kernel and directly past them (docs/runtime.md): on 12 streams, each with torch work before
    and after the call on the same stream, and several calls in flight per stream with other
    tensors each time (the graph's parameters change while earlier launches are queued), every
    result is the one stream order gives."""
    torch = gpu
    streams = [torch.cuda.Stream() for _ in range(12)]
    b = torch.randn(64, 1024, device="cuda")
    torch.cuda.synchronize()
    outs = []
    for i, s in enumerate(streams):
        with torch.cuda.stream(s):
            torch.cuda._sleep(20_000)  # the stream is still busy when the calls queue
            for k in range(4):
                a = torch.full_like(b, float(10 * i + k))
                c = torch.full_like(b, float("nan"))
                add.elementwise_add(a, b, c)
                outs.append((i, k, c * 2))  # torch reads c on the same stream
    torch.cuda.synchronize()
    for i, k, d in outs:
        assert torch.equal(d, (b + (10 * i + k)) * 2), (i, k)
    # The legacy default stream (torch's current stream here) between them.
    a, b2, c = tensors(torch)
    add.elementwise_add(a, b2, c, stream=0)
    torch.cuda.synchronize()
    assert torch.equal(c, a + b2)


def test_repeated_and_alternating_arguments(gpu, add):
    """A launch that repeats the stream's last one (same tensors, same grid) launches the graph
    without updating its node (docs/runtime.md): repeated calls still read the tensors' current
    contents, and going back to earlier tensors (A, B, A, shapes changing the grid too) launches
    with those, never with the node's last values."""
    torch = gpu
    s = torch.cuda.Stream()
    small = [torch.randn(64, 1024, device="cuda") for _ in range(3)]
    large = [torch.randn(256, 1024, device="cuda") for _ in range(3)]
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        for step in range(6):
            for a, b, c in (small, small, large, small):
                a.add_(1.0)  # new contents, same pointers
                c.fill_(float("nan"))
                add.elementwise_add(a, b, c)
                assert torch.equal(c, a + b), step  # torch reads c on the same stream
    torch.cuda.synchronize()


def test_graph_capture_and_replay(gpu, add):
    torch = gpu
    a, b, c = tensors(torch)
    add.elementwise_add(a, b, c)  # warm-up: kernels looked up, parameters queried
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        add.elementwise_add(a, b, c)
    for _ in range(3):
        a.normal_()
        c.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        assert torch.equal(c, a + b)


def test_device_memory_refusals(gpu, add):
    torch = gpu
    a, b, c = tensors(torch)
    with pytest.raises(cutec.Refused) as e:
        add.elementwise_add(a, b, c.cpu())
    assert str(e.value) == (
        "kernel argument mismatch: host `elementwise_add` parameter `mC` (argument 2): the tensor is in cpu "
        'memory; cutec kernels take CUDA device memory (move it with .cuda() or .to("cuda"))'
    )
    flat = torch.empty(256 * 1024 + 1, device="cuda")
    with pytest.raises(cutec.Refused, match="misaligned pointer"):
        add.elementwise_add(a, b, flat[1:].view(256, 1024))
    # elementwise_add is generic over T (f16 | f32 | bf16): C's dtype disagrees with A's and B's.
    with pytest.raises(cutec.Refused, match="mixed element types for `T`: `mA` is f32 but `mC` is f16"):
        add.elementwise_add(a, b, c.half())


def test_kernel_launch_forms(gpu, cubin):
    torch = gpu
    k = cutec.load(cubin("vector_add")).kernel("vector_add")
    assert (
        k.signature
        == "vector_add(a: tensor<f32, gmem, ?:1, align: 4>, b: tensor<f32, gmem, ?:1, align: 4>, c: tensor<f32, gmem, ?:1, align: 4>)"
    )
    a, b = torch.rand(1000, device="cuda"), torch.rand(1000, device="cuda")
    for grid, block in ((4, 256), ((4,), (256,)), ((4, 1, 1), [256, 1, 1])):
        c = torch.full_like(a, float("nan"))
        k(a, b, c, grid=grid, block=block)
        torch.cuda.synchronize()
        assert torch.equal(c, a + b)
    assert k.check(a, b, c)[1] == ("i32", 1000)
    with pytest.raises(TypeError, match="grid= takes an int or 1 to 3 ints"):
        k(a, b, c, grid="x", block=256)
    with pytest.raises(cutec.Refused, match="block dimensions must be non-zero"):
        k(a, b, c, grid=4, block=0)


def test_cupy_arrays(gpu, add):
    cp = pytest.importorskip("cupy")
    a = cp.random.standard_normal((256, 1024), dtype=cp.float32)
    b = cp.random.standard_normal((256, 1024), dtype=cp.float32)
    c = cp.full_like(a, cp.nan)
    stream = cp.cuda.get_current_stream()  # CuPy's stream: passed explicitly (torch's is the default)
    add.elementwise_add(a, b, c, stream=stream)
    stream.synchronize()
    assert bool(cp.array_equal(c, a + b))


def test_jax_arrays_as_inputs(gpu, add):
    import os

    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # leave memory to torch
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX sees no GPU")
    torch = gpu
    a = jnp.arange(256 * 1024, dtype=jnp.float32).reshape(256, 1024)
    b = jnp.ones((256, 1024), dtype=jnp.float32)
    a.block_until_ready(), b.block_until_ready()
    c = torch.full((256, 1024), float("nan"), device="cuda")
    add.elementwise_add(a, b, c)
    torch.cuda.synchronize()
    assert torch.equal(c, torch.arange(256 * 1024, device="cuda", dtype=torch.float32).view(256, 1024) + 1)


def test_host_launches_on_stream_parameters(gpu, cubin):
    """samples/two_streams.cute: one call, launches on two `stream` parameters and the call's stream."""
    torch = gpu
    m = cutec.load(cubin("two_streams"))
    n = (1 << 20) + 3
    x = torch.rand(n, device="cuda") * 2 - 1
    ys = [torch.empty(n, device="cuda") for _ in range(3)]
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    for a, b in [(s1, s2), (s1.cuda_stream, s2.cuda_stream), (s1, 0)]:
        for y in ys:
            y.fill_(float("nan"))
        torch.cuda.synchronize()  # x and the NaNs written before s1 and s2 read them
        m.scale3(x, *ys, a, b)  # y4 on torch's current stream
        torch.cuda.synchronize()  # the launches are not ordered with each other
        for y, k in zip(ys, (2.0, 3.0, 4.0)):
            assert torch.equal(y, x * k)
    with pytest.raises(cutec.Refused, match="parameter `s2` \\(argument 5\\): None is not a stream"):
        m.scale3(x, *ys, s1, None)


def test_host_stream_parameters_under_graph_capture(gpu, cubin):
    """Under capture every stream a call launches on must be in the capture: side streams forked
    from the capturing stream (wait_stream) are recorded into the graph; others are refused."""
    torch = gpu
    m = cutec.load(cubin("two_streams"))
    n = 4096
    x = torch.rand(n, device="cuda")
    ys = [torch.empty(n, device="cuda") for _ in range(3)]
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    m.scale3(x, *ys, s1, s2)  # warm-up outside the capture
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        cur = torch.cuda.current_stream()
        s1.wait_stream(cur)
        s2.wait_stream(cur)
        m.scale3(x, *ys, s1, s2)
        cur.wait_stream(s1)
        cur.wait_stream(s2)
    for _ in range(2):
        x.uniform_()
        for y in ys:
            y.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        for y, k in zip(ys, (2.0, 3.0, 4.0)):
            assert torch.equal(y, x * k)
    # s1 not forked into the capture: refused before anything is launched.
    g2 = torch.cuda.CUDAGraph()
    with pytest.raises(
        cutec.Refused, match="stream parameter `s1` .* is not capturing but the call's stream .* is capturing"
    ):
        with torch.cuda.graph(g2):
            m.scale3(x, *ys, s1, s1)
    torch.cuda.synchronize()
