"""`cutec.jax` without a GPU: how a host function's parameters map onto an XLA custom call (from its
manifest), the errors of a parameter that cannot map and of a missing JAX, and, where JAX is
installed (CPU is enough; CI has none, so those tests skip), what a call traces and lowers to,
the checks made while tracing, and cutec's XLA FFI handler called by XLA itself (registered for
the CPU, where it finds no op and says so). test_gpu_jax.py runs ops on the GPU."""

import os
import subprocess
import sys

import pytest

import cutec
import cutec.jax as cj


@pytest.fixture(scope="module")
def fast(cubin):
    return cutec.manifest(cubin("fast_add"))


@pytest.fixture(scope="module")
def flow(cubin):
    return cutec.manifest(cubin("control_flow"))


@pytest.fixture(scope="module")
def jax():
    # On a GPU machine JAX would take 75% of the GPU's memory at its first use: the GPU tests in the
    # same pytest process need theirs.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import jax
    except ImportError:
        pytest.skip("JAX is not installed (pip install jax): the tracing and lowering tests need it, on CPU")
    return jax


def test_importing_cutec_jax_does_not_import_jax():
    code = "import sys, cutec; cutec.jax.custom_call; import cutec.jax; assert 'jax' not in sys.modules"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_a_missing_jax_is_a_clear_error(cubin):
    # `sys.modules["jax"] = None` makes `import jax` raise ImportError, as in an environment without it.
    code = (
        "import sys; sys.modules['jax'] = None\n"
        "import cutec, cutec.jax as cj\n"
        f"op = cj.Op(cutec.manifest({str(cubin('fast_add'))!r}).text, 'fast_add', 'test.add', writes=['mC'])\n"
        "try:\n    op(1, 2, mC=3)\nexcept ImportError as e:\n    print(e)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("cutec.jax needs JAX (jax >= 0.4.35 with a CUDA jaxlib"), r.stdout


def test_tensors_are_operands_and_results(fast):
    c = cj.custom_call(fast.host("fast_add").params, ["mC"])
    assert c.operands == ["mA", "mB"] and c.results == ["mC"]
    assert c.aliases == {} and c.attributes == []
    assert c.sources == [("operand", 0), ("operand", 1), ("result", 0)]


def test_updated_tensors_are_aliased_operands(fast):
    c = cj.custom_call(fast.host("fast_add").params, ["mC"], updates=["mA"])
    assert c.operands == ["mA", "mB"] and c.results == ["mA", "mC"]
    assert c.aliases == {0: 0}
    assert c.sources == [("result", 0), ("operand", 1), ("result", 1)]


def test_scalars_are_attributes(fast, flow):
    c = cj.custom_call(fast.host("add_ilp").params, ["mC"])
    assert c.attributes == ["threads", "ilp"]
    assert c.sources[3:] == [("attribute", 0), ("attribute", 0)]
    c = cj.custom_call(flow.host("sum_positive").params, ["out"])
    assert c.operands == ["x"] and c.results == ["out"] and c.attributes == ["scale", "negate"]


def test_parameters_that_cannot_map(fast):
    params = fast.host("fast_add").params
    with pytest.raises(ValueError, match="writes= and updates= are empty: name the tensor parameters it writes"):
        cj.custom_call(params, [], host="fast_add")
    with pytest.raises(
        ValueError, match=r"writes= names 'out', which is not one of its tensor parameters \(mA, mB, mC\)"
    ):
        cj.custom_call(params, ["out"], host="fast_add")
    with pytest.raises(ValueError, match="mC in both writes= and updates="):
        cj.custom_call(params, ["mC"], ["mC"], host="fast_add")
    streamed = [("x", "tensor<f32, gmem, ?:1, align: 4>"), ("s", "stream")]
    with pytest.raises(ValueError, match="parameter 's' is a stream, which a JAX op cannot take"):
        cj.custom_call(streamed, ["x"], host="h")
    with pytest.raises(ValueError, match="'cutec_op' clashes with cutec's own attribute"):
        cj.custom_call(streamed[:1] + [("cutec_op", "i32")], ["x"], host="h")


def test_a_name_is_checked_before_jax_is_needed():
    with pytest.raises(ValueError, match="a JAX op name is a non-empty string without spaces"):
        cj.register(None, "my op", writes=["x"])


def lowered(jax, f, *arrays):
    """The StableHLO text of `jax.jit(f)` traced for `arrays`."""
    return jax.jit(f).lower(*arrays).as_text()


def test_a_call_lowers_to_the_custom_call(jax, fast):
    import jax.numpy as jnp

    op = cj.Op(fast.text, "add_ilp", "cutec_test.add_ilp", writes=["mC"])
    a = jnp.zeros((256, 512), jnp.float16)
    text = lowered(jax, lambda a, b: op(a, b, threads=256, ilp=2, mC=a), a, a)
    assert "stablehlo.custom_call @cutec_test.add_ilp(" in text, text
    assert 'cutec_op = "cutec_test.add_ilp"' in text and "ilp = 2 : i64" in text and "threads = 256 : i64" in text
    assert "-> tensor<256x512xf16>" in text
    # Positional scalars and a result spec that is not an array.
    spec = jax.ShapeDtypeStruct((256, 512), jnp.float16)
    assert "threads = 128 : i64" in lowered(jax, lambda a, b: op(a, b, 128, 1, mC=spec), a, a)


def test_updates_alias_their_operand(jax, fast):
    import jax.numpy as jnp

    if tuple(int(p) for p in jax.__version__.split(".")[:3] if p.isdigit()) < (0, 4, 36):
        pytest.skip(f"updates= needs jax >= 0.4.36 (this is {jax.__version__})")
    op = cj.Op(fast.text, "fast_add", "cutec_test.add_into", updates=["mC"])
    a = jnp.zeros((64, 64), jnp.float32)
    text = lowered(jax, lambda a, b, c: op(a, b, c), a, a, a)
    assert "output_operand_aliases" in text and "operand_index = 2" in text, text


def test_floats_and_bools_are_attributes(jax, flow):
    import jax.numpy as jnp

    op = cj.Op(flow.text, "sum_positive", "cutec_test.sum_positive", writes=["out"])
    x = jnp.zeros((64, 8), jnp.float32)
    text = lowered(jax, lambda x: op(x, 0.5, True, out=jax.ShapeDtypeStruct((64,), jnp.float32)), x)
    assert "negate = true" in text and "scale = 5.000000e-01 : f64" in text, text


def refused(call):
    with pytest.raises(cutec.Refused) as e:
        call()
    return str(e.value)


def test_tracing_checks_the_call_against_the_manifest(jax, fast, flow):
    import jax.numpy as jnp

    op = cj.Op(fast.text, "fast_add", "cutec_test.fast_add", writes=["mC"])
    a, d = jnp.zeros((256, 512), jnp.float16), jnp.zeros((256, 512), jnp.float32)
    i = d.astype(jnp.int32)
    assert refused(lambda: lowered(jax, lambda a: op(a, a, mC=i), a)) == (
        "cutec_test.fast_add (at trace time): argument `mC` is a int32 result; fast_add takes bf16 or f16 or f32 there"
    )
    # Mixed instances (f16, f32): no instance of the generic host function takes both.
    assert refused(lambda: lowered(jax, lambda a, d: op(a, d, mC=a), a, d)).startswith(
        "cutec_test.fast_add (at trace time): "
    )
    # The row length of an f16 tensor must be a multiple of 8 (the runtime's message).
    odd = jnp.zeros((256, 1001), jnp.float16)
    message = refused(lambda: lowered(jax, lambda x: op(x, x, mC=x), odd))
    assert "kernel argument mismatch: host `fast_add" in message and "mA" in message, message
    # A scalar out of its parameter's range (u32).
    collatz = cj.Op(flow.text, "collatz", "cutec_test.collatz", writes=["steps"])
    n = jnp.zeros((64,), jnp.int32)
    assert "does not fit the parameter's type u32" in refused(
        lambda: lowered(jax, lambda n: collatz(n, -1, steps=n), n)
    )


def test_call_errors_name_what_is_missing(jax, fast):
    import jax.numpy as jnp

    op = cj.Op(fast.text, "add_ilp", "cutec_test.add_ilp", writes=["mC"])
    a = jnp.zeros((256, 512), jnp.float16)
    with pytest.raises(TypeError, match=r"is missing mC \(a result's shape and dtype: mC=jax.ShapeDtypeStruct"):
        lowered(jax, lambda a: op(a, a, 256, 2), a)
    with pytest.raises(TypeError, match="parameter `threads` is a scalar, which a JAX op takes as a Python number"):
        jax.jit(lambda a, t: op(a, a, t, 2, mC=a)).lower(a, 256)
    with pytest.raises(TypeError, match="has no parameter 'block'"):
        lowered(jax, lambda a: op(a, a, 256, 2, mC=a, block=1), a)
    with pytest.raises(TypeError, match="takes 4 arguments"):
        lowered(jax, lambda a: op(a, a, 1, 2, 3, mC=a), a)


def test_the_handler_speaks_to_xla(jax, fast):
    """XLA (the CPU backend) registers cutec's handler (asking its metadata) and calls it: with no op
    registered under the name, the call fails with the handler's message, carried by XLA's error."""
    import jax.numpy as jnp

    _, ffi = cj._jax()
    ffi.register_ffi_target("cutec_test.unregistered", cutec._native.xla_ffi_handler(), platform="cpu")
    op = cj.Op(fast.text, "fast_add", "cutec_test.unregistered", writes=["mC"])
    a = jax.device_put(jnp.zeros((64, 64), jnp.float32), jax.devices("cpu")[0])
    with pytest.raises(Exception, match="cutec.jax: no op `cutec_test.unregistered` is registered in this process"):
        jax.block_until_ready(jax.jit(lambda a: op(a, a, mC=a))(a))
