"""`cutec.torch` without torch and without a GPU: op schemas derived from manifests, and the checks
an op's fake implementation makes at trace time, run on stand-ins for FakeTensors. These run in
CI; test_gpu_torch_ops.py registers the ops with torch and runs them on the GPU."""

import subprocess
import sys

import pytest

import cutec
import cutec.torch as ct


@pytest.fixture(scope="module")
def ew(cubin):
    return cutec.manifest(cubin("elementwise_add"))


class Dtype:
    """Prints as a torch dtype does (`torch.float16`)."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


class Device:
    def __init__(self, type="cuda", index=0):
        self.type, self.index = type, index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


class Sym:
    """A symbolic size (as dynamic shapes trace them): not an int."""


class FakeTensor:
    """What the trace-time checks read of a torch FakeTensor."""

    SIZES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int32": 4}

    def __init__(self, shape, dtype="float16", strides=None, offset=0, device=None):
        self.shape = tuple(shape)
        self.dtype = Dtype(dtype)
        self.device = device or Device()
        self._strides = strides
        self._offset = offset

    def stride(self):
        if self._strides is not None:
            return tuple(self._strides)
        out, acc = [], 1
        for s in reversed(self.shape):
            out.append(acc)
            acc *= s if isinstance(s, int) else 1
        return tuple(reversed(out))

    def storage_offset(self):
        return self._offset

    def element_size(self):
        return self.SIZES[self.dtype.name]


def checks(manifest, host):
    return ct.TraceChecks(manifest.text, host, f"test::{host}", 0)


def refused(check, *args):
    with pytest.raises(cutec.Refused) as e:
        check(*args)
    return str(e.value)


def test_importing_cutec_torch_does_not_import_torch():
    code = "import sys, cutec; cutec.torch.schema; import cutec.torch; assert 'torch' not in sys.modules"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_tensors_are_tensors_and_the_written_ones_are_mutated(ew):
    plan = ew.host("elementwise_add")
    assert ct.schema(plan.params, ["mC"]) == "(Tensor mA, Tensor mB, Tensor(a!) mC) -> ()"
    assert ct.schema(plan.params, ["mC", "mA"]) == "(Tensor(b!) mA, Tensor mB, Tensor(a!) mC) -> ()"


def test_scalars_are_floats_ints_and_bools(cubin):
    m = cutec.manifest(cubin("control_flow"))
    assert ct.schema(m.host("axpb").params, ["y"]) == "(Tensor x, Tensor(a!) y, float a, float b) -> ()"
    collatz = m.host("collatz").params
    assert ct.schema(collatz, ["steps"]).endswith(", int limit) -> ()"), ct.schema(collatz, ["steps"])
    assert ct.schema(m.host("sum_positive").params, ["out"]).endswith(", float scale, bool negate) -> ()")


def test_schema_refusals(ew):
    params = ew.host("elementwise_add").params
    with pytest.raises(ValueError, match="mutates= is empty: name the tensor parameters it writes"):
        ct.schema(params, [], "elementwise_add")
    with pytest.raises(
        ValueError, match=r"mutates= names 'out', which is not one of its tensor parameters \(mA, mB, mC\)"
    ):
        ct.schema(params, ["out"], "elementwise_add")
    scalars = [("x", "tensor<f32, gmem, ?:1, align: 4>"), ("n", "i32")]
    with pytest.raises(ValueError, match="names 'n', which is not one of its tensor parameters"):
        ct.schema(scalars, ["n"])
    with pytest.raises(ValueError, match="parameter 's' is a stream, which a torch op cannot take"):
        ct.schema(scalars + [("s", "stream")], ["x"], "h")


def test_trace_checks_accept_what_the_gpu_accepts(ew):
    check = checks(ew, "elementwise_add").check
    for dtype in ("float16", "float32", "bfloat16"):
        a = FakeTensor((256, 512), dtype)
        check(a, a, a)
    # A column slice (storage offset 8 elements = 16 bytes): still aligned.
    check(*[FakeTensor((256, 512), strides=(1024, 1), offset=8)] * 3)


def test_trace_checks_refuse_dtypes_by_name(ew):
    check = checks(ew, "elementwise_add").check
    a, d = FakeTensor((256, 512)), FakeTensor((256, 512), "float64")
    assert refused(check, a, a, d) == (
        "test::elementwise_add (at trace time): argument `mC` is a torch.float64 tensor; "
        "elementwise_add takes bf16 or f16 or f32 there"
    )


def test_trace_checks_refuse_what_the_manifest_refuses(ew):
    check = checks(ew, "elementwise_add").check
    # The row length of an f16 tensor must be a multiple of 8 (mA: (?,?{div=8})): the runtime's message.
    odd = FakeTensor((256, 1001))
    message = refused(check, odd, odd, odd)
    assert message.startswith("test::elementwise_add (at trace time): kernel argument mismatch: host `elementwise_add")
    assert "mA" in message and "8" in message, message
    # Mixed instances (f16, f32): no instance of the generic host function takes both.
    a, f = FakeTensor((256, 512)), FakeTensor((256, 512), "float32")
    assert "test::elementwise_add (at trace time): " in refused(check, a, a, f)
    # A storage offset of 1 element: the base is not 16-byte aligned.
    shifted = FakeTensor((256, 512), strides=(1024, 1), offset=1)
    assert "align" in refused(check, a, a, shifted)


def test_trace_checks_refuse_other_devices(ew):
    check = checks(ew, "elementwise_add").check
    a = FakeTensor((256, 512))
    assert refused(check, a, a, FakeTensor((256, 512), device=Device("cpu", None))) == (
        "test::elementwise_add (at trace time): argument `mC` is on cpu; the module is loaded on cuda:0"
    )
    assert "is on cuda:1" in refused(check, a, a, FakeTensor((256, 512), device=Device("cuda", 1)))
    check(a, a, FakeTensor((256, 512), device=Device("meta", None)))


def test_symbolic_shapes_are_left_to_the_call(ew):
    check = checks(ew, "elementwise_add").check
    # Dynamic shapes: dtypes are still checked, the rest is left to the call on the GPU.
    dyn = FakeTensor((Sym(), 1001))
    check(dyn, dyn, dyn)
    assert "is a torch.int32 tensor" in refused(check, dyn, dyn, FakeTensor((Sym(), 1001), "int32"))


def test_scalars_are_checked_with_the_call(cubin):
    m = cutec.manifest(cubin("control_flow"))
    check = checks(m, "collatz").check
    n = FakeTensor((64,), "int32")
    check(n, n, 4000000000)
    assert "does not fit the parameter's type u32" in refused(check, n, n, -1)
