"""cutec without a GPU: manifests, calls checked against them (every refusal as text), the tensor
protocols read from fake producers, scalars, host functions that only print, and the compiler
driver. These run in CI."""

import itertools
import os
import subprocess
import sys

import pytest

import cutec
from fakes import ArrayInterface, DLPackTensor, ExchangeTensor, fake_ptr, row_major

PREFIX = "kernel argument mismatch: "
CHECKSUM_MISMATCH = (
    "manifest checksum mismatch: the cubin's manifest was altered or damaged; rebuild it with cutec build"
)


def seal(body):
    """`body` and its `checksum` line, as cutec's one writer ends every manifest: FNV-1a 64 of all the
    bytes before the line (abi/src/manifest/checksum.rs), written here again so that the tests also
    check the format against a second implementation. Hand-written manifests need it to be read."""
    if body and not body.endswith("\n"):
        body += "\n"
    h = 0xCBF29CE484222325
    for b in body.encode():
        h = ((h ^ b) * 0x100000001B3) % 2**64
    return f"{body}checksum {h:016x}\n"


def view(k, shape, dtype="f16", strides=None, nbytes="exact", offset=0):
    """A TensorView at fake address k (+offset bytes); nbytes: its layout's exact size by default."""
    strides = strides or row_major(shape)
    size = {"f16": 2, "bf16": 2, "f32": 4, "i32": 4, "f64": 8, "f8e4m3": 1, "f8e5m2": 1}[dtype]
    if nbytes == "exact":
        nbytes = (sum((s - 1) * d for s, d in zip(shape, strides)) + 1) * size
    return cutec.TensorView(fake_ptr(k) + offset, dtype, shape, strides, nbytes)


def refusal(fn, *args):
    with pytest.raises(cutec.Refused) as e:
        fn(*args)
    assert e.value.status in (
        "CUTE_ERROR_ARGUMENT_MISMATCH",
        "CUTE_ERROR_INVALID_LAUNCH",
        "CUTE_ERROR_INVALID_ARGUMENT",
    )
    return str(e.value)


@pytest.fixture(scope="module")
def ew(cubin):
    return cutec.manifest(cubin("elementwise_add"))


# ---- manifests -----------------------------------------------------------------------------------


def test_manifest_lists_hosts_and_kernels(cubin, ew):
    # Version 3: the naive and vectorized kernels divide by the row length with a multiplier and
    # a shift (`fastdiv` lines), two parameters more each.
    assert ew.arch == "sm_90" and ew.version == 3
    assert ew.hosts == ["naive_elementwise_add", "vectorized_elementwise_add", "elementwise_add"]
    # Three generic host functions, each for f16, f32 and bf16: nine kernels; the naive and
    # vectorized ones divide by run-time extents (fastdiv lines: manifest version 3).
    assert len(ew.kernels) == 9 and ew.text.startswith("cutec-manifest 3\narch sm_90\n")
    assert "kernel naive_elementwise_add_kernel\n" in ew.text and "\nfastdiv $1\nend\n" in ew.text
    with open(cubin("elementwise_add"), "rb") as f:
        data = f.read()
    assert cutec.manifest(data).text == ew.text
    assert cutec.manifest(bytearray(data)).hosts == ew.hosts
    p = ew.host("elementwise_add")
    assert p.params[0] == ("mA", "tensor<f16, gmem, (?,?{div=8}):(?{div=8},1), align: 16>")
    assert p.signature.startswith("host elementwise_add<f16>(mA: tensor<f16")
    assert p.instances == ["elementwise_add<f16>", "elementwise_add<f32>", "elementwise_add<bf16>"]
    assert p.name == "elementwise_add" and len(p.launches) == 1


def test_manifest_absent_and_unreadable(tmp_path):
    assert cutec.manifest(b"// PTX text, not a cubin") is None
    with pytest.raises(cutec.Error) as e:
        cutec.manifest(tmp_path / "missing.cubin")
    assert e.value.status == "CUTE_ERROR_IO"
    assert str(e.value).startswith(f"cannot read {tmp_path / 'missing.cubin'}: ")
    with pytest.raises(cutec.Error) as e:
        cutec.parse_manifest("cutec-manifest 11\n")
    assert "manifest version 11 is newer than this runtime understands (10); update cute-runtime" in str(e.value)
    with pytest.raises(TypeError, match="a cubin is given as a path or as bytes, not a int"):
        cutec.manifest(42)


def refused_when_damaged(cubin, ew, at, byte, message):
    """The elementwise_add manifest with its byte `at` made `byte`: refused with `message` from the
    cubin's bytes and as text, as from Rust and C."""
    with open(cubin("elementwise_add"), "rb") as f:
        data = bytearray(f.read())
    data[data.index(b"cutec-manifest ") + at] = ord(byte)
    with pytest.raises(cutec.Error) as e:
        cutec.manifest(bytes(data))
    assert e.value.status == "CUTE_ERROR_INVALID_IMAGE" and message in str(e.value)
    with pytest.raises(cutec.Error) as e:
        cutec.parse_manifest(ew.text[:at] + byte + ew.text[at + 1 :])
    assert message in str(e.value)


def test_a_nul_byte_is_a_damaged_manifest(cubin, ew):
    # One rule in Rust, C and Python: the manifest is the symbol's bytes (less one terminator);
    # any other NUL byte is a damaged manifest, refused with the same message as from C.
    at = ew.text.index("\n") + 1
    refused_when_damaged(
        cubin, ew, at, "\0", f"cutec manifest line 2: a NUL byte at byte {at}: the manifest is damaged"
    )


def test_an_edited_manifest_is_refused_by_its_checksum(cubin, ew):
    # A digit changed (a stride of 1 made 4) leaves a well-formed manifest that only its checksum
    # tells from the one cutec wrote.
    at = ew.text.index("stride=(?{div=8},1)") + len("stride=(?{div=8},")
    refused_when_damaged(cubin, ew, at, "4", CHECKSUM_MISMATCH)
    # The manifest as cutec wrote it checks out against this file's own FNV-1a; without its
    # checksum line it is refused, saying to rebuild.
    body = ew.text[: ew.text.rindex("checksum ")]
    assert seal(body) == ew.text
    with pytest.raises(cutec.Error, match="no `checksum` line .* rebuild the cubin with cutec build"):
        cutec.parse_manifest(body)


def test_unknown_names_are_not_found(ew):
    with pytest.raises(cutec.NotFound) as e:
        ew.host("nope")
    assert str(e.value) == (
        "no host function `nope` in the manifest; host functions: "
        "naive_elementwise_add, vectorized_elementwise_add, elementwise_add"
    )
    assert e.value.status == "CUTE_ERROR_NOT_FOUND"
    with pytest.raises(cutec.NotFound, match="kernel `nope` not found in module; available kernels: "):
        ew.kernel("nope")


def test_load_without_a_driver_is_unavailable(cubin):
    if cutec.driver_available():
        pytest.skip("a CUDA driver is installed here")
    with pytest.raises(cutec.Unavailable) as e:
        cutec.load(cubin("vector_add"))
    assert e.value.status == "CUTE_ERROR_UNAVAILABLE"
    assert str(e.value).startswith("no CUDA driver (libcuda.so) found: ")


# ---- calls checked against the manifest ------------------------------------------------------------


def test_accepted_call_returns_its_launches(ew):
    (launch,) = ew.host("elementwise_add").check(*(view(k, (2048, 2048)) for k in range(3)))
    assert (launch["kernel"], launch["grid"], launch["block"], launch["smem"]) == (
        "elementwise_add_kernel",
        (1024, 1, 1),
        (128, 1, 1),
        0,
    )
    assert launch["args"][0] == ("ptr", fake_ptr(0))
    assert [v["host_param"] for v in launch["views"]] == ["mA", "mB", "mC"]
    (n,) = ew.host("naive_elementwise_add").check(*(view(k, (16, 256)) for k in range(3)))
    assert n["grid"][0] * n["block"][0] == 16 * 256


def test_every_refusal_names_the_parameter(ew):
    add = ew.host("elementwise_add").check
    ok = [view(k, (2048, 2048)) for k in range(3)]
    # The f16 instance's checks (the tensors' dtype selected it) name it.
    host = "host `elementwise_add<f16>` parameter"
    assert refusal(add, ok[0], ok[1], view(2, (2048, 2048), "f32")) == (
        PREFIX
        + "host `elementwise_add`: mixed element types for `T`: `mA` is f16 but `mC` is f32 (both are declared `tensor<T, ...>`)"
    )
    assert (
        refusal(add, ok[0], ok[1])
        == PREFIX + "host `elementwise_add<f16>` takes 3 parameters (mA, mB, mC) but 2 arguments were given"
    )
    assert refusal(add, ok[0], ok[1], view(2, (2048, 2048), offset=8)) == (
        PREFIX
        + f"{host} `mC` (argument 2): misaligned pointer: {fake_ptr(2) + 8:#x} is not a multiple of 16 bytes (the host's `align: 16`)"
    )
    assert refusal(add, ok[0], ok[1], view(2, (2048, 2048), nbytes=1000)) == (
        PREFIX
        + f"{host} `mC` (argument 2): out of bounds: shape [2048, 2048] stride [2048, 1] reaches 8388608 bytes but the view's memory holds 1000"
    )
    assert (
        refusal(add, ok[0], ok[1], cutec.TensorView(0, "f16", (2048, 2048)))
        == PREFIX + f"{host} `mC` (argument 2): null pointer"
    )
    assert refusal(add, ok[0], ok[1], view(2, (2048, 2044))) == (
        PREFIX + f"{host} `mC` (argument 2): divisibility: shape entry 1 = 2044 must be a multiple of 8 "
        "(the host declares `?{div=8}` in (?,?):(?,1))"
    )
    assert refusal(add, ok[0], ok[1], view(2, (2048, 2048), strides=(2048, 2))) == (
        PREFIX
        + f"{host} `mC` (argument 2): stride mismatch: stride entry 1 is 1 in the host (layout (?,?):(?,1)) but 2 in the view"
    )
    assert refusal(add, ok[0], ok[1], view(2, (2048, 2048), strides=(1, 2048))) == (
        PREFIX
        + f"{host} `mC` (argument 2): divisibility: stride entry 0 = 1 must be a multiple of 8 (the host declares `?{{div=8}}` in (?,?):(?,1))"
    )
    assert refusal(add, ok[0], ok[1], view(2, (4, 2048, 2048))).startswith(
        PREFIX + f"{host} `mC` (argument 2): rank mismatch: the kernel expects a rank-2 tensor with layout (?,?):(?,1)"
    )
    assert refusal(add, ok[0], ok[1], 7) == (
        PREFIX
        + f"{host} `mC` (argument 2): the host expects a tensor (tensor<f16, gmem, (?,?{{div=8}}):(?{{div=8}},1), align: 16>) but got a i64 scalar"
    )
    # Read before an instance is selected: named by the generic name.
    assert refusal(add, ok[0], ok[1], "c") == (
        PREFIX
        + "host `elementwise_add` parameter `mC` (argument 2): a str is not a tensor: pass a CUDA tensor (torch, CuPy, JAX: anything with "
        "__dlpack__ or __cuda_array_interface__) or a cutec.TensorView"
    )


def test_generic_hosts_pick_the_instance_by_dtype(ew):
    """samples/elementwise_add.cute: `host elementwise_add<T: f16 | f32 | bf16>`, one cubin."""
    for dtype, vec, kernel in [
        ("f16", 8, "elementwise_add_kernel"),
        ("f32", 4, "elementwise_add_kernel_1"),
        ("bf16", 8, "elementwise_add_kernel_2"),
    ]:
        (launch,) = ew.host("elementwise_add").check(*(view(k, (2048, 2048), dtype) for k in range(3)))
        # The seed's TV tile is (16, 256) for every element type: 2048 * 2048 / (16 * 256) blocks.
        assert (launch["kernel"], launch["grid"][0]) == (kernel, 2048 * 2048 // (16 * 256))
        # The seed's vectorized tile is (1, 4) for every element type.
        (v,) = ew.host("vectorized_elementwise_add").check(*(view(k, (64, 1024), dtype) for k in range(3)))
        assert v["views"][0]["shape"][:2] == [1, 4]
        assert v["grid"][0] == 64 * 1024 // (4 * 256)
        # The row length must be a multiple of 16 bytes of elements (`?{div=16 / sizeof(T)}`).
        assert f"must be a multiple of {vec}" in refusal(
            ew.host("elementwise_add").check, *(view(k, (16, 256 + vec // 2), dtype) for k in range(3))
        )
        # An instance by its own name takes its type only.
        assert ew.host(f"elementwise_add<{dtype}>").check(*(view(k, (16, 256), dtype) for k in range(3)))
    for host in ("naive_elementwise_add", "vectorized_elementwise_add", "elementwise_add"):
        assert refusal(ew.host(host).check, *(view(k, (16, 256), "f64") for k in range(3))) == (
            PREFIX
            + f"host `{host}` has no instance for T = f64 (from `mA`); it was compiled for T = f16; T = f32; T = bf16 "
            f"(`{host}<...>` in the source lists the types to compile for)"
        )
        assert refusal(
            ew.host(host).check, view(0, (16, 256), "bf16"), view(1, (16, 256), "f16"), view(2, (16, 256), "bf16")
        ) == (
            PREFIX
            + f"host `{host}`: mixed element types for `T`: `mA` is bf16 but `mB` is f16 (both are declared `tensor<T, ...>`)"
        )
    assert "dtype mismatch: the host expects f32 elements but the view has f16" in refusal(
        ew.host("elementwise_add<f32>").check, *(view(k, (16, 256)) for k in range(3))
    )
    with pytest.raises(cutec.NotFound):
        ew.host("elementwise_add<f64>")


# Two instances of `host scale<T: f16 | f32>(x: tensor<T, gmem, (?):(1)>, a: T)`: the scalar is a `T`.
SCALE = "".join(
    f"kernel k{i}\nparam x tensor elem={t} space=gmem align={n} rank=1 shape=? stride=1\nparam a scalar elem={t}\nend\n"
    for i, (t, n) in enumerate([("f16", 2), ("f32", 4)])
) + "".join(
    f"host scale<{t}>\nparam x tensor elem={t} space=gmem align={n} rank=1 shape=? stride=1\nparam a scalar elem={t}\n"
    f"instance scale\ntypearg T {t} x\nlaunches k{i}\nlaunch k{i}\ngrid 1 | 1 | 1\nblock 32 | 1 | 1\nsmem 0\n"
    f"arg tensor 0 | 0 | $0\narg scalar {t} | $1\nendlaunch\nend\n"
    for i, (t, n) in enumerate([("f16", 2), ("f32", 4)])
)


def test_generic_scalars_take_the_selected_instances_type():
    m = cutec.parse_manifest(seal("cutec-manifest 1\narch sm_90\n" + SCALE))
    assert m.hosts == ["scale"]
    scale = m.host("scale")
    # A Python float becomes a T of the instance the tensor selects: f16 bits, or an f32.
    (launch,) = scale.check(view(0, (64,), "f16"), 1.5)
    assert (launch["kernel"], launch["args"][-1]) == ("k0", ("b16", 0x3E00))
    (launch,) = scale.check(view(0, (64,), "f32"), 1.5)
    assert (launch["kernel"], launch["args"][-1]) == ("k1", ("f32", 1.5))
    scale.prepare(view(0, (64,), "f32"), 1.5)
    scale.prepare(view(0, (64,), "f16"), 1.5)
    assert "has no instance for T = bf16 (from `x`)" in refusal(scale.check, view(0, (64,), "bf16"), 1.5)
    # A corrupt instance record makes the generic unusable, never a wrong selection.
    bad = cutec.parse_manifest(
        seal("cutec-manifest 1\narch sm_90\n" + SCALE.replace("typearg T f32 x", "typearg T f32 a"))
    )
    with pytest.raises(cutec.Error, match="generic host function `scale`: instance `scale<f32>` has no `typearg` line"):
        bad.host("scale")
    assert bad.host("scale<f16>").check(view(0, (64,), "f16"), 1.5)


def test_partial_tiles_and_requires_are_refused(cubin, ew):
    tiles = [view(k, (1000, 2048)) for k in range(3)]
    assert refusal(ew.host("elementwise_add").check, *tiles) == (
        PREFIX + "host `elementwise_add<f16>`: mA extent 1000 (mode 0) is not a multiple of the tile 16 "
        "(a run-time extent tiled by 16); this kernel has no tail handling"
    )
    apply = cutec.manifest(cubin("elementwise_apply"))
    for name in ("elementwise_mul", "elementwise_mul_relu"):
        assert apply.host(name).check(*(view(k, (1008, 2304)) for k in range(3)))
        assert "mA extent 1000 (mode 1) is not a multiple of the tile 256" in refusal(
            apply.host(name).check, *(view(k, (2048, 1000)) for k in range(3))
        )
        assert "mA extent 1000 (mode 0) is not a multiple of the tile 16" in refusal(
            apply.host(name).check, *(view(k, (1000, 2048)) for k in range(3))
        )
    comp = cutec.manifest(cubin("reduce_sum_compositional")).host("reduce_compositional")
    assert comp.check(view(0, (1000, 1024), "f32"), view(1, (1000,), "f32"))
    assert "gInput extent 6 (mode 0) is not a multiple of the tile 4" in refusal(
        comp.check, view(0, (6, 1024), "f32"), view(1, (6,), "f32")
    )
    nd = cutec.manifest(cubin("reduce_sum_nd")).host("reduce_nd")
    assert nd.check(view(0, (5, 256, 3), "f32"), view(1, (5, 3), "f32"))
    # reduce_rows: the launched kernel's own require (4 rows per block).
    rows = cutec.manifest(cubin("reduce_sum_tiled_copy")).host("reduce_rows")
    assert rows.check(view(0, (4096, 1024), "f32"), view(1, (4096,), "f32"))
    msg = refusal(rows.check, view(0, (1001, 1024), "f32"), view(1, (1001,), "f32"))
    assert "reduce_rows_kernel" in msg and "1001" in msg and "is not a multiple of the tile 4" in msg


def test_cluster_grids_are_checked(cubin):
    """samples/cluster_exchange.cute: `cluster(2, 2, 1)` on a run-time grid; a grid that is not whole
    clusters is refused by the plan, naming the grid and the cluster; `exchange` asserts its length."""
    m = cutec.manifest(cubin("cluster_exchange"))
    plan = m.host("cluster_map")
    (launch,) = plan.check(view(0, (4, 6, 8), "i32"))
    for shape, grid in [((3, 6, 8), "(6, 3, 1)"), ((4, 5, 8), "(5, 4, 1)")]:
        msg = refusal(plan.check, view(0, shape, "i32"))
        assert (
            f"kernel `cluster_map_kernel` runs in thread-block clusters of (2, 2, 1) blocks, but the grid {grid} "
            "is not a multiple of that in every dimension" in msg
        ), msg
    ex = m.host("exchange")
    assert ex.check(view(0, (1024,), "f32"), view(1, (1024,), "f32"))
    assert "whole clusters of 2 blocks of 256" in refusal(ex.check, view(0, (768,), "f32"), view(1, (768,), "f32"))


def test_host_if_picks_the_kernel_by_the_row_length(cubin):
    """samples/row_sum.cute: a host `if` on N launches one of two kernels per call."""
    m = cutec.manifest(cubin("row_sum"))
    assert m.text.startswith("cutec-manifest 2\n")
    plan = m.host("row_sum")
    # Every kernel of every branch is in the plan (and the cubin); a call launches one.
    assert plan.launches == ["warp_row_sum_kernel", "block_row_sum_kernel"]
    for (rows, cols), kernel, grid, block in [
        ((1000, 1), "warp_row_sum_kernel", 250, 128),
        ((7, 1024), "warp_row_sum_kernel", 2, 128),
        ((7, 1025), "block_row_sum_kernel", 7, 128),
        ((3, 8192), "block_row_sum_kernel", 3, 256),
        ((2, 1 << 20), "block_row_sum_kernel", 2, 1024),
    ]:
        (launch,) = plan.check(view(0, (rows, cols), "f32"), view(1, (rows,), "f32"))
        assert (launch["kernel"], launch["grid"], launch["block"]) == (kernel, (grid, 1, 1), (block, 1, 1)), (
            rows,
            cols,
        )
    # The host's assert applies whichever branch is taken.
    for cols in (16, 4096):
        assert "assert failed: out needs one entry per row of x (size(out) = 6, M = 5)" in refusal(
            plan.check, view(0, (5, cols), "f32"), view(1, (6,), "f32")
        )


def test_fast_row_sum_picks_by_row_length(cubin):
    """samples/row_sum.cute: fast_row_sum picks lanes per row or a block per row from N; row_sum_v4
    takes the threads per row and the vectors per thread as arguments and refuses other values."""
    m = cutec.manifest(cubin("row_sum"))
    fast, v4 = m.host("fast_row_sum"), m.host("row_sum_v4")
    for (rows, cols), kernel, grid, block in [
        ((1, 4), "lanes_row_sum_v4_kernel", 1, 128),  # 4 lanes per row, 32 rows per block
        ((4096, 128), "lanes_row_sum_v4_kernel", 256, 128),  # 8 lanes per row, 16 rows per block
        ((65536, 256), "lanes_row_sum_v4_kernel", 16384, 128),  # a warp per row, 4 rows per block
        ((5, 512), "lanes_row_sum_v4_kernel", 2, 128),
        ((16384, 1024), "lanes_row_sum_v4_kernel", 4096, 128),
        ((7, 2048), "block_row_sum_v4_kernel", 7, 256),  # a block per row
        ((4096, 4096), "block_row_sum_v4_kernel", 4096, 512),
        ((3, 8192), "block_row_sum_v4_kernel", 3, 512),
    ]:
        (launch,) = fast.check(view(0, (rows, cols), "f32"), view(1, (rows,), "f32"))
        assert launch["kernel"].startswith(kernel) and (launch["grid"], launch["block"]) == (
            (grid, 1, 1),
            (block, 1, 1),
        ), (
            rows,
            cols,
            launch,
        )
    for threads, ilp, kernel, grid, block in [
        (8, 2, "lanes", 1, 128),
        (32, 8, "lanes", 2, 128),
        (64, 1, "block", 7, 64),
        (1024, 8, "block", 7, 1024),
    ]:
        (launch,) = v4.check(view(0, (7, 1020), "f32"), view(1, (7,), "f32"), threads, ilp)
        assert launch["kernel"].startswith(f"{kernel}_row_sum_v4_kernel") and (launch["grid"], launch["block"]) == (
            (grid, 1, 1),
            (block, 1, 1),
        ), (threads, ilp, launch)
    assert "shape entry 1 = 6 must be a multiple of 4" in refusal(
        fast.check, view(0, (4, 6), "f32"), view(1, (4,), "f32")
    )
    assert "out needs one entry per row of x" in refusal(fast.check, view(0, (5, 256), "f32"), view(1, (4,), "f32"))
    assert "threads must be 4, 8, 16, 32 or a multiple of 32 from 64 to 1024 (threads % WARP = 16)" in refusal(
        v4.check, view(0, (4, 256), "f32"), view(1, (4,), "f32"), 48, 2
    )
    assert "ilp must be 1, 2, 4 or 8 (ilp = 3)" in refusal(
        v4.check, view(0, (4, 256), "f32"), view(1, (4,), "f32"), 16, 3
    )


def test_host_loops_launch_once_per_chunk(cubin):
    """samples/chunked_add.cute: host `for` loops with run-time bounds and step, one launch per trip."""
    m = cutec.manifest(cubin("chunked_add"))
    assert m.version == 6 and "\nfor $10 | 0 | $0 | $9\n" in m.text
    chunked, tiled = m.host("chunked_add"), m.host("tiled_add")
    for rows, cols, chunk in [(100, 300, 32), (96, 300, 32), (5, 7, 1), (3, 1000, 50), (1, 1, 1)]:
        a, b, c = (view(k, (rows, cols), "f32") for k in range(3))
        launches = chunked.check(a, b, c, chunk)
        want = [(r, min(chunk, rows - r)) for r in range(0, rows, chunk)]
        assert len(launches) == len(want), (rows, cols, chunk)
        for launch, (r, n) in zip(launches, want):
            # After the three tensors (pointer and three i32 each): r0 and rows, then the kernel's
            # fast divisor of the row length.
            assert launch["kernel"] == "add_rows" and launch["args"][12:14] == [("i32", r), ("i32", n)], (
                rows,
                chunk,
                launch,
            )
            assert launch["grid"] == (-(-(n * cols) // 256), 1, 1) and launch["block"] == (256, 1, 1)
    a, b, c = (view(k, (100, 300), "f32") for k in range(3))
    for chunk in (0, -32):
        assert f"the step of a loop must be positive, but chunk = {chunk}" in refusal(chunked.check, a, b, c, chunk)
    # Nested loops over 16 x 64 tiles: each launch views its own tile.
    rows, cols = 48, 192
    a, b, c = (view(k, (rows, cols), "f32") for k in range(3))
    launches = tiled.check(a, b, c)
    tiles = [(ti, tj) for ti in range(rows // 16) for tj in range(cols // 64)]
    assert len(launches) == len(tiles)
    for launch, (ti, tj) in zip(launches, tiles):
        off = 4 * (ti * 16 * cols + tj * 64)
        assert launch["args"][:2] == [("ptr", fake_ptr(0) + off), ("i32", cols)], (ti, tj)
        assert launch["args"][4] == ("ptr", fake_ptr(2) + off)
    for shape in ((40, 192), (8, 64), (48, 100)):
        assert "assert failed: a must be made of whole 16 x 64 tiles" in refusal(
            tiled.check, *(view(k, shape, "f32") for k in range(3))
        )


def test_predicated_add_accepts_any_shape(cubin):
    plan = cutec.manifest(cubin("predicated_add")).host("predicated_add")
    for m, n in ((1, 1), (3, 5), (1023, 33), (4, 32), (4096, 4097)):
        (launch,) = plan.check(*(view(k, (m, n), "f32") for k in range(3)))
        assert (launch["grid"], launch["block"]) == ((-(-m // 4), -(-n // 32), 1), (32, 4, 1)), (m, n)


def test_static_extents_and_asserts(cubin):
    copy = cutec.manifest(cubin("four_ways_copy")).host("cute_copy_1")
    assert copy.check(view(0, (8, 128), "f32"))
    assert refusal(copy.check, view(0, (8, 64), "f32")) == (
        PREFIX
        + "host `cute_copy_1` parameter `mA` (argument 0): static extent mismatch: shape entry 1 is 128 in the host "
        "(layout (8,128):(128,1)) but 64 in the view"
    )
    gemm = cutec.manifest(cubin("gemm_sm80"))
    tn = gemm.host("gemm_tn_bf16")
    a, b, c = view(0, (256, 128), "bf16"), view(1, (256, 128), "bf16"), view(2, (256, 256), "bf16")
    assert tn.check(a, b, c)
    msg = refusal(tn.check, a, view(1, (256, 64), "bf16"), c)
    assert msg.startswith(PREFIX + "host `gemm_tn_bf16`: assert failed: "), msg


def test_kernel_signatures_check_launches(cubin):
    k = cutec.manifest(cubin("vector_add")).kernel("vector_add")
    assert k.abi == "(u64 a, i32 a.shape[0], u64 b, i32 b.shape[0], u64 c, i32 c.shape[0])"
    assert k.check(*(view(i, (1000,), "f32") for i in range(3))) == [
        ("ptr", fake_ptr(0)),
        ("i32", 1000),
        ("ptr", fake_ptr(1)),
        ("i32", 1000),
        ("ptr", fake_ptr(2)),
        ("i32", 1000),
    ]
    assert refusal(k.check, view(0, (1000,), "f32"), view(1, (1000,), "f32"), view(2, (1000,), "f16")) == (
        PREFIX
        + "kernel `vector_add` parameter `c` (argument 2): dtype mismatch: the kernel expects f32 elements but the view has f16"
    )


# ---- the tensor protocols -------------------------------------------------------------------------


def test_cuda_array_interface(ew):
    add = ew.host("elementwise_add").check
    cai = [ArrayInterface(fake_ptr(k), (2048, 2048)) for k in range(3)]
    (launch,) = add(*cai)
    assert launch["args"][0] == ("ptr", fake_ptr(0))
    # Byte strides become element strides; a transposed layout is then refused by the manifest.
    t = ArrayInterface(fake_ptr(2), (2048, 2048), strides=(4096, 4))
    assert "stride mismatch: stride entry 1 is 1 in the host (layout (?,?):(?,1)) but 2 in the view" in refusal(
        add, cai[0], cai[1], t
    )
    cases = [
        (ArrayInterface(fake_ptr(2), (2048, 2048), typestr=">f2"), 'typestr ">f2" is big-endian'),
        (ArrayInterface(fake_ptr(2), (2048, 2048), typestr="<c8"), 'typestr "<c8" has no cutec element type'),
        (
            ArrayInterface(fake_ptr(2), (2048, 2048), strides=(4097, 2)),
            "byte stride 4097 is not a multiple of the element size 2",
        ),
        (
            ArrayInterface(fake_ptr(2), (2048, 2048), mask=object()),
            "masked arrays (a __cuda_array_interface__ with a mask) are not supported",
        ),
    ]
    for obj, why in cases:
        assert (
            refusal(add, cai[0], cai[1], obj) == PREFIX + f"host `elementwise_add` parameter `mC` (argument 2): {why}"
        )
    f32 = ArrayInterface(fake_ptr(2), (2048, 2048), typestr="<f4")
    assert "mixed element types for `T`: `mA` is f16 but `mC` is f32" in refusal(add, cai[0], cai[1], f32)


@pytest.mark.parametrize("versioned", [False, True])
def test_dlpack_capsules(ew, versioned):
    add = ew.host("elementwise_add").check
    ts = [
        DLPackTensor(fake_ptr(k), (2048, 2048), versioned=versioned, strides=(2048, 1) if k else None) for k in range(3)
    ]
    (launch,) = add(*ts)
    assert [a for a in launch["args"] if a[0] == "ptr"] == [("ptr", fake_ptr(k)) for k in range(3)]
    # Offline: the producer is asked for no synchronization (stream=-1).
    assert ts[0].streams_seen == [-1]
    off = DLPackTensor(fake_ptr(2) + 256, (2048, 2048), byte_offset=256)
    assert add(ts[0], ts[1], off)[0]["args"][10] == ("ptr", fake_ptr(2) + 256)
    cpu = DLPackTensor(fake_ptr(2), (2048, 2048), device=(1, 0))
    assert refusal(add, ts[0], ts[1], cpu) == (
        PREFIX
        + "host `elementwise_add` parameter `mC` (argument 2): the tensor is in cpu memory; cutec kernels take CUDA "
        'device memory (move it with .cuda() or .to("cuda"))'
    )
    c64 = DLPackTensor(fake_ptr(2), (2048, 2048), dtype="c64")
    assert refusal(add, ts[0], ts[1], c64).endswith(
        "DLPack type code 5 (complex) with 64 bits has no cutec element type"
    )


def test_dlpack_exchange_api_is_the_fast_path(ew):
    add = ew.host("elementwise_add").check
    before = ExchangeTensor.calls
    (launch,) = add(*(ExchangeTensor(fake_ptr(k), (2048, 2048)) for k in range(3)))
    assert ExchangeTensor.calls == before + 3
    assert launch["args"][5] == ("ptr", fake_ptr(1))
    bf16 = ExchangeTensor(fake_ptr(2), (2048, 2048), dtype="bf16")
    assert add(bf16, bf16, bf16)[0]["kernel"] == "elementwise_add_kernel_2"  # the bf16 instance
    assert "the host expects f16 elements but the view has bf16" in refusal(
        ew.host("elementwise_add<f16>").check, bf16, bf16, bf16
    )


def test_fp8_tensors_select_their_instances(cubin):
    """samples/fp8_convert.cute: `quantize<T: f32 | f16 | bf16, Q: f8e4m3 | f8e5m2>`; the fp8 dtypes
    from names (torch's `float8_e4m3fn`, `float8_e5m2`) and from DLPack codes 10 and 12."""
    m = cutec.manifest(cubin("fp8_convert"))
    assert m.host("quantize").instances == [
        f"quantize<{t},{q}>" for t in ("f32", "f16", "bf16") for q in ("f8e4m3", "f8e5m2")
    ]
    n = 4096
    for q in ("f8e4m3", "f8e5m2"):
        (launch,) = m.host("quantize").check(view(0, (n,), "bf16"), view(1, (n,), q), 0.5)
        assert launch["grid"][0] == n // 16 // 128
        assert m.host("dequantize").check(view(0, (n,), q), view(1, (n,), "f32"), 2.0)
        (launch,) = m.host("quantize").check(
            DLPackTensor(fake_ptr(0), (n,), "f16"), DLPackTensor(fake_ptr(1), (n,), q), 1.0
        )
    assert cutec.TensorView(fake_ptr(0), "torch.float8_e4m3fn", (16,)).dtype == "f8e4m3"
    assert cutec.TensorView(fake_ptr(0), "float8_e5m2", (16,)).dtype == "f8e5m2"
    # 16 fp8 per thread: the length must be a multiple of 16.
    assert "must be a multiple of 16" in refusal(
        m.host("quantize").check, view(0, (n + 8,), "f32"), view(1, (n + 8,), "f8e4m3"), 1.0
    )
    assert "dtype mismatch: the host expects f8e4m3 elements but the view has f8e5m2" in refusal(
        m.host("quantize<f32,f8e4m3>").check, view(0, (n,), "f32"), view(1, (n,), "f8e5m2"), 1.0
    )
    assert refusal(
        m.host("quantize").check, view(0, (n,), "f32"), DLPackTensor(fake_ptr(1), (n,), "f8e4m3fnuz"), 1.0
    ).endswith(
        "DLPack type code 11 (float8 (a variant cutec does not have: it has e4m3fn and e5m2)) with 8 bits has no cutec element type"
    )


def test_tensor_views():
    v = cutec.TensorView(fake_ptr(0), "torch.bfloat16", (4, 8))
    assert (v.dtype, v.strides, v.nbytes, v.device) == ("bf16", [8, 1], None, None)
    assert (
        repr(cutec.TensorView(0x100, "float32", (2,), nbytes=8, device=1))
        == "TensorView(ptr=0x100, dtype='f32', shape=[2], strides=[1], nbytes=8, device=1)"
    )
    with pytest.raises(ValueError, match='unknown dtype "complex64"; cutec\'s element types: i8, i16'):
        cutec.TensorView(0x100, "complex64", (2,))
    with pytest.raises(TypeError, match="1 strides for 2 extents"):
        cutec.TensorView(0x100, "f32", (2, 2), (1,))


# ---- scalars --------------------------------------------------------------------------------------

SCALARS = """cutec-manifest 1
arch sm_90
kernel k
param h scalar elem=f16
param b scalar elem=bf16
param f scalar elem=f32
param x scalar elem=i8
param u scalar elem=u32
param p scalar elem=bool
end
"""


def test_scalars_take_the_parameter_type():
    k = cutec.parse_manifest(seal(SCALARS)).kernel("k")
    # The kernel ABI's values: 16-bit and 8-bit slots, f32 as its bits in a 32-bit slot.
    assert k.check(0.5, 1.0, 2, -1, 7, True) == [
        ("b16", 0x3800),
        ("b16", 0x3F80),
        ("u32", 0x40000000),
        ("b8", 0xFF),
        ("u32", 7),
        ("b8", 1),
    ]
    assert k.check(1, 1, 1.5, 0, 0, 0)[:3] == [("b16", 0x3C00), ("b16", 0x3F80), ("u32", 0x3FC00000)]
    assert refusal(k.check, 0.5, 1.0, 2, 300, 7, True) == (
        PREFIX + "kernel `k` parameter `x` (argument 3): 300 does not fit the parameter's type i8 (-128..=127)"
    )
    assert refusal(k.check, 0.5, 1.0, 2, -1, -7, True) == (
        PREFIX + "kernel `k` parameter `u` (argument 4): -7 does not fit the parameter's type u32 (0..=4294967295)"
    )
    assert refusal(k.check, 0.5, 1.0, 2, 1.5, 7, True) == (
        PREFIX
        + "kernel `k` parameter `x` (argument 3): dtype mismatch: the kernel expects a i8 scalar but got a f64 scalar"
    )
    assert (
        refusal(k.check, 0.5, 1.0, 2, -1, 7, 3)
        == PREFIX + "kernel `k` parameter `p` (argument 5): 3 does not fit the parameter's type bool (0..=1)"
    )
    assert refusal(k.check, 0.5, 1.0, view(0, (4,), "f32"), -1, 7, True) == (
        PREFIX + "kernel `k` parameter `f` (argument 2): the kernel expects a f32 scalar but got a f32 tensor view"
    )


# ---- host functions that only print: run without a device --------------------------------------------

LAYOUT_OUTPUT = {
    ("coalesce_example", (6,)): ">?? Original: (2,(1,6)):(1,(6,2))\n>?? Coalesced: 12:1\n",
    ("composition_example", (8,)): ">?? Layout A: (6,2):(8,2)\n>?? Composition R: ((2,2),3):((24,2),8)\n",
    (
        "bymode_composition_example",
        (12, 4, 8, 59, 13, 1),
    ): ">?? Layout A: (12,(4,8)):(59,(13,1))\n>?? By-mode Composition Result: (3,(4,2)):(59,(13,1))\n",
    ("bymode_coalesce_example", ()): "",
    ("composition_static", ()): "",
    ("logical_divide_1d_example", ()): "",
    ("logical_divide_2d_example", ()): "",
    ("product_examples", ()): "",
    ("tv_layout_example", ()): "",
}


def test_layout_algebra_prints(cubin):
    m = cutec.manifest(cubin("layout_algebra"))
    assert sorted(m.hosts) == sorted(name for name, _ in LAYOUT_OUTPUT)
    for (name, args), out in LAYOUT_OUTPUT.items():
        assert m.host(name).run(*args) == out, name


def test_printing_prints(cubin):
    m = cutec.manifest(cubin("printing"))
    assert m.host("print_example").run(8) == ">?? 8\n>?? 2\n>?? (8,2):(1,8)\n"
    assert m.host("format_string_example").run(8) == ""
    assert refusal(m.host("print_example").run, 2**40) == (
        PREFIX
        + "host `print_example` parameter `a` (argument 0): 1099511627776 does not fit the parameter's type i32 (-2147483648..=2147483647)"
    )
    with pytest.raises(cutec.Refused) as e:
        cutec.manifest(cubin("hello_world")).host("hello_world").run()
    assert str(e.value) == (
        "invalid argument: host `hello_world` launches hello_kernel: it needs a device "
        "(load the module and call Module::host)"
    )


# ---- cutec.compile -----------------------------------------------------------------------------------


def test_compile_reports_the_compilers_diagnostics(tmp_path):
    bad = tmp_path / "bad.cute"
    bad.write_text("kernel k( {\n")
    fake = tmp_path / "cutec"
    fake.write_text('#!/bin/sh\necho "error: expected a parameter" >&2\nexit 1\n')
    fake.chmod(0o755)
    with pytest.raises(cutec.CompileError) as e:
        cutec.compile(bad, compiler=str(fake))
    assert e.value.returncode == 1 and e.value.stderr == "error: expected a parameter\n"
    assert str(e.value) == f"cutec build {bad} --arch sm_90 failed (exit 1):\nerror: expected a parameter"
    with pytest.raises(cutec.Error, match="cannot run the cutec compiler"):
        cutec.compile(bad, compiler=str(tmp_path / "absent"))


def test_compile_builds_then_loads(tmp_path):
    from conftest import SAMPLES, find_compiler

    exe = find_compiler()
    if exe is None:
        pytest.skip("no cutec compiler here (cargo build -p cutec)")
    out = tmp_path / "vector_add.cubin"
    if cutec.driver_available():
        m = cutec.compile(SAMPLES / "vector_add.cute", output=out, compiler=exe)
        assert m.kernels == ["vector_add"]
    else:
        with pytest.raises(cutec.Unavailable):
            cutec.compile(SAMPLES / "vector_add.cute", output=out, compiler=exe)
    assert cutec.manifest(out).kernels == ["vector_add"]


def test_imports_without_torch():
    code = "import sys, cutec; assert 'torch' not in sys.modules; print(cutec.__all__[0])"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert r.returncode == 0, r.stderr


# ---- reading printed output (the GPU tests' helper) ---------------------------------------------------


def test_print_tensor_forms():
    from printed import tensor_prints, tensor_values

    assert tensor_prints("x\ntensor o 3:1, data=\n  [ 1.0,  2.0, ]\nafter [9]\n") == [[[1.0, 2.0]]]
    assert tensor_prints("tensor<f32> o 2:1 [1.5, -2e1]\n") == [[[1.5, -20.0]]]
    assert tensor_prints("tensor o (2,2):(1,2)\n[[ 1, 2 ],\n [ 3, 4 ]]\n[5]\n") == [[[1.0, 2.0], [3.0, 4.0]]]
    two = (
        "21.000000\ntensor(f32, rmem, align<16>) o 2:1, data=\n       [ 6.000000,  15.000000, ]\n"
        "tensor(f32, rmem, align<16>) o 3:1, data=\n       [ -6.000000,  8.5e1,  10.000000, ]\n"
    )
    assert tensor_values(two) == [[6.0, 15.0], [-6.0, 85.0, 10.0]]
    with pytest.raises(ValueError, match="no closed"):
        tensor_prints("tensor o 2:1\n[ 1, 2,\n")
    assert tensor_prints("no tensor here\n") == []


def test_a_producer_calling_back_does_not_deadlock(cubin):
    plan = cutec.manifest(cubin("elementwise_add")).host("elementwise_add")
    inner = [view(k, (16, 256), "f32") for k in range(3)]

    class Reentrant:
        """A producer whose __cuda_array_interface__ calls the same plan while it is being read."""

        @property
        def __cuda_array_interface__(self):
            plan.prepare(*inner)
            return ArrayInterface(fake_ptr(3), (16, 256), "<f4").__cuda_array_interface__

    plan.prepare(inner[0], inner[1], Reentrant())
    assert plan.check(inner[0], inner[1], Reentrant())[0]["args"][10] == ("ptr", fake_ptr(3))


# ---- host functions with scalar parameters of every type (samples/control_flow.cute) ---------------


def test_host_scalars_take_the_parameter_type(cubin):
    m = cutec.manifest(cubin("control_flow"))
    axpb, collatz, sums = m.host("axpb").check, m.host("collatz").check, m.host("sum_positive").check
    x, y = view(0, (1000,), "f32"), view(1, (1000,), "f32")
    (launch,) = axpb(x, y, 1.5, -2)
    # The f32 parameters reach the kernel as their bits, after the two tensors (pointer, extent).
    assert launch["args"][4:] == [("f32", 1.5), ("f32", -2.0)]
    assert refusal(axpb, x, y, "1.5", 2.0) == (
        PREFIX
        + "host `axpb` parameter `a` (argument 2): a str is not a tensor: pass a CUDA tensor (torch, CuPy, JAX: anything with "
        "__dlpack__ or __cuda_array_interface__) or a cutec.TensorView"
    )
    n, s = view(0, (64,), "i32"), view(1, (64,), "i32")
    (launch,) = collatz(n, s, 4000000000)
    assert launch["args"][-1] == ("u32", 4000000000)
    assert refusal(collatz, n, s, -1) == (
        PREFIX
        + "host `collatz` parameter `limit` (argument 2): -1 does not fit the parameter's type u32 (0..=4294967295)"
    )
    assert refusal(collatz, n, s, 2.5) == (
        PREFIX
        + "host `collatz` parameter `limit` (argument 2): dtype mismatch: the host expects a u32 scalar but got a f64 scalar"
    )
    rows, out = view(0, (10, 8), "f32"), view(1, (10,), "f32")
    (launch,) = sums(rows, out, 0.5, True)
    assert launch["args"][-2:][1] == ("b8", 1)
    assert refusal(sums, rows, out, 0.5, 2) == (
        PREFIX + "host `sum_positive` parameter `negate` (argument 3): 2 does not fit the parameter's type bool (0..=1)"
    )


# ---- host functions with `stream` parameters (samples/two_streams.cute) ---------------------------


class TorchLikeStream:
    """What torch.cuda.Stream offers: the raw handle as `.cuda_stream`."""

    def __init__(self, handle):
        self.cuda_stream = handle


class ProtocolStream:
    """The CUDA stream protocol: `__cuda_stream__()` returns (version, handle)."""

    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def test_host_stream_parameters(cubin):
    m = cutec.manifest(cubin("two_streams"))
    p = m.host("scale3")
    assert p.params[4:] == [("s1", "stream"), ("s2", "stream")]
    assert "\nparam s1 stream\nparam s2 stream\n" in m.text and "\nsmem 0\nstream 4\n" in m.text
    assert m.version == 1
    x, y2, y3, y4 = (view(k, (1000,), "f32") for k in range(4))
    # Stream objects (torch.cuda.Stream's `.cuda_stream`, the `__cuda_stream__` protocol) and ints;
    # 0 is the legacy default stream. Launches 0 and 1 go to s1 and s2 (parameters 4 and 5), launch
    # 2 to the call's stream.
    for s1, s2 in [(TorchLikeStream(0x1000), ProtocolStream(0x2000)), (0x1000, 0), (0, 0)]:
        launches = p.check(x, y2, y3, y4, s1, s2)
        assert [launch["stream"] for launch in launches] == [4, 5, None]
        assert [launch["args"][-1] for launch in launches] == [("f32", 2.0), ("f32", 3.0), ("f32", 4.0)]
    takes = (
        "a stream object (torch.cuda.Stream, or anything with .cuda_stream, __cuda_stream__() or .ptr) "
        "or a CUstream handle as an int (0 is the legacy default stream)"
    )
    arg = PREFIX + "host `scale3` parameter `s2` (argument 5): "
    assert refusal(p.check, x, y2, y3, y4, 0, None) == arg + f"None is not a stream; pass {takes}"
    assert refusal(p.check, x, y2, y3, y4, 0, True) == arg + f"a bool is not a stream; pass {takes}"
    assert refusal(p.check, x, y2, y3, y4, 0, -1) == arg + f"expects {takes}, not a int"
    assert refusal(p.check, x, y2, y3, y4, 0, 1.5) == arg + f"expects {takes}, not a float"
    assert (
        refusal(p.check, x, y2, y3, y4, 0, view(9, (4,), "f32"))
        == arg + f"a tensor (TensorView) is not a stream; pass {takes}"
    )
    assert (
        refusal(p.check, x, y2, y3, y4, 0, DLPackTensor(fake_ptr(9), (4,), "f32"))
        == arg + f"a tensor (DLPackTensor) is not a stream; pass {takes}"
    )
    assert refusal(p.check, x, y2, y3, y4, 0, TorchLikeStream("s")) == arg + f"expects {takes}, not a TorchLikeStream"
    # A stream where a tensor goes: not a tensor.
    assert "parameter `y4` (argument 3): a TorchLikeStream is not a tensor" in refusal(
        p.check, x, y2, y3, TorchLikeStream(1), 0, 0
    )
    # Too few arguments: the runtime counts them.
    assert "takes 6 parameters (x, y2, y3, y4, s1, s2) but 5 arguments were given" in refusal(p.check, x, y2, y3, y4, 0)


# ---- samples/flash_attention_sm90.cute: the host function's plan and checks --------------------------


def test_flash_attention_plan(cubin):
    """One launch per call: the kernel instance of the head dim (64, 128, 256; causal is a run-time
    argument of the kernel; at head dim 256 64-key tiles where causal over at most 1024 keys, else
    80), tiles of (128 query rows, head, batch), 384 threads — at head dim 64
    (192 query rows, 512 threads: three consumer warpgroups) unless causal over at most 2048 keys;
    a 1-D grid, persistent without causal masking (min(tiles, 132) blocks); with it, persistent over
    zigzag units (two tiles each) where those fill their waves to 95% and seqlen_q <= 8192, else a
    block per tile; shapes that do not fit are refused before any launch."""
    attn = cutec.manifest(cubin("flash_attention_sm90")).host("flash_attn_fwd").check

    def call(b, sq, sk, h, hkv, d, dtype="bf16", causal=1, lse=None):
        q, o = view(0, (b, sq, h, d), dtype), view(3, (b, sq, h, d), dtype)
        k, v = view(1, (b, sk, hkv, d), dtype), view(2, (b, sk, hkv, d), dtype)
        return attn(q, k, v, o, lse or view(4, (b, h, sq), "f32"), 0.125, causal)

    kernels = set()
    for d in (64, 128, 256):
        for dtype in ("bf16", "f16"):
            (launch,) = call(2, 1000, 17, 8, 2, d, dtype)
            assert launch["grid"] == (8 * 8 * 2, 1, 1) and launch["block"] == (384, 1, 1)
            kernels.add(launch["kernel"])
    for causal, sk in ((0, 17), (1, 2049)):
        for dtype in ("bf16", "f16"):
            (launch,) = call(2, 1000, sk, 8, 2, 64, dtype, causal=causal)
            assert launch["grid"] == (6 * 8 * 2, 1, 1) and launch["block"] == (512, 1, 1)
            kernels.add(launch["kernel"])
    # Head dim 256 causal over at most 1024 keys: 64-key tiles (instances of their own, two K and V
    # stages of 32 KiB beside Q's 64), else 80-key ones (40 KiB stages); O staged in V's ring.
    for dtype in ("bf16", "f16"):
        (short,) = call(2, 1000, 1024, 8, 2, 256, dtype)
        (long,) = call(2, 1000, 1025, 8, 2, 256, dtype)
        (full,) = call(2, 1000, 1024, 8, 2, 256, dtype, causal=0)
        assert short["kernel"] != long["kernel"] == full["kernel"]
        assert short["smem"] == (128 * 256 + 4 * 64 * 256) * 2 + 1024
        assert long["smem"] == full["smem"] == (128 * 256 + 4 * 80 * 256) * 2 + 1024
        kernels |= {short["kernel"], long["kernel"]}
    assert len(kernels) == 10
    # More tiles than SMs: 132 persistent blocks without causal masking. With it: 132 where the
    # zigzag units (1024 at S4096 here: 97% of 8 waves) fill the waves; a block per tile where they
    # fill 89% (D64, 192-row tiles: 22 x 64 tiles, 704 units), at S16384, and with fewer units than
    # SMs (4 x 16 at S1024, B1 H16: 64 units).
    for causal, b, s, h, d, grid, threads in (
        (0, 8, 4096, 16, 128, 132, 384),
        (1, 8, 4096, 16, 128, 132, 384),
        (1, 4, 4096, 16, 64, 22 * 64, 512),
        (1, 1, 16384, 16, 128, 128 * 16, 384),
        (1, 1, 1024, 16, 128, 8 * 16, 384),
        # test_gpu_flash_attention.py's zigzag shapes: 131 units (261 tiles, 9 a head), 132 (264).
        (1, 1, 1100, 29, 64, 131, 384),
        (1, 1, 1100, 29, 256, 131, 384),
        (1, 2, 1000, 33, 128, 132, 384),
    ):
        (launch,) = call(b, s, s, h, h, d, causal=causal)
        assert launch["grid"] == (grid, 1, 1) and launch["block"] == (threads, 1, 1), (b, s, d, launch)
    # (batch, heads, seqlen, D) tensors passed as their transposes: head_dim contiguous, any strides.
    b, h, s, d = 2, 4, 300, 64
    bhsd = row_major((b, h, s, d))
    strides = (bhsd[0], bhsd[2], bhsd[1], 1)
    q, k, v, o = (view(i, (b, s, h, d), "bf16", strides) for i in range(4))
    assert attn(q, k, v, o, view(4, (b, h, s), "f32"), 0.125, 0)
    for bad in (
        dict(h=6, hkv=4),  # query heads not a multiple of the K/V heads
        dict(d=96),  # head_dim
        dict(causal=2),
        dict(lse=view(4, (2, 8, 999), "f32")),  # LSE (batch, heads, seqlen_q)
    ):
        args = dict(b=2, sq=1000, sk=17, h=8, hkv=2, d=64) | bad
        refusal(lambda a=args: call(**a))


def test_flash_attention_window_plan(cubin):
    """flash_attn_fwd_window launches flash_attn_fwd's kernels: (-1, 0) is causal attention (its
    kernel, grid and block), (-1, -1) full attention, and any other window full attention's
    persistent grid (a window's tiles are alike); a side below -1 is refused."""
    m = cutec.manifest(cubin("flash_attention_sm90"))
    attn, window = m.host("flash_attn_fwd").check, m.host("flash_attn_fwd_window").check

    def args(b, s, h, d):
        q, o = view(0, (b, s, h, d), "bf16"), view(3, (b, s, h, d), "bf16")
        k, v = view(1, (b, s, h, d), "bf16"), view(2, (b, s, h, d), "bf16")
        return q, k, v, o, view(4, (b, h, s), "f32"), 0.125

    for b, s, h, d in ((8, 4096, 16, 128), (4, 1000, 16, 64), (1, 1000, 8, 256)):
        for sides, causal in (((-1, 0), 1), ((-1, -1), 0)):
            assert window(*args(b, s, h, d), *sides) == attn(*args(b, s, h, d), causal), (b, s, d, sides)
        tiles = b * h * -(-s // (192 if d == 64 else 128))
        for sides in ((64, 0), (100, 37), (-1, 100)):
            (launch,) = window(*args(b, s, h, d), *sides)
            assert launch["grid"] == (min(tiles, 132), 1, 1), (b, s, d, sides, launch)
    for sides in ((-2, 0), (0, -3)):
        refusal(lambda w=sides: window(*args(1, 64, 4, 64), *w))
    # A side past every sequence is clamped to 2^29 (the kernels add it to row indices in i32).
    (launch,) = window(*args(1, 1000, 8, 128), 2**31 - 1, 0)
    assert ("i32", 2**29) in launch["args"] and ("i32", 2**31 - 1) not in launch["args"], launch["args"]


# ---- samples/flash_attention_varlen_sm90.cute: packed variable-length batches ------------------------


def test_flash_attention_varlen_plan(cubin):
    """One launch per call: the instance of the head dim (three consumer warpgroups and 192-row
    tiles at 64, two and 128 rows at 128 and 256; six instances with bf16/f16), a block per (query
    block slot, head, sequence): ceil(max_seqlen_q / rows) x heads x batch, the packed tensors passed
    as (1, total, heads, D) views and LSE as (1, heads, total_q); shapes that do not fit, offsets of
    different lengths and a max_seqlen_q below 1 are refused before any launch."""
    m = cutec.manifest(cubin("flash_attention_varlen_sm90"))
    attn, window = m.host("flash_attn_varlen_fwd").check, m.host("flash_attn_varlen_fwd_window").check

    def args(tq, tk, h, hkv, d, batch, dtype="bf16", lse=None, cu_k=None):
        q, o = view(0, (tq, h, d), dtype), view(3, (tq, h, d), dtype)
        k, v = view(1, (tk, hkv, d), dtype), view(2, (tk, hkv, d), dtype)
        cu_q = view(5, (batch + 1,), "i32")
        return q, k, v, o, lse or view(4, (h, tq), "f32"), cu_q, cu_k or view(6, (batch + 1,), "i32")

    kernels = set()
    for d, rows, threads in ((64, 192, 512), (128, 128, 384), (256, 128, 384)):
        for dtype in ("bf16", "f16"):
            for causal in (0, 1):
                (launch,) = attn(*args(5000, 3000, 8, 2, d, 7, dtype), 1000, 0.125, causal)
                assert launch["grid"] == (-(-1000 // rows) * 8 * 7, 1, 1) and launch["block"] == (threads, 1, 1)
                kernels.add(launch["kernel"])
                # The window (-1, 0) is causal attention, (-1, -1) full: the same launch.
                assert window(*args(5000, 3000, 8, 2, d, 7, dtype), 1000, 0.125, -1, causal - 1) == [launch]
    assert len(kernels) == 6
    for bad in (
        dict(h=6, hkv=4),  # query heads not a multiple of the K/V heads
        dict(d=96),  # head_dim
        dict(lse=view(4, (5000, 8), "f32")),  # LSE (total_q, heads)
        dict(cu_k=view(6, (7,), "i32")),  # 7 key offsets for 8 query offsets
    ):
        a = dict(tq=5000, tk=3000, h=8, hkv=2, d=64, batch=7) | bad
        refusal(lambda a=a: attn(*args(**a), 1000, 0.125, 1))
    refusal(lambda: attn(*args(5000, 3000, 8, 2, 64, 7), 0, 0.125, 1))  # max_seqlen_q 0
    refusal(lambda: attn(*args(5000, 3000, 8, 2, 64, 7), 1000, 0.125, 2))  # causal 2
    refusal(lambda: window(*args(5000, 3000, 8, 2, 64, 7), 1000, 0.125, -2, 0))


def test_flash_attention_varlen_bwd_plan(cubin):
    """Three launches per call (the pre-pass, the main kernel, dQ's post-pass) of the head dim's
    instances: grids over max_seqlen_q's 64-row slots (the pre-pass rounded to 128-row ranges) and
    max_seqlen_k's key blocks (128 keys, 64 at head dim 256), x heads (K/V heads for the main kernel)
    x batch; the workspaces must be (heads, R * D) and (heads, 2, R) with R = ceil(total_q / 128) *
    128 + 128 * batch."""
    bwd = cutec.manifest(cubin("flash_attention_varlen_bwd_sm90")).host("flash_attn_varlen_bwd").check

    def args(tq, tk, h, hkv, d, batch, rows=None):
        rows = rows or -(-tq // 128) * 128 + 128 * batch
        q, o, do, dq = (view(i, (tq, h, d), "bf16") for i in (0, 3, 4, 6))
        k, v, dk, dv = (view(i, (tk, hkv, d), "bf16") for i in (1, 2, 7, 8))
        ws = view(9, (h, rows * d), "f32"), view(10, (h, 2, rows), "f32")
        cu = view(11, (batch + 1,), "i32"), view(12, (batch + 1,), "i32")
        return q, k, v, o, do, view(5, (h, tq), "f32"), dq, dk, dv, *ws, *cu

    kernels = set()
    for d, keys in ((64, 128), (128, 128), (256, 64)):
        prep, main, post = bwd(*args(5000, 3000, 8, 2, d, 7), 1000, 900, 0.125, 1)
        assert prep["grid"] == (2 * -(-1000 // 128), 8, 7) and prep["block"] == (256, 1, 1)
        assert main["grid"] == (-(-900 // keys), 2, 7) and main["block"] == (384, 1, 1)
        assert post["grid"] == (-(-1000 // 64), 8, 7)
        kernels |= {prep["kernel"], main["kernel"], post["kernel"]}
    assert len(kernels) == 9
    refusal(lambda: bwd(*args(5000, 3000, 8, 2, 64, 7, rows=5000), 1000, 900, 0.125, 1))  # workspaces too small
    refusal(lambda: bwd(*args(5000, 3000, 8, 2, 64, 7), 1000, 0, 0.125, 1))  # max_seqlen_k 0


# ---- samples/flash_attention_decode_sm90.cute: split K/V for decoding ------------------------------


def test_flash_attention_decode_plan(cubin):
    """The split kernel's grid is (query tiles x splits) with one consumer warpgroup (256 threads),
    the splits those cutec.attention.decode_splits predicts (the SMs filled once, at most one a K
    tile and the workspace's first extent, none empty); the query heads of a K/V head packed into
    its 64-row tiles (heads / kv_heads x seqlen_q rows); one launch a call (more than one split is
    merged by each tile's last split); bad workspaces and too few tile counters are refused before
    any launch."""
    import cutec.attention

    m = cutec.manifest(cubin("flash_attention_decode_sm90"))
    dec = m.host("flash_attn_decode").check

    def args(b, sq, sk, h, hkv, d, most, acc=None):
        q, o = view(0, (b, sq, h, d), "bf16"), view(3, (b, sq, h, d), "bf16")
        k, v = view(1, (b, sk, hkv, d), "bf16"), view(2, (b, sk, hkv, d), "bf16")
        o_acc = view(5, acc or (most, b, sq, h, d), "f32")
        lse_acc = view(6, (most, b, h, sq), "f32")
        counters = view(8, (cutec.attention.decode_tiles(b, sq, h, hkv),), "i32")
        return q, k, v, o, view(4, (b, h, sq), "f32"), o_acc, lse_acc, view(7, (b,), "i32"), counters, 0.125, 0

    kernels = set()
    for b, sq, sk, h, hkv, d, most, tiles in (
        (1, 1, 8192, 32, 8, 128, 64, 8),  # packed: 8 K/V heads' tiles of 4 rows
        (4, 1, 30000, 64, 8, 64, 64, 32),
        (1, 1, 100000, 16, 1, 256, 300, 1),  # MQA: one tile of 16 rows, 132 splits
        (2, 3, 1000, 8, 2, 128, 64, 4),  # three queries of 4 heads: 12 rows a K/V head
        (1, 40, 1000, 8, 2, 128, 64, 6),  # 160 rows a K/V head: three tiles
        (64, 1, 4096, 32, 8, 128, 64, 512),  # enough tiles: one split
        (1, 1, 8192, 32, 8, 128, 5, 8),  # the workspace bounds the splits
        (1, 1, 700, 32, 32, 128, 64, 32),  # few K tiles bound them (MHA: a row a tile)
    ):
        splits = cutec.attention.decode_splits(b, sq, h, hkv, d, sk, most)
        (launch,) = dec(*args(b, sq, sk, h, hkv, d, most))
        assert launch["grid"] == (tiles * splits, 1, 1) and launch["block"] == (256, 1, 1), launch
        assert tiles == cutec.attention.decode_tiles(b, sq, h, hkv)
        kernels.add(launch["kernel"])
        k_tiles = -(-sk // (128 if d <= 128 else 80))
        assert 1 <= splits <= min(most, k_tiles) and (splits - 1) * -(-k_tiles // splits) < k_tiles
    assert cutec.attention.decode_splits(1, 1, 32, 8, 128, 8192) == 16
    # A sliding window splits the tiles its keys span: 4097 keys (34 tiles of 128 at most) over 32k.
    win = m.host("flash_attn_decode_window").check
    for window, want in (((4096, 0), 12), ((100, 0), 2), ((-1, -1), 16), ((-1, 0), 16)):
        a = args(1, 1, 32768, 32, 8, 128, 64)
        (launch,) = win(*a[:-1], *window)
        splits = cutec.attention.decode_splits(1, 1, 32, 8, 128, 32768, 64, window=window)
        assert splits == want and launch["grid"] == (8 * splits, 1, 1), (window, launch, splits)
    refusal(lambda: win(*args(1, 1, 512, 8, 2, 128, 4)[:-1], -2, 0))  # a side below -1
    assert len(kernels) == 3  # the split kernel at head dims 64, 128, 256 (bf16)
    # samples/flash_attention_decode_paged_sm90.cute's host: the same kernel loading its tiles in
    # 16-key boxes (128-key tiles, 64 at head dim 256) over max_pages x page_size keys a sequence.
    paged = cutec.manifest(cubin("flash_attention_decode_paged_sm90")).host("flash_attn_decode_paged").check
    kernels = set()
    for b, h, hkv, d, pages, page in ((1, 32, 8, 128, 64, 256), (4, 16, 2, 256, 30, 64), (2, 8, 8, 64, 500, 16)):
        a = list(args(b, 1, page, h, hkv, d, 132))
        a[1], a[2] = view(1, (200, page, hkv, d), "bf16"), view(2, (200, page, hkv, d), "bf16")
        a.insert(8, view(9, (b, pages), "i32"))
        (launch,) = paged(*a)
        splits = cutec.attention.decode_splits(b, 1, h, hkv, d, pages * page, 132, paged=True)
        tiles = cutec.attention.decode_tiles(b, 1, h, hkv)
        assert launch["grid"] == (tiles * splits, 1, 1), (launch, splits)
        assert (pages * page // (128 if d <= 128 else 64)) >= splits > 1
        kernels.add(launch["kernel"])
        a[1], a[2] = view(1, (200, 24, hkv, d), "bf16"), view(2, (200, 24, hkv, d), "bf16")
        refusal(lambda a=a: paged(*a))  # pages of 24 keys
    assert len(kernels) == 3  # the paged instances at head dims 64, 128 and 256 (bf16)
    refusal(lambda: dec(*args(1, 1, 512, 8, 2, 128, 4, acc=(4, 1, 1, 8, 64))))  # O_accum's head_dim
    refusal(lambda: dec(*args(1, 1, 512, 8, 2, 128, 0)))  # no split
    refusal(lambda: dec(*args(1, 1, 512, 6, 4, 128, 4)))  # 6 query heads over 4 K/V heads
    refusal(lambda: dec(*args(1, 1, 512, 8, 2, 128, 4)[:-1], 2))  # causal 2
    a = list(args(2, 1, 512, 8, 2, 128, 4))
    a[8] = view(8, (3,), "i32")  # 4 query tiles
    refusal(lambda: dec(*a))


# ---- samples/gemm_sm90_persistent.cute: the tile each call gets ------------------------------------


def clustered_kernels(m, shape):
    """The kernels of manifest `m` compiled for thread-block clusters of `shape` (x, y, z): their
    manifest blocks have a `cluster X Y Z` line."""
    line = "\ncluster {} {} {}\n".format(*shape)
    return {b.split("\n", 1)[0] for b in m.text.split("\nkernel ")[1:] if line in b}


def gemm90_views(layout, M, N, K, dtype):
    """The logical A (M,K), B (N,K) and C (M,N) of a gemm_sm90* host function for `layout` (T: K-major,
    N: M-/N-major; first letter A, second B), at fake addresses."""
    a = view(0, (M, K), dtype) if layout[0] == "t" else view(0, (M, K), dtype, (1, M))
    b = view(1, (N, K), dtype) if layout[1] == "n" else view(1, (N, K), dtype, (1, N))
    return a, b, view(2, (M, N), dtype)


def test_gemm_sm90_persistent_plan(cubin):
    """One launch per call: the tile of the rule in the sample's header (128x64 for N <= 64; else
    the first of 128x256 (N > 128 only) and 128x128 that makes at least 66 tiles, half the H100's
    132 SMs; else 64x128; 128x192 where 128x256 makes one wave at most and 128x192 too), one
    instance per layout, dtype and tile, a grid of min(tiles, 132)
    blocks, 384 threads (256 for the one consumer warpgroup of 64x128), and the shared memory of
    the tile's ring and staging tile. The shapes are issue 31's categories (bench.GEMM_CATEGORIES),
    whose best tiles the lead measured with gemm_sm90.cute, and tails."""
    m = cutec.manifest(cubin("gemm_sm90_persistent"))
    layouts, dtypes = ("tn", "nt", "nn", "tt"), ("bf16", "f16")
    assert sorted(m.hosts) == sorted(f"gemm_{lo}_{d}" for lo in layouts for d in dtypes)
    # (stages x (BM + BN) x 64 x 2 bytes of ring) + BM x BN x 2 of staging + 1024 of barriers.
    smem = {(128, 256): 3 * 49152 + 65536 + 1024, (128, 128): 6 * 32768 + 32768 + 1024}
    smem |= {(64, 128): 8 * 24576 + 16384 + 1024, (128, 64): 8 * 24576 + 16384 + 1024}
    smem |= {(128, 192): 4 * 40960 + 49152 + 1024}
    cases = [
        ((768, 768, 768), (64, 128), 72),
        ((1000, 1000, 1000), (64, 128), 128),
        ((1536, 1536, 1536), (128, 192), 96),  # 128x256 would be one wave of 72: 128x192, one of 96
        ((2048, 1536, 2048), (128, 192), 128),
        ((2048, 2048, 2048), (128, 256), 128),  # 128x192 would make 176 tiles (two waves)
        ((4096, 4096, 4096), (128, 256), 512),
        ((8200, 8200, 8192), (128, 256), 2145),
        ((16, 4096, 4096), (64, 128), 32),
        ((256, 8192, 4096), (128, 128), 128),
        ((8192, 256, 4096), (128, 128), 128),
        ((4096, 96, 4096), (64, 128), 64),
        ((16384, 128, 64), (128, 128), 128),
        ((20000, 120, 136), (128, 128), 157),
        ((8192, 64, 8192), (128, 64), 64),
        ((4096, 16, 4096), (128, 64), 32),
        ((17000, 64, 72), (128, 64), 133),
    ]
    instances = {}
    for layout in layouts:
        for dtype in dtypes:
            host = m.host(f"gemm_{layout}_{dtype}")
            for shape, tile, tiles in cases:
                (launch,) = host.check(*gemm90_views(layout, *shape, dtype))
                assert launch["grid"] == (min(tiles, 132), 1, 1), (layout, shape)
                assert launch["block"] == (384 if tile[0] == 128 else 256, 1, 1), (layout, shape)
                assert launch["smem"] == smem[tile] <= 232448, (layout, shape)
                instances.setdefault((layout, dtype, tile), set()).add(launch["kernel"])
            # TMA's 16-byte strides: C's N, and K of a K-major operand, multiples of 8.
            refusal(host.check, *gemm90_views(layout, 1000, 7, 128, dtype))
            if layout != "nt":
                refusal(host.check, *gemm90_views(layout, 64, 64, 7, dtype))
    assert all(len(k) == 1 for k in instances.values()) and len(instances) == 40
    assert set().union(*instances.values()) == set(m.kernels)


# ---- samples/gemm_sm90_persistent_multicast.cute: clusters of 2 where pairs are many -------------


def test_gemm_sm90_persistent_multicast_plan(cubin):
    """The plain persistent kernel's tile rule, then for 128x256 and 128x128 tiles with at least 132
    pairs of tiles (M tiles rounded up to pairs x N tiles: two waves of 66 clusters) the multicast
    instance where the rows of A or B (their non-unit stride) are not a multiple of 64 elements
    (128 bytes), in clusters of 2 (its manifest block says `cluster 2 1 1`), a grid of 2 x min(pairs,
    66) blocks, 384 threads and the plain tile's shared memory; every other call the plain instance
    with gemm_sm90_persistent.cute's launch (grid min(tiles, 132), no cluster). The same host
    functions as gemm_sm90_persistent.cute; one instance per layout, dtype, tile and kind."""
    m = cutec.manifest(cubin("gemm_sm90_persistent_multicast"))
    assert sorted(m.hosts) == sorted(cutec.manifest(cubin("gemm_sm90_persistent")).hosts)
    clustered = clustered_kernels(m, (2, 1, 1))
    assert clustered == {k for k in m.kernels if k.startswith("gemm_persistent_multicast")}
    smem = {(128, 256): 3 * 49152 + 65536 + 1024, (128, 128): 6 * 32768 + 32768 + 1024}
    smem |= {(64, 128): 8 * 24576 + 16384 + 1024, (128, 64): 8 * 24576 + 16384 + 1024}
    cases = [  # (M, N, K), tile, tiles, pairs (None: the plain kernel)
        ((33544, 72, 8), (128, 128), 263, 132),  # 263 M tiles: the last pair padded
        ((33416, 72, 8), (128, 128), 262, None),  # 131 pairs: one short
        ((40000, 128, 136), (128, 128), 313, 157),
        ((34000, 96, 64), (128, 128), 266, 133),
        ((3072, 3072, 3072), (128, 256), 288, 144),
        ((4096, 4096, 512), (128, 256), 512, 256),
        ((3912, 4096, 1000), (128, 256), 496, 256),  # 31 M tiles: 16 pairs per N tile
        ((8200, 8200, 136), (128, 256), 2145, 1089),
        ((8192, 8192, 8192), (128, 256), 2048, 1024),  # rows aligned: the plain kernel
        ((8192, 8192, 8200), (128, 256), 2048, 1024),  # TN, TT: K-major rows of 16400 bytes
        ((2816, 2816, 1024), (128, 256), 242, None),  # 121 pairs
        ((2048, 2048, 2048), (128, 256), 128, None),
        ((20000, 120, 136), (128, 128), 157, None),  # 79 pairs
        ((1000, 1000, 1000), (64, 128), 128, None),
        ((128, 8192, 8192), (64, 128), 128, None),
        ((8192, 64, 8192), (128, 64), 64, None),
        ((17000, 64, 72), (128, 64), 133, None),
    ]
    instances = {}
    for layout in ("tn", "nt", "nn", "tt"):
        for dtype in ("bf16", "f16"):
            host = m.host(f"gemm_{layout}_{dtype}")
            for shape, tile, tiles, pairs in cases:
                M, N, K = shape
                # The contiguous extents: K for a K-major operand (T), M or N else.
                aligned = (K if layout[0] == "t" else M) % 64 == 0 and (K if layout[1] == "n" else N) % 64 == 0
                (launch,) = host.check(*gemm90_views(layout, *shape, dtype))
                multicast = launch["kernel"] in clustered
                assert multicast == (pairs is not None and not aligned), (layout, shape)
                grid = 2 * min(pairs, 66) if multicast else min(tiles, 132)
                assert launch["grid"] == (grid, 1, 1), (layout, shape)
                assert launch["block"] == (384 if tile[0] == 128 else 256, 1, 1), (layout, shape)
                assert launch["smem"] == smem[tile] <= 232448, (layout, shape)
                instances.setdefault((layout, dtype, tile, multicast), set()).add(launch["kernel"])
            refusal(host.check, *gemm90_views(layout, 1000, 7, 128, dtype))
    assert all(len(k) == 1 for k in instances.values()) and len(instances) == 48
    assert set().union(*instances.values()) == set(m.kernels)


# ---- samples/gemm_sm90_pingpong.cute: the ping-pong schedule's tile and grid --------------------


def test_gemm_sm90_pingpong_plan(cubin):
    """The ping-pong kernel's tile rule, per consumer warpgroup (the sample's library): 128x64 for
    N <= 64; else 128x128 where that makes at least 132 tiles; else 64x128. One launch per call, a
    grid of min(tiles, 132) blocks, 384 threads (a producer and two consumer warpgroups whatever the
    tile), and the shared memory of the tile's ring (8, 5 and 8 stages) beside two staging tiles.
    The same host functions as gemm_sm90_persistent.cute; one instance per layout, dtype and tile."""
    m = cutec.manifest(cubin("gemm_sm90_pingpong"))
    assert sorted(m.hosts) == sorted(cutec.manifest(cubin("gemm_sm90_persistent")).hosts)
    # stages x (BM + BN) x 64 x 2 bytes of ring + 2 x BM x BN x 2 of staging + 1024 of barriers.
    smem = {(128, 128): 5 * 32768 + 65536 + 1024}
    smem |= {(64, 128): 8 * 24576 + 32768 + 1024, (128, 64): 8 * 24576 + 32768 + 1024}
    cases = [
        ((8, 8, 8), (128, 64), 1),
        ((128, 128, 64), (64, 128), 2),
        ((1000, 1000, 1000), (64, 128), 128),
        ((1064, 1064, 1000), (64, 128), 153),
        ((16, 4096, 4096), (64, 128), 32),
        ((16384, 128, 4096), (64, 128), 256),  # 128 tiles of 128x128: one short
        ((17024, 128, 72), (128, 128), 133),
        ((33920, 128, 136), (128, 128), 265),
        ((1536, 1536, 1536), (128, 128), 144),
        ((4096, 4096, 4096), (128, 128), 1024),
        ((8200, 8200, 136), (128, 128), 4225),
        ((8192, 64, 8192), (128, 64), 64),
        ((17000, 64, 72), (128, 64), 133),
    ]
    instances = {}
    for layout in ("tn", "nt", "nn", "tt"):
        for dtype in ("bf16", "f16"):
            host = m.host(f"gemm_{layout}_{dtype}")
            for shape, tile, tiles in cases:
                (launch,) = host.check(*gemm90_views(layout, *shape, dtype))
                assert launch["grid"] == (min(tiles, 132), 1, 1), (layout, shape)
                assert launch["block"] == (384, 1, 1), (layout, shape)
                assert launch["smem"] == smem[tile] <= 232448, (layout, shape)
                instances.setdefault((layout, dtype, tile), set()).add(launch["kernel"])
            # TMA's 16-byte strides: C's N, and K of a K-major operand, multiples of 8.
            refusal(host.check, *gemm90_views(layout, 1000, 7, 128, dtype))
            if layout != "nt":
                refusal(host.check, *gemm90_views(layout, 64, 64, 7, dtype))
    assert all(len(k) == 1 for k in instances.values()) and len(instances) == 24
    assert set().union(*instances.values()) == set(m.kernels)


# ---- samples/gemm_sm90_fp8_persistent{,_fast}.cute: the FP8 GEMM's persistent launches --------------


def test_gemm_sm90_fp8_persistent_plan(cubin):
    """gemm_sm90_fp8.cute's host functions on the persistent kernel, promoting (torch._scaled_mm's
    default; gemm_sm90_fp8_persistent.cute), and their *_fast_accum twins (wgmma's accumulator
    only; gemm_sm90_fp8_persistent_fast.cute): one launch each, a grid of min(tiles, 132) blocks of
    384 threads, 128x256 tiles (the promotion's temporary covers half the tile), a ring of 48 KiB
    stages (128 bytes of K), three beside a 64 KiB staging tile (bf16/f16, or an f32 C's column
    half: it stages the tile in two halves). One instance per type triple (row-wise: e4m3 x e4m3 x bf16/f16) in each file, and the same
    refusals as the non-persistent file (K a multiple of 16, C's N of 8 (4 for f32), C M x N, the
    scales' lengths)."""
    files = {
        "": cutec.manifest(cubin("gemm_sm90_fp8_persistent")),
        "_fast_accum": cutec.manifest(cubin("gemm_sm90_fp8_persistent_fast")),
    }
    plain = cutec.manifest(cubin("gemm_sm90_fp8")).hosts
    fp8 = ("f8e4m3", "f8e5m2")
    smem = {tc: 3 * 49152 + 65536 + 1024 for tc in ("bf16", "f16", "f32")}
    # (M, N, K), its 128x256 tiles
    cases = [((4096, 4096, 4096), 512), ((2048, 4096, 512), 256), ((2000, 4104, 272), 272), ((1000, 1000, 1024), 32)]
    one = view(3, (1,), "f32")
    for suffix, m in files.items():
        assert sorted(m.hosts) == sorted(f"{h}{suffix}" for h in plain)
        instances = set()
        for ta in fp8:
            for tb in fp8:
                for tc in ("bf16", "f16", "f32"):
                    host = m.host(("gemm_tn_fp8_f32" if tc == "f32" else "gemm_tn_fp8") + suffix)
                    for (M, N, K), tiles in cases:
                        args = (view(0, (M, K), ta), view(1, (N, K), tb), view(2, (M, N), tc), one, one)
                        (launch,) = host.check(*args)
                        assert launch["grid"] == (min(tiles, 132), 1, 1), (suffix, ta, tb, tc, M, N, K)
                        assert launch["block"] == (384, 1, 1)
                        assert launch["smem"] == smem[tc] <= 232448, (suffix, tc)
                        instances.add(launch["kernel"])
                    refusal(host.check, view(0, (64, 24), ta), view(1, (64, 24), tb), view(2, (64, 64), tc), one, one)
                    refusal(host.check, view(0, (64, 32), ta), view(1, (62, 32), tb), view(2, (64, 62), tc), one, one)
                    refusal(host.check, view(0, (64, 32), ta), view(1, (64, 32), tb), view(2, (32, 64), tc), one, one)
        rowwise = m.host("gemm_tn_fp8_rowwise" + suffix)
        M, N, K = 2000, 4104, 272
        for tc in ("bf16", "f16"):
            a, b, c = view(0, (M, K), "f8e4m3"), view(1, (N, K), "f8e4m3"), view(2, (M, N), tc)
            (launch,) = rowwise.check(a, b, c, view(3, (M,), "f32"), view(4, (N,), "f32"))
            assert (launch["grid"], launch["smem"]) == ((132, 1, 1), smem[tc])
            instances.add(launch["kernel"])
            assert "scale_a" in refusal(rowwise.check, a, b, c, view(3, (M - 1,), "f32"), view(4, (N,), "f32"))
            assert "scale_b" in refusal(rowwise.check, a, b, c, view(3, (M,), "f32"), view(4, (N + 1,), "f32"))
        assert len(instances) == 14 and instances == set(m.kernels), suffix


def test_gemm_sm90_grouped_plan(cubin):
    """The persistent grouped (MoE) GEMM, B K-major (TN, also FP8) or N-major (TT), and the groups along K: one launch of min(virtual tiles, 132) blocks of 384
    threads, the virtual tiles (ceil(M / 128) + E) x ceil(N / 256), a ring of three 48 KiB stages
    beside C's padded staging tile and the groups' table (512 x 4 i32); at most 512 groups, one per
    row end of `offs`, and B's K that of A."""
    m = cutec.manifest(cubin("gemm_sm90_grouped"))
    smem = 3 * 49152 + 128 * 264 * 2 + 512 * 16 + 1024

    def weights(layout, E, N, K, dtype):  # B (E, N, K): K-major, or the N-major view of (E, K, N)
        return view(1, (E, N, K), dtype, strides=(N * K, K, 1) if layout == "tn" else (N * K, 1, N))

    for layout, dtype in itertools.product(("tn", "tt"), ("bf16", "f16")):
        host = m.host(f"gemm_grouped_{layout}")
        # 128-row tiles, or 64-row ones (one consumer warpgroup, four stages) where M <= 64 E.
        for (M, N, K, E), tiles, bm in (
            ((16384, 4096, 4096, 8), (128 + 8) * 16, 128),
            ((300, 264, 72, 4), (3 + 4) * 2, 128),
            ((100, 264, 72, 4), (2 + 4) * 2, 64),
            ((65, 256, 64, 1), 2, 128),
            ((4096, 256, 256, 512), 64 + 512, 64),
            ((64, 256, 64, 1), 2, 64),
        ):
            args = (
                view(0, (M, K), dtype),
                weights(layout, E, N, K, dtype),
                view(2, (M, N), dtype),
                view(3, (E,), "i32"),
            )
            (launch,) = host.check(*args)
            assert launch["grid"] == (min(tiles, 132), 1, 1), (layout, M, N, K, E)
            assert launch["block"] == (128 * (bm // 64 + 1), 1, 1)
            assert launch["smem"] == (smem if bm == 128 else 4 * 40960 + 64 * 264 * 2 + 512 * 16 + 1024) <= 232448
        a, c = view(0, (4096, 256), dtype), view(2, (4096, 256), dtype)
        assert "512 groups" in refusal(host.check, a, weights(layout, 513, 256, 256, dtype), c, view(3, (513,), "i32"))
        assert "offs" in refusal(host.check, a, weights(layout, 8, 256, 256, dtype), c, view(3, (7,), "i32"))
        assert "same K" in refusal(host.check, a, weights(layout, 8, 256, 128, dtype), c, view(3, (8,), "i32"))
        # Each host function takes its own majorness of B and no other.
        other = weights("tt" if layout == "tn" else "tn", 8, 256, 256, dtype)
        refusal(host.check, a, other, c, view(3, (8,), "i32"))
    # FP8 e4m3 with row-wise scales: the same schedule and shared memory (a stage is 128 bytes of K).
    for out, accum in itertools.product(("bf16", "f16"), ("", "_fast_accum")):
        host = m.host(f"gemm_grouped_fp8_tn{accum}")
        M, N, K, E = 16384, 4096, 4096, 8
        a, b, c = view(0, (M, K), "f8e4m3"), view(1, (E, N, K), "f8e4m3"), view(2, (M, N), out)
        offs, sa, sb = view(3, (E,), "i32"), view(4, (M,), "f32"), view(5, (E, N), "f32")
        (launch,) = host.check(a, b, c, offs, sa, sb)
        assert launch["grid"] == (132, 1, 1) and launch["block"] == (384, 1, 1) and launch["smem"] == smem
        assert "scale_a" in refusal(host.check, a, b, c, offs, view(4, (M - 1,), "f32"), sb)
        assert "scale_b" in refusal(host.check, a, b, c, offs, sa, view(5, (E, N - 8), "f32"))
        refusal(host.check, view(0, (M, 4104), "f8e4m3"), view(1, (E, N, 4104), "f8e4m3"), c, offs, sa, sb)  # K % 16
    # Groups along K (the weight gradient): E x M tiles x N tiles, A (M, Ktot) and B (N, Ktot)
    # MN-major, C (E, M, N).
    for dtype in ("bf16", "f16"):
        host = m.host("gemm_grouped_k_nt")
        for (M, N, KT, E), tiles in (
            ((4096, 4096, 16384, 8), 8 * 32 * 16),
            ((264, 72, 400, 4), 4 * 3),
            ((8, 64, 320, 64), 64),
        ):
            args = (
                view(0, (M, KT), dtype, strides=(1, M)),
                view(1, (N, KT), dtype, strides=(1, N)),
                view(2, (E, M, N), dtype),
                view(3, (E,), "i32"),
            )
            (launch,) = host.check(*args)
            assert launch["grid"] == (min(tiles, 132), 1, 1), (M, N, KT, E)
            assert launch["block"] == (384, 1, 1) and launch["smem"] == smem
        a, b = view(0, (256, 512), dtype, strides=(1, 256)), view(1, (128, 512), dtype, strides=(1, 128))
        assert "(E, M, N)" in refusal(host.check, a, b, view(2, (3, 256, 128), dtype), view(3, (4,), "i32"))
        assert "same K_total" in refusal(
            host.check,
            a,
            view(1, (128, 500), dtype, strides=(1, 128)),
            view(2, (4, 256, 128), dtype),
            view(3, (4,), "i32"),
        )
        assert "512 groups" in refusal(host.check, a, b, view(2, (513, 256, 128), dtype), view(3, (513,), "i32"))
        refusal(
            host.check, view(0, (256, 512), dtype), b, view(2, (4, 256, 128), dtype), view(3, (4,), "i32")
        )  # K-major A


# ---- samples/gemm_sm90_splitk.cute: the split each call gets ----------------------------------------


SPLITK_WORKSPACE = 132 * 128 * 128  # f32 elements of W the sample asks for (its header)


def test_gemm_sm90_splitk_plan(cubin):
    """The launches of each path of the sample's rule (its header): where N or M is at most 64, at most
    66 tiles of 64x64 and K has 32 k-tiles, the whole problem in 64x64 tiles split in clusters (8
    slices up to 15 tiles, 4 up to 30, else 2: the clusters the H100 holds at once; in clusters of 2
    with N at most 16 or 32, 64x16 or 64x32 tiles, split from 24 k-tiles on; with M at most 16 or 32
    and N above 32, the same narrow tiles of C^T = B A^T, the operands swapped and C stored
    transposed), one launch on a (tiles, splits) grid in clusters of (1, splits), the ring and the
    reduction's padded f32 tile in shared memory; split-K of the whole problem through the workspace
    where M and N exceed 64, few tiles and a long K (128x128 tiles; splits: the largest of 16, 12,
    8, 6, 4, 3, 2 with blocks x splits <= 132 and 4 k-tiles a slice, where 64x128 makes at most 33
    tiles and K has 32 k-tiles): the partial kernel on a (blocks, splits) grid with the ring alone
    in shared memory, then the reduction, a thread per 8 elements of the split tiles; else the tile
    of least estimated time (waves x the tile's cost; 128x256, 128x192, 128x128, 64x128, 64x64 where
    N > 128, or 64x64 for N <= 64) for the persistent kernel, on every tile, or (128x256 and 128x128
    tiles) on the full waves and split-K on the last wave's tiles (128x256 ones as two 128x128
    halves) where that wave's split tiles fit 132 eight times, there are two full waves before it
    and K has 16 k-tiles. Checks the tiles each launch covers (the persistent kernel's tile_end, the
    split launches' first tile and parts), that blocks x splits partial tiles fit the fixed
    workspace, which kernels run in clusters, and that a smaller workspace is refused on every
    shape."""
    m = cutec.manifest(cubin("gemm_sm90_splitk"))
    layouts, dtypes = ("tn", "nt", "nn", "tt"), ("bf16", "f16")
    # The kernel instances compiled for clusters of (1, splits): their manifest blocks say so.
    clustered = {n: clustered_kernels(m, (1, n, 1)) for n in (2, 4, 8)}
    assert sorted(m.hosts) == sorted(f"gemm_{lo}_{d}" for lo in layouts for d in dtypes)
    # The split kernel: stages x (BM + BN) x 64 x 2 bytes of ring + 1024 of barriers: 7 stages.
    split_smem = {(128, 128): 7 * 32768 + 4 + 1024}  # + the one word that stands for the cluster's tile
    # In clusters: 13 (clusters of 2) or 8 stages of 64x64 + the (64, 64):(72, 1) f32 tile (4,600
    # words) + the barriers.
    cluster_smem = {n: (13 if n == 2 else 8) * 16384 + 4 * 4600 + 1024 for n in (2, 4, 8)}
    # Narrow tiles (64x16, 64x32; B K-major, N <= 16 or 32, clusters of 2): 16 stages of (64 + bn)
    # x 64 x 2 bytes + the (64, bn):(bn + 8, 1) f32 tile + the barriers.
    narrow_smem = {bn: 16 * (64 + bn) * 128 + 4 * (63 * (bn + 8) + bn) + 1024 for bn in (16, 32)}
    # The persistent kernel: its ring, the staging tile and the barriers.
    smem = {(128, 256): 3 * 49152 + 65536 + 1024, (128, 128): 6 * 32768 + 32768 + 1024}
    smem |= {(64, 128): 8 * 24576 + 16384 + 1024, (64, 64): 8 * 16384 + 8192 + 1024}
    smem |= {(128, 192): 4 * 40960 + 49152 + 1024}

    def split(tile, blocks, splits):  # the whole problem split: no persistent launch
        return None, 0, (tile, 0, blocks, 1, splits)

    def persistent(tile, tiles):  # the persistent kernel on every tile
        return tile, tiles, None

    def cluster(blocks, splits):  # 64x64 tiles split in clusters of (1, splits): one launch
        return None, 0, (blocks, splits)

    def narrow(blocks, bn):  # 64 x bn tiles in clusters of 2
        return None, 0, (blocks, 2, bn, False)

    def narrow_t(blocks, bn):  # C^T = B A^T in 64 x bn tiles in clusters of 2
        return None, 0, (blocks, 2, bn, True)

    cases = [  # (M, N, K), (persistent tile or None, its tile_end, (split tile, first, blocks, parts, splits) or (blocks, splits) or None)
        ((16, 4096, 4096), narrow_t(64, 16)),
        ((32, 4096, 4096), narrow_t(64, 32)),
        ((24, 4104, 2104), narrow_t(65, 32)),  # tails in M, N and K
        ((1, 2056, 4096), narrow_t(33, 16)),
        ((40, 4096, 4096), cluster(64, 2)),  # M > 32: 64x64
        ((128, 4096, 4096), persistent((64, 64), 128)),  # 64 tiles of 64x128: more than a quarter wave
        ((64, 8192, 8192), persistent((64, 64), 128)),
        ((4096, 16, 4096), narrow(64, 16)),
        ((2056, 16, 4096), narrow(33, 16)),  # 33 tiles: one more than 30 clusters of 4; a tail in M
        ((4096, 32, 4096), narrow(64, 32)),
        ((4096, 40, 4096), cluster(64, 2)),  # N > 32: 64x64
        ((960, 16, 4096), cluster(15, 8)),  # 15 tiles: clusters of 8, 64x64
        ((8192, 64, 8192), persistent((64, 64), 128)),
        ((4096, 96, 4096), persistent((64, 128), 64)),  # N <= 128: not 64x64 (A loaded twice)
        ((4096, 64, 4096), cluster(64, 2)),
        ((4224, 64, 4096), cluster(66, 2)),
        ((4104, 24, 2104), narrow(65, 32)),  # tails in M, N and K (33 k-tiles), taken in every layout
        ((4288, 64, 4096), persistent((64, 64), 67)),  # 67 tiles of 64x64: more than 66 clusters
        ((768, 768, 768), persistent((64, 128), 72)),  # 12 k-tiles: K too short to split (below 32)
        ((1, 8, 4096), cluster(1, 8)),  # one tile: 8 slices of 8 k-tiles
        ((127, 1000, 1000), persistent((64, 64), 32)),  # 16 k-tiles
        ((127, 1000, 2100), split((128, 128), 8, 8)),  # K not a multiple of the k-tile
        ((127, 1000, 2048), split((128, 128), 8, 8)),
        ((256, 1000, 4096), split((128, 128), 16, 8)),
        ((1000, 8, 4096), cluster(16, 4)),  # 16 tiles: one more than 15 clusters of 8
        ((16, 2048, 4096), narrow_t(32, 16)),  # 32 tiles: two more than 30 clusters of 4
        ((16, 1024, 4096), cluster(16, 4)),
        ((16, 960, 4096), cluster(15, 8)),
        ((16, 1536, 4096), cluster(24, 4)),
        ((256, 2048, 4096), persistent((64, 64), 128)),
        ((16, 2560, 4096), narrow_t(40, 16)),
        ((16, 4160, 4096), narrow_t(65, 16)),
        ((16, 4288, 4096), persistent((64, 64), 67)),  # 67 tiles of 64x64: more than 66 clusters of 2
        ((16, 4096, 2600), narrow_t(64, 16)),  # 41 k-tiles: slices of 20 and 21
        ((16, 4096, 2048), narrow_t(64, 16)),  # 32 k-tiles: the shortest K split
        ((16, 4096, 1984), narrow_t(64, 16)),  # 31 k-tiles: narrow tiles split from 24
        ((16, 4096, 1536), narrow_t(64, 16)),
        ((16, 4096, 1472), persistent((64, 64), 64)),  # 23 k-tiles
        ((4096, 16, 1536), narrow(64, 16)),
        ((4096, 40, 1984), persistent((64, 64), 64)),  # 64x64 clusters split from 32 k-tiles
        ((1000, 8, 1984), persistent((64, 64), 16)),  # 16 tiles: clusters of 4, from 32 k-tiles
        ((16, 4096, 128), persistent((64, 64), 64)),
        ((1000, 1000, 1000), persistent((64, 128), 128)),  # 128 tiles of 64x128: one wave
        ((1024, 1024, 1024), persistent((64, 128), 128)),
        ((128, 8192, 8192), persistent((64, 128), 128)),
        ((2048, 2048, 2048), persistent((128, 256), 128)),
        ((4096, 4096, 128), persistent((128, 256), 512)),  # 3.9 waves: the last one too full to split
        ((4096, 4096, 4096), persistent((128, 256), 512)),
        ((8192, 8192, 8192), persistent((128, 256), 2048)),  # a last wave of 68 tiles: 136 halves
        ((5000, 5000, 960), persistent((128, 128), 1600)),  # 15 k-tiles: 13 waves of 128x128 < 7 of 128x256
        ((20000, 120, 136), persistent((128, 128), 157)),  # 2 waves of 128x128 < 3 of 64x128
        # The full waves, then the last wave's tiles split (first = the full waves' tiles).
        ((5000, 5000, 5000), ((128, 256), 792, ((128, 128), 792, 16, 2, 8))),  # 6 waves + 8 tiles
        ((5000, 5000, 1024), ((128, 256), 792, ((128, 128), 792, 16, 2, 4))),  # 16 k-tiles
        ((8200, 8200, 8200), persistent((128, 256), 2145)),  # a last wave of 33 tiles: 66 halves, too many
        ((8200, 8200, 1000), persistent((128, 256), 2145)),
        ((2824, 5768, 1000), ((128, 256), 528, ((128, 128), 528, 2, 2, 4))),  # a last wave of one tile
        ((6728, 520, 1000), ((128, 128), 264, ((128, 128), 264, 1, 1, 4))),  # a last wave of one tile
        ((1536, 1536, 1536), persistent((128, 192), 96)),  # one wave of 96, where 128x256 makes one of 72
        ((2048, 1536, 2048), persistent((128, 192), 128)),
        ((1496, 1544, 1000), persistent((128, 192), 108)),  # tails in M, N and K
        ((3072, 3072, 3072), persistent((128, 192), 384)),  # 3 waves, as 128x256's 288 tiles
        ((3000, 5000, 2000), persistent((128, 256), 480)),  # 4 waves, where 128x192 takes 5
        ((1000, 1064, 1000), persistent((128, 128), 72)),
        ((17000, 64, 1024), persistent((64, 64), 266)),  # two full waves, 2 tiles: 64x64 is never split
    ]
    instances = {}
    for layout in layouts:
        for dtype in dtypes:
            host = m.host(f"gemm_{layout}_{dtype}")
            ws = view(3, (SPLITK_WORKSPACE,), "f32")
            for (M, N, K), (head, tile_end, tail) in cases:
                # TMA's 16-byte strides: the contiguous extent of each operand a multiple of 8.
                a_row, b_row = (K if layout[0] == "t" else M), (K if layout[1] == "n" else N)
                if a_row % 8 or b_row % 8:
                    refusal(host.check, *gemm90_views(layout, M, N, K, dtype), ws)
                    continue
                launches = host.check(*gemm90_views(layout, M, N, K, dtype), ws)
                at = (layout, M, N, K)
                if tail is not None and len(tail) in (2, 4):
                    (blocks, splits) = tail[:2]
                    # Narrow (64, bn) tiles; where M is the skinny side the operands swapped and
                    # C transposed: the kernel's A is B (K-major "t" where B is "n") and its B is A
                    # (N-major "t" where A is M-major "n").
                    bn, transposed = tail[2:] if len(tail) == 4 else (64, False)
                    swap = {"t": "n", "n": "t"}
                    kernel_layout = swap[layout[1]] + swap[layout[0]] if transposed else layout
                    [launch] = launches
                    assert launch["kernel"] in clustered[splits], at
                    assert launch["grid"] == (blocks, splits, 1) and blocks <= {2: 66, 4: 30, 8: 15}[splits], at
                    smem_of = cluster_smem[splits] if bn == 64 else narrow_smem[bn]
                    assert launch["block"] == (256, 1, 1) and launch["smem"] == smem_of, at
                    assert launch["args"][-3:] == [("i32", 0), ("i32", 1), ("i32", int(transposed))], at
                    # The kernel's A: B's memory where swapped (fake addresses: A 0, B 1).
                    assert launch["args"][0] == ("ptr", fake_ptr(int(transposed))), at
                    instances.setdefault(("cluster", kernel_layout, dtype, splits, bn), set()).add(launch["kernel"])
                    continue
                assert len(launches) == (head is not None) + 2 * (tail is not None), at
                if head is not None:
                    (bm, bn) = head
                    launch = launches[0]
                    assert launch["kernel"].startswith("gemm_persistent_head"), at
                    assert launch["grid"] == (min(tile_end, 132), 1, 1), at
                    assert launch["block"] == (384 if bm == 128 else 256, 1, 1), at
                    assert launch["smem"] == smem[bm, bn] <= 232448, at
                    assert launch["args"][-1] == ("i32", tile_end), at
                    instances.setdefault(("head", layout, dtype, (bm, bn)), set()).add(launch["kernel"])
                if tail is not None:
                    ((bm, bn), first, blocks, parts, splits) = tail
                    partial, reduce = launches[-2:]
                    assert partial["kernel"].startswith("gemm_splitk_partial"), at
                    assert partial["grid"] == (blocks, splits, 1), at
                    assert partial["block"] == (384 if bm == 128 else 256, 1, 1), at
                    assert partial["smem"] == split_smem[bm, bn] <= 232448, at
                    assert partial["args"][-3:] == [("i32", first), ("i32", parts), ("i32", 0)], at
                    assert blocks * splits <= 132 and blocks * splits * bm * bn <= SPLITK_WORKSPACE, at
                    # The split tiles are the schedule's last ones, those the persistent kernel left.
                    sm, sn = head or (bm, bn)
                    assert first == tile_end and first + blocks // parts == -(-M // sm) * -(-N // sn), at
                    assert reduce["kernel"].startswith("splitk_reduce") and reduce["block"] == (256, 1, 1), at
                    assert reduce["grid"] == (blocks * bm * bn // 8 // 256, 1, 1), at
                    assert reduce["args"][-3:] == [("i32", splits), ("i32", first), ("i32", parts)], at
                    instances.setdefault(("partial", layout, dtype, (bm, bn)), set()).add(partial["kernel"])
                    instances.setdefault(("reduce", dtype, (bm, bn)), set()).add(reduce["kernel"])
            # The workspace: at least SPLITK_WORKSPACE f32, also where the call does not split.
            for shape in ((16, 4096, 4096), (4096, 4096, 4096), (5000, 5000, 5000)):
                small = view(3, (SPLITK_WORKSPACE - 1,), "f32")
                assert "workspace" in refusal(host.check, *gemm90_views(layout, *shape, dtype), small)
            # TMA's 16-byte strides, as the persistent kernel's.
            refusal(host.check, *gemm90_views(layout, 1000, 7, 128, dtype), ws)
    # One instance per layout (of the kernel's operands), dtype and tile (or cluster): 40
    # persistent, 8 split through the workspace, 2 reductions and 40 split in clusters (64x64 in
    # clusters of 2, 4 and 8, 64x16 and 64x32 in clusters of 2, in every layout). Skinny M swapped
    # takes the narrow instance of the swapped operands' layout (TT's is NN's: C is transposed at
    # run time, not in the instance).
    assert all(len(k) == 1 for k in instances.values())
    kinds = [key[0] for key in instances]
    counts = [kinds.count(kind) for kind in ("head", "partial", "reduce", "cluster")]
    assert counts == [40, 8, 2, 40], counts
    assert set().union(*instances.values()) == set(m.kernels)


# ---- samples/gemm_sm90_multicast.cute: whole 2x1 clusters -------------------------------------------


def test_gemm_sm90_multicast_plan(cubin):
    """One launch per call of the 128x256 TN kernel in clusters of 2 blocks (M tiles 2i and 2i+1 of one
    N tile): the grid is the M tiles rounded up to pairs times the N tiles, always whole clusters (an
    odd M-tile count gets a padding block per N tile), 384 threads, 4 stages of 48 KB and the
    barriers; one instance per dtype; the kernels carry the cluster shape."""
    m = cutec.manifest(cubin("gemm_sm90_multicast"))
    assert sorted(m.hosts) == ["gemm_tn_bf16", "gemm_tn_f16"]
    assert m.text.count("cluster 2 1 1") == len(m.kernels) == 2
    cases = [  # (M, N, K), M tiles, N tiles
        ((1, 8, 8), 1, 1),
        ((128, 256, 64), 1, 1),
        ((129, 256, 64), 2, 1),
        ((384, 1000, 72), 3, 4),
        ((1000, 1000, 1000), 8, 4),
        ((4096, 4096, 4096), 32, 16),
        ((8200, 8200, 136), 65, 33),
    ]
    kernels = set()
    for dtype in ("bf16", "f16"):
        host = m.host(f"gemm_tn_{dtype}")
        for shape, m_tiles, n_tiles in cases:
            (launch,) = host.check(*gemm90_views("tn", *shape, dtype))
            grid = (m_tiles + m_tiles % 2) * n_tiles
            assert launch["grid"] == (grid, 1, 1) and grid % 2 == 0, (dtype, shape)
            assert launch["block"] == (384, 1, 1) and launch["smem"] == 4 * 49152 + 1024, (dtype, shape)
            kernels.add(launch["kernel"])
        # TMA's 16-byte strides: C's N and K multiples of 8.
        refusal(host.check, *gemm90_views("tn", 1000, 7, 128, dtype))
        refusal(host.check, *gemm90_views("tn", 64, 64, 7, dtype))
    assert kernels == set(m.kernels)


# ---- samples/flash_attention_bwd_sm90.cute: the backward's plan and checks ---------------------------


def test_flash_attention_bwd_plan(cubin):
    """Three launches per call: the pre-pass and the dQ conversion a block per (64 query rows, head,
    batch), the main kernel a block per (128 keys, or 64 at head dim 256; K/V head, batch) with 384
    threads; the instance of the head dim (64, 128, 256) and type; the workspaces must be padded to
    whole 64-row tiles."""
    bwd = cutec.manifest(cubin("flash_attention_bwd_sm90")).host("flash_attn_bwd").check

    def call(b, sq, sk, h, hkv, d, dtype="bf16", causal=1, padded=None, lse=None):
        padded = padded if padded is not None else -(-sq // 64) * 64
        q, o, do, dq = (view(i, (b, sq, h, d), dtype) for i in (0, 3, 4, 6))
        k, v, dk, dv = (view(i, (b, sk, hkv, d), dtype) for i in (1, 2, 7, 8))
        ws = view(9, (b, h, padded * d), "f32"), view(10, (b, h, 2, padded), "f32")
        return bwd(q, k, v, o, do, lse or view(5, (b, h, sq), "f32"), dq, dk, dv, *ws, 0.125, causal)

    kernels = set()
    for d in (64, 128, 256):
        for dtype in ("bf16", "f16"):
            prep, main, post = call(2, 1000, 300, 8, 2, d, dtype)
            assert prep["grid"] == (16, 8, 2) and prep["block"] == (256, 1, 1)
            assert main["grid"] == ((5 if d == 256 else 3), 2, 2) and main["block"] == (384, 1, 1)
            assert post["grid"] == (16, 8, 2) and post["block"] == ((128 if d == 64 else 256), 1, 1)
            kernels.add((prep["kernel"], main["kernel"], post["kernel"]))
    assert len(kernels) == 6
    # (batch, heads, seqlen, D) tensors passed as their transposes: head_dim contiguous, any strides.
    b, h, s, d = 2, 4, 300, 64
    bhsd = row_major((b, h, s, d))
    strides = (bhsd[0], bhsd[2], bhsd[1], 1)
    t = [view(i, (b, s, h, d), "bf16", strides) for i in range(9)]
    ws = view(9, (b, h, 320 * d), "f32"), view(10, (b, h, 2, 320), "f32")
    assert bwd(*t[:5], view(5, (b, h, s), "f32"), *t[6:], *ws, 0.125, 0)
    for bad in (
        dict(h=6, hkv=4),  # query heads not a multiple of the K/V heads
        dict(d=96),  # head_dim: 64, 128 or 256
        dict(causal=2),
        dict(padded=1000),  # workspaces not padded to 64-row tiles
        dict(lse=view(5, (2, 8, 999), "f32")),  # LSE (batch, heads, seqlen_q)
    ):
        args = dict(b=2, sq=1000, sk=300, h=8, hkv=2, d=64) | bad
        refusal(lambda a=args: call(**a))
    # The window's host: flash_attn_bwd's launches; (-1, 0) is causal, a side below -1 refused.
    window = cutec.manifest(cubin("flash_attention_bwd_sm90")).host("flash_attn_bwd_window").check
    q, o, do, dq = (view(i, (2, 1000, 8, 128), "bf16") for i in (0, 3, 4, 6))
    k, v, dk, dv = (view(i, (2, 300, 2, 128), "bf16") for i in (1, 2, 7, 8))
    rest = (
        view(5, (2, 8, 1000), "f32"),
        dq,
        dk,
        dv,
        view(9, (2, 8, 1024 * 128), "f32"),
        view(10, (2, 8, 2, 1024), "f32"),
    )
    assert window(q, k, v, o, do, *rest, 0.125, -1, 0) == bwd(q, k, v, o, do, *rest, 0.125, 1)
    assert window(q, k, v, o, do, *rest, 0.125, 64, 0)
    refusal(lambda: window(q, k, v, o, do, *rest, 0.125, 64, -2))
