/* host_reduce.c: call the reduce-sum host functions from C.
 *
 *   ./host_reduce REDUCE_SUM.cubin REDUCE_SUM_TILED_COPY.cubin [M]     (default M = 4096)
 *
 * `reduce_sum` (samples/reduce_sum.cute, any M x N) on M x 3000 and `reduce_rows`
 * (samples/reduce_sum_tiled_copy.cute, N = 1024) on M x 1024: out[i] = sum_j x[i, j] for f32 x in
 * [-1, 1), each row compared with a double-precision sum within (N/32 + 16) * 2^-24 * sum_j |x[i,j]|
 * (the worst case of the kernels' summation trees). Then a row count that is not a multiple of the
 * tiled copy's 4 rows must be refused (CUTE_ERROR_ARGUMENT_MISMATCH), the output left untouched.
 *
 * Exit codes: 0 PASS, 1 FAIL, 2 usage, 77 SKIP (no CUDA driver/GPU). */
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

static uint64_t state = 0x2545f4914f6cdd1dull;
static float uniform(void) { /* xorshift64*, in [-1, 1) */
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return (float)((state * 2685821657736338717ull) >> 40) / (float)(1u << 24) * 2.0f - 1.0f;
}

/* Runs host `name` of `module` on an m x n row-major input; returns the number of bad rows. */
static int run(cute_device* dev, cute_stream* stream, cute_module* module, const char* name, int64_t m, int64_t n) {
    size_t len = (size_t)(m * n), i, j;
    float *x = malloc(len * sizeof(float)), *out = malloc((size_t)m * sizeof(float));
    uint64_t dx, dout;
    cute_tensor tx, tout;
    cute_arg args[2];
    cute_host* host = NULL;
    int bad = 0;
    char detail[256];
    double worst = 0.0;
    if (!x || !out) {
        printf("FAIL: out of host memory\n");
        exit(1);
    }
    for (i = 0; i < len; i++) x[i] = uniform();
    CHECK(cute_malloc(dev, len * sizeof(float), &dx));
    CHECK(cute_malloc(dev, (size_t)m * sizeof(float), &dout));
    CHECK(cute_memcpy_htod(stream, dx, x, len * sizeof(float)));
    tx = cute_tensor_2d(dx, CUTE_DTYPE_F32, m, n, n, len * sizeof(float));
    memset(&tout, 0, sizeof tout);
    tout.ptr = dout;
    tout.dtype = CUTE_DTYPE_F32;
    tout.nleaves = 1;
    tout.shape[0] = m;
    tout.stride[0] = 1;
    tout.bytes = (uint64_t)m * sizeof(float);
    args[0] = cute_arg_tensor(&tx);
    args[1] = cute_arg_tensor(&tout);
    CHECK(cute_module_host(module, name, &host));
    CHECK(cute_host_call(host, stream, args, 2));
    CHECK(cute_stream_synchronize(stream));
    CHECK(cute_memcpy_dtoh(stream, out, dout, (size_t)m * sizeof(float)));
    for (i = 0; i < (size_t)m; i++) {
        double ref = 0.0, mag = 0.0, tol, err;
        for (j = 0; j < (size_t)n; j++) {
            ref += x[i * (size_t)n + j];
            mag += fabs(x[i * (size_t)n + j]);
        }
        tol = ((double)n / 32.0 + 16.0) * ldexp(1.0, -24) * mag;
        err = fabs((double)out[i] - ref);
        if (!(err <= tol)) bad++;
        if (tol > 0 && err / tol > worst) worst = err / tol;
    }
    snprintf(detail, sizeof detail, "%lldx%lld f32: bad rows=%d, max err/tol=%.3f", (long long)m, (long long)n, bad, worst);
    report(bad == 0, name, detail);
    cute_host_release(host);
    cute_free(dev, dx);
    cute_free(dev, dout);
    free(x);
    free(out);
    return bad;
}

int main(int argc, char** argv) {
    cute_device* dev = NULL;
    cute_stream* stream = NULL;
    cute_module *simple = NULL, *tiled = NULL;
    cute_host* host = NULL;
    int64_t m = 4096;
    int st;

    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: %s REDUCE_SUM.cubin REDUCE_SUM_TILED_COPY.cubin [M]\n", argv[0]);
        return 2;
    }
    if (argc == 4) m = strtoll(argv[3], NULL, 10);
    if (m <= 0 || m % 4 != 0) {
        fprintf(stderr, "M must be a positive multiple of 4\n");
        return 2;
    }
    st = cute_device_open(0, &dev);
    if (st == CUTE_ERROR_UNAVAILABLE) {
        printf("SKIP: no CUDA driver/GPU: %s\n", cute_last_error());
        return 77;
    }
    CHECK(st);
    CHECK(cute_stream_create(dev, &stream));
    CHECK(cute_module_load_file(dev, argv[1], &simple));
    CHECK(cute_module_load_file(dev, argv[2], &tiled));

    run(dev, stream, simple, "reduce_sum", m, 3000);
    run(dev, stream, tiled, "reduce_rows", m, 1024);

    /* 1001 rows: the tiled copy's 4-row tiles would overrun the last block. Refused before launch. */
    {
        uint64_t dx, dout;
        cute_tensor tx, tout;
        cute_arg args[2];
        CHECK(cute_malloc(dev, 1001 * 1024 * sizeof(float), &dx));
        CHECK(cute_malloc(dev, 1001 * sizeof(float), &dout));
        tx = cute_tensor_2d(dx, CUTE_DTYPE_F32, 1001, 1024, 1024, 1001 * 1024 * sizeof(float));
        memset(&tout, 0, sizeof tout);
        tout.ptr = dout;
        tout.dtype = CUTE_DTYPE_F32;
        tout.nleaves = 1;
        tout.shape[0] = 1001;
        tout.stride[0] = 1;
        tout.bytes = 1001 * sizeof(float);
        args[0] = cute_arg_tensor(&tx);
        args[1] = cute_arg_tensor(&tout);
        CHECK(cute_module_host(tiled, "reduce_rows", &host));
        st = cute_host_call(host, stream, args, 2);
        report(st == CUTE_ERROR_ARGUMENT_MISMATCH && strstr(cute_last_error(), "not a multiple of the tile 4") != NULL, "refuse partial tile (M=1001)",
               st == CUTE_OK ? "LAUNCHED (must be refused)" : cute_last_error());
        cute_host_release(host);
        cute_free(dev, dx);
        cute_free(dev, dout);
    }

    cute_module_release(simple);
    cute_module_release(tiled);
    cute_stream_release(stream);
    cute_device_release(dev);
    printf("%s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
