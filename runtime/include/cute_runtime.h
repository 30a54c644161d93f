/* cute_runtime.h: the C ABI of cute-runtime (libcute_runtime.a / libcute_runtime.so).
 *
 * Load cutec cubins, look kernels up, launch them with checked, typed tensor
 * views, and capture launches into CUDA graphs. libcuda is opened at run time:
 * without a driver or GPU every call returns CUTE_ERROR_UNAVAILABLE, never a
 * crash. See docs/host-integration.md.
 *
 * Conventions: every function returning `int` returns a cute_status (CUTE_OK
 * = 0); on failure cute_last_error() holds a readable message (thread-local,
 * valid until the next failing call on the thread). Output handles are set to
 * NULL on failure. Handles are released with their *_release function
 * (NULL is a no-op); kernels, streams and graphs keep what they need alive, so
 * release order does not matter. Launches are asynchronous: kernel faults
 * surface at the next cute_stream_synchronize.
 *
 * Linking: static  `cc app.c libcute_runtime.a -lpthread -ldl -lm`
 *          shared  `cc app.c -L DIR -lcute_runtime`
 */
#ifndef CUTE_RUNTIME_H
#define CUTE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUTE_RUNTIME_ABI_VERSION 1

/* Status codes. */
typedef enum cute_status {
    CUTE_OK = 0,
    CUTE_ERROR_UNAVAILABLE = 1,       /* no CUDA driver, no GPU, or driver older than CUDA 13.0 */
    CUTE_ERROR_ARGUMENT_MISMATCH = 2, /* checked launch refused: an argument does not match the kernel */
    CUTE_ERROR_INVALID_ARGUMENT = 3,  /* NULL handle, bad length, unknown dtype code, ... */
    CUTE_ERROR_INVALID_LAUNCH = 4,    /* bad grid / block / shared memory */
    CUTE_ERROR_NOT_FOUND = 5,         /* no kernel of that name (the message lists those there are) */
    CUTE_ERROR_INVALID_IMAGE = 6,     /* not a cubin/fatbin/PTX, or a corrupt manifest */
    CUTE_ERROR_IO = 7,                /* a file could not be read */
    CUTE_ERROR_DRIVER = 8,            /* a CUDA driver call failed (message has the CUresult name) */
    CUTE_ERROR_NO_MANIFEST = 9,       /* checked launch of a kernel whose image has no cutec manifest */
    CUTE_ERROR_INTERNAL = 10          /* a bug in cute-runtime */
} cute_status;

/* Element types: the .cute scalar types. */
typedef enum cute_dtype {
    CUTE_DTYPE_I8 = 1,
    CUTE_DTYPE_I16 = 2,
    CUTE_DTYPE_I32 = 3,
    CUTE_DTYPE_I64 = 4,
    CUTE_DTYPE_U8 = 5,
    CUTE_DTYPE_U16 = 6,
    CUTE_DTYPE_U32 = 7,
    CUTE_DTYPE_U64 = 8,
    CUTE_DTYPE_F16 = 9,
    CUTE_DTYPE_BF16 = 10,
    CUTE_DTYPE_TF32 = 11,
    CUTE_DTYPE_F32 = 12,
    CUTE_DTYPE_F64 = 13,
    CUTE_DTYPE_F8E4M3 = 14,
    CUTE_DTYPE_F8E5M2 = 15,
    CUTE_DTYPE_BOOL = 16
} cute_dtype;

typedef struct cute_device cute_device;
typedef struct cute_stream cute_stream;
typedef struct cute_module cute_module;
typedef struct cute_kernel cute_kernel;
typedef struct cute_graph cute_graph;
typedef struct cute_host cute_host;

typedef struct cute_launch_config {
    uint32_t grid[3];          /* blocks per grid (x, y, z) */
    uint32_t block[3];         /* threads per block (x, y, z) */
    uint32_t shared_mem_bytes; /* dynamic shared memory per block */
} cute_launch_config;

#define CUTE_MAX_LEAVES 16

/* A tensor view: device pointer, element type, and the shape and stride leaves in
 * flattened mode order, in elements (a layout ((2,?),8):((1,?),64) has 3 leaves).
 * `bytes` is the memory addressable from ptr, or 0 when unknown (then no bounds check). */
typedef struct cute_tensor {
    uint64_t ptr;
    int32_t dtype; /* cute_dtype */
    int32_t nleaves;
    int64_t shape[CUTE_MAX_LEAVES];
    int64_t stride[CUTE_MAX_LEAVES];
    uint64_t bytes;
} cute_tensor;

#define CUTE_ARG_TENSOR 1
#define CUTE_ARG_SCALAR 2
#define CUTE_ARG_STREAM 3 /* a host function's `stream` parameter: .stream is a CUstream (NULL: the legacy default stream) */

/* One launch argument: a tensor (pointer to a cute_tensor, read during the call only)
 * or a scalar of type `dtype`. Integers use .i/.u, f32/f64 .f, f16/bf16/f8 their bits in .u. */
typedef struct cute_arg {
    int32_t kind;  /* CUTE_ARG_TENSOR, CUTE_ARG_SCALAR or CUTE_ARG_STREAM */
    int32_t dtype; /* scalars: cute_dtype */
    union {
        const cute_tensor* tensor;
        int64_t i;
        uint64_t u;
        double f;
        void* stream; /* CUTE_ARG_STREAM: a CUstream */
    } value;
} cute_arg;

/* Errors and the driver. */
const char* cute_last_error(void);
const char* cute_status_name(int status);
int cute_driver_available(void); /* 1 when libcuda can be loaded */
int cute_driver_version(int* out); /* e.g. 13000 */

/* Devices and streams. */
int cute_device_open(int ordinal, cute_device** out);
void cute_device_release(cute_device* device);
int cute_device_synchronize(const cute_device* device);
int cute_stream_create(const cute_device* device, cute_stream** out);  /* capturable */
int cute_stream_default(const cute_device* device, cute_stream** out); /* legacy NULL stream; not capturable */
int cute_stream_synchronize(const cute_stream* stream);
void cute_stream_release(cute_stream* stream);
void* cute_stream_raw(const cute_stream* stream); /* its CUstream (NULL: the legacy default stream) */

/* Device memory (the copies return when complete). */
int cute_malloc(const cute_device* device, size_t bytes, uint64_t* out_ptr);
int cute_free(const cute_device* device, uint64_t ptr);
int cute_memcpy_htod(const cute_stream* stream, uint64_t dst, const void* src, size_t bytes);
int cute_memcpy_dtoh(const cute_stream* stream, void* dst, uint64_t src, size_t bytes);

/* Modules and kernels. */
int cute_module_load_file(const cute_device* device, const char* path, cute_module** out);
int cute_module_load_data(const cute_device* device, const void* data, size_t len, cute_module** out);
void cute_module_release(cute_module* module);
const char* cute_module_manifest(const cute_module* module); /* NULL when the image has none */
/* Host only, no GPU. *out NULL: a cubin (ELF) without a manifest. An unreadable file is
   CUTE_ERROR_IO; an empty or non-ELF file or a damaged manifest CUTE_ERROR_INVALID_IMAGE. */
int cute_manifest_read_file(const char* path, char** out);
void cute_string_free(char* s);
int cute_module_kernel(const cute_module* module, const char* name, cute_kernel** out);
void cute_kernel_release(cute_kernel* kernel);

/* Checks args against the kernel's manifest without launching. */
int cute_kernel_check(const cute_kernel* kernel, const cute_arg* args, size_t nargs);
/* Checked, asynchronous launch. */
int cute_kernel_launch(const cute_kernel* kernel, const cute_stream* stream, const cute_launch_config* config,
                       const cute_arg* args, size_t nargs);

/* Host functions (.cute `host` blocks): the manifest's launch plan, evaluated per call. Arguments are
 * the host's parameters (cute_arg, as for kernels). A call checks them exactly as a checked launch
 * does, evaluates the plan, refuses partial tiles (an extent that is not a multiple of the tile: the
 * kernels have no tail handling), views reaching outside their tensor and out-of-range grids, then
 * launches the kernels in order. A refusal launches nothing. */
int cute_module_host(const cute_module* module, const char* name, cute_host** out);
void cute_host_release(cute_host* host);
int cute_host_check(const cute_host* host, const cute_arg* args, size_t nargs); /* no launch, no driver */
int cute_host_call(const cute_host* host, const cute_stream* stream, const cute_arg* args, size_t nargs);

/* A row-major rank-2 view (shape (m, n), stride (ld, 1)) of `bytes` addressable bytes (0 = unknown). */
static inline cute_tensor cute_tensor_2d(uint64_t ptr, int dtype, int64_t m, int64_t n, int64_t ld, uint64_t bytes);

/* CUDA graphs: capture what is queued on a (non-default) stream, then replay it. */
int cute_graph_begin_capture(const cute_stream* stream);
int cute_graph_end_capture(const cute_stream* stream, cute_graph** out);
int cute_graph_launch(const cute_graph* graph, const cute_stream* stream);
void cute_graph_release(cute_graph* graph);

/* ---- inline helpers ---- */

static inline cute_arg cute_arg_tensor(const cute_tensor* t) {
    cute_arg a;
    a.kind = CUTE_ARG_TENSOR;
    a.dtype = 0;
    a.value.tensor = t;
    return a;
}
static inline cute_arg cute_arg_scalar_i(int dtype, int64_t v) {
    cute_arg a;
    a.kind = CUTE_ARG_SCALAR;
    a.dtype = dtype;
    a.value.i = v;
    return a;
}
static inline cute_arg cute_arg_scalar_u(int dtype, uint64_t v) {
    cute_arg a;
    a.kind = CUTE_ARG_SCALAR;
    a.dtype = dtype;
    a.value.u = v;
    return a;
}
static inline cute_arg cute_arg_scalar_f(int dtype, double v) {
    cute_arg a;
    a.kind = CUTE_ARG_SCALAR;
    a.dtype = dtype;
    a.value.f = v;
    return a;
}
/* A CUstream for a host function's `stream` parameter (`launch ... stream(s)`); NULL is the legacy
 * default stream. It must be a live stream of the module's context. */
static inline cute_arg cute_arg_stream(void* s) {
    cute_arg a;
    a.kind = CUTE_ARG_STREAM;
    a.dtype = 0;
    a.value.u = 0;
    a.value.stream = s;
    return a;
}
static inline cute_arg cute_arg_i32(int32_t v) { return cute_arg_scalar_i(CUTE_DTYPE_I32, v); }
static inline cute_arg cute_arg_i64(int64_t v) { return cute_arg_scalar_i(CUTE_DTYPE_I64, v); }
static inline cute_arg cute_arg_u32(uint32_t v) { return cute_arg_scalar_u(CUTE_DTYPE_U32, v); }
static inline cute_arg cute_arg_f32(float v) { return cute_arg_scalar_f(CUTE_DTYPE_F32, v); }
static inline cute_arg cute_arg_f64(double v) { return cute_arg_scalar_f(CUTE_DTYPE_F64, v); }

/* A contiguous 1-D view (shape n, stride 1) of `bytes` addressable bytes (0 = unknown). */
static inline cute_tensor cute_tensor_1d(uint64_t ptr, int dtype, int64_t n, uint64_t bytes) {
    cute_tensor t;
    int i;
    t.ptr = ptr;
    t.dtype = dtype;
    t.nleaves = 1;
    for (i = 0; i < CUTE_MAX_LEAVES; i++) {
        t.shape[i] = 0;
        t.stride[i] = 0;
    }
    t.shape[0] = n;
    t.stride[0] = 1;
    t.bytes = bytes;
    return t;
}

static inline cute_tensor cute_tensor_2d(uint64_t ptr, int dtype, int64_t m, int64_t n, int64_t ld, uint64_t bytes) {
    cute_tensor t = cute_tensor_1d(ptr, dtype, m, bytes);
    t.nleaves = 2;
    t.shape[1] = n;
    t.stride[0] = ld;
    t.stride[1] = 1;
    return t;
}

/* A 1-D launch of `block` threads per block covering n threads. */
static inline cute_launch_config cute_launch_linear(uint64_t n, uint32_t block) {
    cute_launch_config c;
    uint64_t blocks = block ? (n + block - 1) / block : 0;
    c.grid[0] = (uint32_t)(blocks ? blocks : 1);
    c.grid[1] = 1;
    c.grid[2] = 1;
    c.block[0] = block;
    c.block[1] = 1;
    c.block[2] = 1;
    c.shared_mem_bytes = 0;
    return c;
}

#ifdef __cplusplus
}
#endif

#endif /* CUTE_RUNTIME_H */
