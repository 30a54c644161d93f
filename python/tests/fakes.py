"""Tensor producers for tests without a GPU: each speaks one protocol about fake device memory
(an aligned address no one dereferences), so a call can be checked against a manifest offline.

* `ArrayInterface`: `__cuda_array_interface__` (a dict).
* `DLPackTensor`: `__dlpack__` returning a `dltensor` or `dltensor_versioned` capsule built with
  ctypes; records the `stream` it was asked for.
* `ExchangeTensor`: the DLPack C exchange API (`__dlpack_c_exchange_api__` on the type), as torch
  2.10+ has it; its `dltensor_from_py_object_no_sync` is a ctypes callback that counts its calls,
  and its `__dlpack__` raises (so a test sees which path was taken).
"""

import ctypes as C

FAKE_BASE = 0x7F00_0000_0000


def fake_ptr(k):
    """A distinct, 256-byte aligned fake device address."""
    return FAKE_BASE + k * 0x10_0000_0000


def row_major(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


class ArrayInterface:
    def __init__(self, ptr, shape, typestr="<f2", strides=None, **extra):
        self.__cuda_array_interface__ = dict(
            data=(ptr, False), shape=tuple(shape), typestr=typestr, strides=strides, version=3, **extra
        )


class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [
        ("data", C.c_void_p),
        ("device", DLDevice),
        ("ndim", C.c_int32),
        ("dtype", DLDataType),
        ("shape", C.POINTER(C.c_int64)),
        ("strides", C.POINTER(C.c_int64)),
        ("byte_offset", C.c_uint64),
    ]


class DLManagedTensor(C.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", C.c_void_p), ("deleter", C.c_void_p)]


class DLPackVersion(C.Structure):
    _fields_ = [("major", C.c_uint32), ("minor", C.c_uint32)]


class DLManagedTensorVersioned(C.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", C.c_void_p),
        ("deleter", C.c_void_p),
        ("flags", C.c_uint64),
        ("dl_tensor", DLTensor),
    ]


_capsule_new = C.pythonapi.PyCapsule_New
_capsule_new.restype = C.py_object
_capsule_new.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]

# Capsule names must outlive the capsules: module constants.
DLTENSOR, DLTENSOR_VERSIONED, EXCHANGE_API = b"dltensor", b"dltensor_versioned", b"dlpack_exchange_api"

CUDA, CPU = 2, 1
DTYPES = {
    "f16": (2, 16),
    "bf16": (4, 16),
    "f32": (2, 32),
    "i32": (0, 32),
    "c64": (5, 64),
    "f8e4m3": (10, 8),
    "f8e5m2": (12, 8),
    "f8e4m3fnuz": (11, 8),
}


def dltensor(ptr, shape, dtype="f16", strides=None, device=(CUDA, 0), byte_offset=0, keep=None):
    """A DLTensor (and the arrays it points to, appended to `keep`)."""
    n = len(shape)
    shape_arr = (C.c_int64 * max(n, 1))(*shape)
    strides_arr = None if strides is None else (C.c_int64 * max(n, 1))(*strides)
    keep.extend([shape_arr, strides_arr])
    code, bits = DTYPES[dtype]
    t = DLTensor(
        ptr - byte_offset,
        DLDevice(*device),
        n,
        DLDataType(code, bits, 1),
        C.cast(shape_arr, C.POINTER(C.c_int64)),
        C.cast(strides_arr, C.POINTER(C.c_int64)) if strides_arr is not None else None,
        byte_offset,
    )
    return t


class DLPackTensor:
    def __init__(self, ptr, shape, dtype="f16", strides=None, device=(CUDA, 0), versioned=False, byte_offset=0):
        self._keep = []
        t = dltensor(ptr, shape, dtype, strides, device, byte_offset, self._keep)
        if versioned:
            self._managed = DLManagedTensorVersioned(DLPackVersion(1, 1), None, None, 0, t)
            self._name = DLTENSOR_VERSIONED
        else:
            self._managed = DLManagedTensor(t, None, None)
            self._name = DLTENSOR
        self.device = device
        self.streams_seen = []

    def __dlpack__(self, stream=None):
        self.streams_seen.append(stream)
        # No destructor: the fake owns the struct (a real producer's destructor calls the deleter).
        return _capsule_new(C.addressof(self._managed), self._name, None)

    def __dlpack_device__(self):
        return self.device


class ExchangeHeader(C.Structure):
    _fields_ = [("version", DLPackVersion), ("prev_api", C.c_void_p)]


FROM_PY = C.CFUNCTYPE(C.c_int, C.py_object, C.POINTER(DLTensor))
CURRENT_STREAM = C.CFUNCTYPE(C.c_int, C.c_int32, C.c_int32, C.POINTER(C.c_void_p))


class ExchangeAPI(C.Structure):
    _fields_ = [
        ("header", ExchangeHeader),
        ("managed_tensor_allocator", C.c_void_p),
        ("managed_tensor_from_py_object_no_sync", C.c_void_p),
        ("managed_tensor_to_py_object_no_sync", C.c_void_p),
        ("dltensor_from_py_object_no_sync", FROM_PY),
        ("current_work_stream", CURRENT_STREAM),
    ]


class ExchangeTensor:
    """A tensor type with the DLPack C exchange API; `ExchangeTensor.calls` counts the C calls."""

    calls = 0

    def __init__(self, ptr, shape, dtype="f16", strides=None, device=(CUDA, 0)):
        self._keep = []
        self._tensor = dltensor(ptr, shape, dtype, strides, device, 0, self._keep)

    def __dlpack__(self, stream=None):
        raise AssertionError("the exchange API should have been used, not __dlpack__")


def _from_py(obj, out):
    ExchangeTensor.calls += 1
    C.memmove(out, C.byref(obj._tensor), C.sizeof(DLTensor))
    return 0


def _current_stream(device_type, device_id, out):
    out[0] = 0x1234
    return 0


_from_py_c = FROM_PY(_from_py)
_current_stream_c = CURRENT_STREAM(_current_stream)
_api = ExchangeAPI(ExchangeHeader(DLPackVersion(1, 3), None), None, None, None, _from_py_c, _current_stream_c)
ExchangeTensor.__dlpack_c_exchange_api__ = _capsule_new(C.addressof(_api), EXCHANGE_API, None)
