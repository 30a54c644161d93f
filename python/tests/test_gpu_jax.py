"""cutec host functions as JAX ops (`cutec.jax.register`) on the GPU: `jax.jit` programs calling
samples/fast_add.cute's and elementwise_add.cute's host functions, alone and among other jnp ops,
against jnp; scalars as attributes; a result shaped unlike the inputs (reduce_sum); a tensor read
and written (updates=); an error from the handler at run time. Skipped without JAX with a CUDA
jaxlib, or without a GPU."""

import os

import pytest

import cutec

# JAX takes 75% of the GPU's memory at its first use unless told not to: the torch tests in the
# same pytest process need theirs.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


@pytest.fixture(scope="module")
def jax():
    if not cutec.driver_available():
        pytest.skip("no GPU: the CUDA driver (libcuda) is not installed here")
    try:
        import jax
    except ImportError:
        pytest.skip("no JAX here (pip install 'jax[cuda12]')")
    try:
        jax.devices("gpu")
    except RuntimeError as e:
        pytest.skip(f"jax {jax.__version__} sees no GPU ({e})")
    return jax


@pytest.fixture(scope="module")
def ops(jax, cubin):
    """The ops, registered once per process."""
    import cutec.jax as cj

    fast, ew, red = (cutec.load(cubin(n)) for n in ("fast_add", "elementwise_add", "reduce_sum"))
    return {
        "fast_add": cj.register(fast.fast_add, "cutec_test.fast_add", writes=["mC"]),
        "add_ilp": cj.register(fast.add_ilp, "cutec_test.add_ilp", writes=["mC"]),
        "elementwise_add": cj.register(ew.elementwise_add, "cutec_test.elementwise_add", writes=["mC"]),
        "reduce_sum": cj.register(red.reduce_sum, "cutec_test.reduce_sum", writes=["output"]),
    }


def inputs(jax, shape=(256, 1024), dtype="float32", seed=0):
    import jax.numpy as jnp

    ka, kb = jax.random.split(jax.random.PRNGKey(seed))
    return [jax.random.normal(k, shape, jnp.float32).astype(dtype) for k in (ka, kb)]


def equal(got, want, dtype):
    import numpy as np

    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    if dtype == "float32":
        np.testing.assert_array_equal(got, want)
    else:  # f16/bf16 sums rounded once by the kernel, maybe through f32 by XLA
        np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("host", ["fast_add", "elementwise_add"])
def test_jit_of_a_host_function_equals_jnp(jax, ops, host, dtype):
    a, b = inputs(jax, dtype=dtype)
    add = ops[host]
    got = jax.jit(lambda a, b: add(a, b, mC=a))(a, b)
    assert got.shape == a.shape and got.dtype == a.dtype
    equal(got, a + b, dtype)


def test_among_other_jnp_ops(jax, ops):
    import jax.numpy as jnp
    import numpy as np

    add, rows = ops["fast_add"], ops["reduce_sum"]

    @jax.jit
    def f(a, b):
        c = add(jnp.sin(a), b * 2, mC=a)
        s = rows(c, output=jax.ShapeDtypeStruct((a.shape[0],), jnp.float32))
        return s * 0.5 + 1

    a, b = inputs(jax)
    want = (jnp.sin(a) + b * 2).sum(1) * 0.5 + 1
    np.testing.assert_allclose(np.asarray(f(a, b)), np.asarray(want), rtol=1e-5, atol=1e-3)
    # Other values through the same compiled program.
    a2, b2 = inputs(jax, seed=1)
    np.testing.assert_allclose(
        np.asarray(f(a2, b2)), np.asarray((jnp.sin(a2) + b2 * 2).sum(1) * 0.5 + 1), rtol=1e-5, atol=1e-3
    )


@pytest.mark.parametrize("threads, ilp", [(256, 2), (128, 1), (512, 4)])
def test_scalars_are_attributes(jax, ops, threads, ilp):
    a, b = inputs(jax, shape=(512, 2048), dtype="float16")
    add = ops["add_ilp"]
    got = jax.jit(lambda a, b: add(a, b, threads, ilp, mC=a))(a, b)
    equal(got, a + b, "float16")


def test_a_tensor_read_and_written(jax, cubin):
    import jax.numpy as jnp
    import numpy as np

    import cutec.jax as cj

    if tuple(int(p) for p in jax.__version__.split(".")[:3] if p.isdigit()) < (0, 4, 36):
        pytest.skip(f"updates= needs jax >= 0.4.36 (this is {jax.__version__})")
    fast = cutec.load(cubin("fast_add"))
    add_into = cj.register(fast.fast_add, "cutec_test.fast_add_into", updates=["mC"])
    a, b = inputs(jax)
    c = jnp.zeros_like(a)

    @jax.jit
    def f(a, b, c):
        # `c` is still used after the call: XLA copies it for the alias, so the second result is c.
        return add_into(a, b, c), c + 1

    got, kept = f(a, b, c)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(a + b))
    np.testing.assert_array_equal(np.asarray(kept), np.ones(a.shape, np.float32))


def test_a_call_the_handler_refuses_is_an_xla_error(jax, ops, cubin):
    """An op traced under a name no host function is registered for: the handler's error comes back
    through XLA (JAX raises it), nothing crashes, and the registered ops still run."""
    import cutec.jax as cj

    fast = cutec.load(cubin("fast_add"))
    _, ffi = cj._jax()
    ffi.register_ffi_target("cutec_test.nobody", cutec._native.xla_ffi_handler(), platform="CUDA")
    op = cj.Op(fast.manifest, "fast_add", "cutec_test.nobody", writes=["mC"])
    a, b = inputs(jax)
    with pytest.raises(Exception, match="cutec.jax: no op `cutec_test.nobody` is registered in this process"):
        jax.block_until_ready(jax.jit(lambda a, b: op(a, b, mC=a))(a, b))
    equal(jax.jit(lambda a, b: ops["fast_add"](a, b, mC=a))(a, b), a + b, "float32")


def test_a_shape_the_manifest_refuses_is_refused_while_tracing(jax, ops):
    import jax.numpy as jnp

    odd = jnp.zeros((256, 1001), jnp.float16)
    with pytest.raises(cutec.Refused, match=r"cutec_test.fast_add \(at trace time\): .*`mA`"):
        jax.jit(lambda a: ops["fast_add"](a, a, mC=a))(odd)
