/* vector_add.c: load a cutec cubin from C, launch vector_add with checked tensor views,
 * show that mismatched arguments are refused (no launch), and replay a CUDA graph.
 *
 *   ./vector_add VECTOR_ADD.cubin [N]
 *
 * Exit codes: 0 PASS, 1 FAIL, 2 usage, 77 SKIP (no CUDA driver/GPU).
 * Build: see Makefile (gcc ... libcute_runtime.a -lpthread -ldl -lm). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cute_runtime.h"

static int failures = 0;

#define CHECK(call)                                                                            \
    do {                                                                                       \
        int st_ = (call);                                                                      \
        if (st_ != CUTE_OK) {                                                                  \
            printf("FAIL: %s -> %s: %s\n", #call, cute_status_name(st_), cute_last_error()); \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

static void report(int ok, const char* name, const char* detail) {
    printf("%s %-34s %s\n", ok ? "PASS" : "FAIL", name, detail);
    if (!ok) failures++;
}

/* Expects `st` to be a refusal mentioning `what`. */
static void expect_refused(const char* name, int st, const char* what) {
    int ok = st == CUTE_ERROR_ARGUMENT_MISMATCH && strstr(cute_last_error(), what) != NULL;
    report(ok, name, st == CUTE_OK ? "LAUNCHED (should have been refused)" : cute_last_error());
}

static int count_wrong(const float* a, const float* b, const float* c, size_t n, int twice) {
    int bad = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        float want = a[i] + b[i];
        if (twice) want = want + b[i];
        if (memcmp(&want, &c[i], sizeof want) != 0) bad++;
    }
    return bad;
}

int main(int argc, char** argv) {
    cute_device* dev = NULL;
    cute_stream* stream = NULL;
    cute_module* module = NULL;
    cute_kernel* k = NULL;
    cute_graph* graph = NULL;
    size_t n, i, bytes;
    float *a, *b, *c;
    uint64_t da, db, dc, dd;
    cute_tensor ta, tb, tc, td, bad;
    cute_arg args[3];
    cute_launch_config cfg;
    char detail[256];
    int st, wrong, r;

    if (argc < 2) {
        fprintf(stderr, "usage: %s VECTOR_ADD.cubin [N]\n", argv[0]);
        return 2;
    }
    n = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : (1u << 20) + 3;
    bytes = n * sizeof(float);

    st = cute_device_open(0, &dev);
    if (st == CUTE_ERROR_UNAVAILABLE) {
        printf("SKIP: no CUDA driver/GPU: %s\n", cute_last_error());
        return 77;
    }
    CHECK(st);
    CHECK(cute_stream_create(dev, &stream));
    CHECK(cute_module_load_file(dev, argv[1], &module));
    if (cute_module_manifest(module) == NULL) {
        printf("FAIL: %s has no cutec manifest\n", argv[1]);
        return 1;
    }
    printf("manifest:\n%s", cute_module_manifest(module));
    CHECK(cute_module_kernel(module, "vector_add", &k));

    a = malloc(bytes);
    b = malloc(bytes);
    c = malloc(bytes);
    for (i = 0; i < n; i++) {
        a[i] = (float)(i % 1000) * 0.25f - 3.0f;
        b[i] = (float)(i % 777) * 0.5f + 1.0f;
        c[i] = NAN;
    }
    CHECK(cute_malloc(dev, bytes, &da));
    CHECK(cute_malloc(dev, bytes, &db));
    CHECK(cute_malloc(dev, bytes, &dc));
    CHECK(cute_malloc(dev, bytes, &dd));
    CHECK(cute_memcpy_htod(stream, da, a, bytes));
    CHECK(cute_memcpy_htod(stream, db, b, bytes));
    CHECK(cute_memcpy_htod(stream, dc, c, bytes));

    ta = cute_tensor_1d(da, CUTE_DTYPE_F32, (int64_t)n, bytes);
    tb = cute_tensor_1d(db, CUTE_DTYPE_F32, (int64_t)n, bytes);
    tc = cute_tensor_1d(dc, CUTE_DTYPE_F32, (int64_t)n, bytes);
    td = cute_tensor_1d(dd, CUTE_DTYPE_F32, (int64_t)n, bytes);
    cfg = cute_launch_linear(n, 256);

    /* 1. A checked launch. */
    args[0] = cute_arg_tensor(&ta);
    args[1] = cute_arg_tensor(&tb);
    args[2] = cute_arg_tensor(&tc);
    CHECK(cute_kernel_launch(k, stream, &cfg, args, 3));
    CHECK(cute_stream_synchronize(stream));
    CHECK(cute_memcpy_dtoh(stream, c, dc, bytes));
    wrong = count_wrong(a, b, c, n, 0);
    snprintf(detail, sizeof detail, "n=%zu mismatches=%d", n, wrong);
    report(wrong == 0, "checked launch vector_add", detail);

    /* 2. Mismatches are refused before anything is launched. */
    bad = tc;
    bad.dtype = CUTE_DTYPE_F16;
    args[2] = cute_arg_tensor(&bad);
    expect_refused("refuse wrong dtype", cute_kernel_launch(k, stream, &cfg, args, 3), "dtype mismatch");
    bad = tc;
    bad.nleaves = 2;
    bad.shape[0] = (int64_t)n / 2;
    bad.shape[1] = 2;
    bad.stride[1] = (int64_t)n / 2;
    expect_refused("refuse wrong rank", cute_kernel_launch(k, stream, &cfg, args, 3), "rank mismatch");
    bad = tc;
    bad.stride[0] = 2;
    bad.shape[0] = (int64_t)n / 2;
    expect_refused("refuse wrong stride", cute_kernel_launch(k, stream, &cfg, args, 3), "stride mismatch");
    bad = tc;
    bad.ptr = dc + 2;
    bad.bytes = 0;
    expect_refused("refuse misaligned pointer", cute_kernel_launch(k, stream, &cfg, args, 3), "misaligned");
    bad = tc;
    bad.ptr = 0;
    expect_refused("refuse null pointer", cute_kernel_launch(k, stream, &cfg, args, 3), "null pointer");
    bad = tc;
    bad.shape[0] = (int64_t)n + 1; /* the seed's illegal-memory-access case */
    expect_refused("refuse out of bounds", cute_kernel_launch(k, stream, &cfg, args, 3), "out of bounds");
    args[2] = cute_arg_i32(5);
    expect_refused("refuse scalar for tensor", cute_kernel_launch(k, stream, &cfg, args, 3), "expects a tensor");
    expect_refused("refuse wrong argument count", cute_kernel_launch(k, stream, &cfg, args, 2), "takes 3 parameters");

    /* 3. A CUDA graph: c = a + b; d = c + b, captured once, replayed. */
    CHECK(cute_graph_begin_capture(stream));
    args[0] = cute_arg_tensor(&ta);
    args[1] = cute_arg_tensor(&tb);
    args[2] = cute_arg_tensor(&tc);
    CHECK(cute_kernel_launch(k, stream, &cfg, args, 3));
    args[0] = cute_arg_tensor(&tc);
    args[2] = cute_arg_tensor(&td);
    CHECK(cute_kernel_launch(k, stream, &cfg, args, 3));
    CHECK(cute_graph_end_capture(stream, &graph));
    for (r = 0; r < 5; r++) CHECK(cute_graph_launch(graph, stream));
    CHECK(cute_stream_synchronize(stream));
    CHECK(cute_memcpy_dtoh(stream, c, dd, bytes));
    wrong = count_wrong(a, b, c, n, 1);
    snprintf(detail, sizeof detail, "5 replays, mismatches=%d", wrong);
    report(wrong == 0, "graph replay", detail);

    cute_graph_release(graph);
    cute_kernel_release(k);
    cute_module_release(module);
    CHECK(cute_free(dev, da));
    CHECK(cute_free(dev, db));
    CHECK(cute_free(dev, dc));
    CHECK(cute_free(dev, dd));
    cute_stream_release(stream);
    cute_device_release(dev);
    free(a);
    free(b);
    free(c);
    printf("%s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
