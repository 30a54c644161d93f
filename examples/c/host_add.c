/* host_add.c: call the host functions of samples/elementwise_add.cute from C.
 *
 *   ./host_add ELEMENTWISE_ADD.cubin [M N]        (default 1024 x 2048)
 *
 * For each of naive_elementwise_add, vectorized_elementwise_add and elementwise_add: C = A + B on
 * M x N row-major f16 tensors through cute_host_call, every element compared bit-exactly with the
 * CPU's f16 sum (computed in f32 and rounded to nearest-even f16: equal to the correctly rounded
 * f16 sum). Then a partial tile (M = 1000 for elementwise_add's 16 x 256 tiles) must be refused
 * with CUTE_ERROR_ARGUMENT_MISMATCH, leaving C untouched.
 *
 * Exit codes: 0 PASS, 1 FAIL, 2 usage, 77 SKIP (no CUDA driver/GPU). */
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
    printf("%s %-40s %s\n", ok ? "PASS" : "FAIL", name, detail);
    if (!ok) failures++;
}

static float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
    float f;
    if (exp == 0) {
        f = (float)man * (1.0f / 16777216.0f);
        return sign ? -f : f;
    }
    bits = exp == 0x1f ? (sign | 0x7f800000u | (man << 13)) : (sign | ((exp + 112u) << 23) | (man << 13));
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Round to nearest, ties to even (finite inputs in range; enough for sums of values in [-1, 1)). */
static uint16_t f32_to_f16(float x) {
    uint32_t b, man, rem, r, sign;
    int e;
    memcpy(&b, &x, sizeof b);
    sign = (b >> 16) & 0x8000u;
    e = (int)((b >> 23) & 0xffu) - 127 + 15;
    man = b & 0x7fffffu;
    if (e >= 0x1f) return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        uint32_t m = man | 0x800000u, shift = (uint32_t)(14 - e), half;
        if (e < -10) return (uint16_t)sign;
        r = m >> shift;
        rem = m & ((1u << shift) - 1u);
        half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (r & 1u))) r++;
        return (uint16_t)(sign | r);
    }
    r = ((uint32_t)e << 10) | (man >> 13);
    rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) r++;
    return (uint16_t)(sign | r);
}

static uint64_t state = 0x9e3779b97f4a7c15ull;
static float uniform(void) { /* xorshift64*, in [-1, 1) */
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return (float)((state * 2685821657736338717ull) >> 40) / (float)(1u << 24) * 2.0f - 1.0f;
}

int main(int argc, char** argv) {
    static const char* hosts[3] = {"naive_elementwise_add", "vectorized_elementwise_add", "elementwise_add"};
    cute_device* dev = NULL;
    cute_stream* stream = NULL;
    cute_module* module = NULL;
    cute_host* host = NULL;
    int64_t m = 1024, n = 2048;
    size_t len, bytes, i;
    uint16_t *a, *b, *c, *want;
    uint64_t da, db, dc;
    cute_tensor ta, tb, tc;
    cute_arg args[3];
    char detail[512];
    int h, st, bad;

    if (argc != 2 && argc != 4) {
        fprintf(stderr, "usage: %s ELEMENTWISE_ADD.cubin [M N]\n", argv[0]);
        return 2;
    }
    if (argc == 4) {
        m = strtoll(argv[2], NULL, 10);
        n = strtoll(argv[3], NULL, 10);
    }
    if (m <= 0 || n <= 0) {
        fprintf(stderr, "M and N must be positive\n");
        return 2;
    }
    len = (size_t)(m * n);
    bytes = len * sizeof(uint16_t);

    st = cute_device_open(0, &dev);
    if (st == CUTE_ERROR_UNAVAILABLE) {
        printf("SKIP: no CUDA driver/GPU: %s\n", cute_last_error());
        return 77;
    }
    CHECK(st);
    CHECK(cute_stream_create(dev, &stream));
    CHECK(cute_module_load_file(dev, argv[1], &module));

    a = malloc(bytes);
    b = malloc(bytes);
    c = malloc(bytes);
    want = malloc(bytes);
    if (!a || !b || !c || !want) {
        printf("FAIL: out of host memory\n");
        return 1;
    }
    for (i = 0; i < len; i++) {
        a[i] = f32_to_f16(uniform());
        b[i] = f32_to_f16(uniform());
        want[i] = f32_to_f16(f16_to_f32(a[i]) + f16_to_f32(b[i]));
    }
    CHECK(cute_malloc(dev, bytes, &da));
    CHECK(cute_malloc(dev, bytes, &db));
    CHECK(cute_malloc(dev, bytes, &dc));
    CHECK(cute_memcpy_htod(stream, da, a, bytes));
    CHECK(cute_memcpy_htod(stream, db, b, bytes));
    ta = cute_tensor_2d(da, CUTE_DTYPE_F16, m, n, n, bytes);
    tb = cute_tensor_2d(db, CUTE_DTYPE_F16, m, n, n, bytes);
    tc = cute_tensor_2d(dc, CUTE_DTYPE_F16, m, n, n, bytes);
    args[0] = cute_arg_tensor(&ta);
    args[1] = cute_arg_tensor(&tb);
    args[2] = cute_arg_tensor(&tc);

    for (h = 0; h < 3; h++) {
        CHECK(cute_module_host(module, hosts[h], &host));
        memset(c, 0xa5, bytes);
        CHECK(cute_memcpy_htod(stream, dc, c, bytes));
        CHECK(cute_host_call(host, stream, args, 3));
        CHECK(cute_stream_synchronize(stream));
        CHECK(cute_memcpy_dtoh(stream, c, dc, bytes));
        bad = 0;
        for (i = 0; i < len; i++) bad += c[i] != want[i];
        snprintf(detail, sizeof detail, "%lldx%lld f16, mismatches=%d (bit-exact)", (long long)m, (long long)n, bad);
        report(bad == 0, hosts[h], detail);
        cute_host_release(host);
        host = NULL;
    }

    /* A wrong dtype is refused by the host's parameter check (no launch, no driver call). */
    CHECK(cute_module_host(module, "elementwise_add", &host));
    tb.dtype = CUTE_DTYPE_F32;
    st = cute_host_check(host, args, 3);
    report(st == CUTE_ERROR_ARGUMENT_MISMATCH && strstr(cute_last_error(), "`mB`") != NULL, "refuse wrong dtype (cute_host_check)",
           st == CUTE_OK ? "ACCEPTED" : cute_last_error());
    tb.dtype = CUTE_DTYPE_F16;

    /* A partial tile: 1000 rows are not a multiple of the 16-row tile. Refused, C untouched. */
    if (m >= 1000) {
        ta.shape[0] = tb.shape[0] = tc.shape[0] = 1000;
        memset(c, 0xa5, bytes);
        CHECK(cute_memcpy_htod(stream, dc, c, bytes));
        st = cute_host_call(host, stream, args, 3);
        CHECK(cute_stream_synchronize(stream));
        CHECK(cute_memcpy_dtoh(stream, c, dc, bytes));
        bad = 0;
        for (i = 0; i < len; i++) bad += c[i] != 0xa5a5u;
        report(st == CUTE_ERROR_ARGUMENT_MISMATCH && strstr(cute_last_error(), "is not a multiple of the tile 16") != NULL && bad == 0,
               "refuse partial tile (M=1000)", st == CUTE_OK ? "LAUNCHED (must be refused)" : cute_last_error());
    }
    cute_host_release(host);

    cute_free(dev, da);
    cute_free(dev, db);
    cute_free(dev, dc);
    cute_module_release(module);
    cute_stream_release(stream);
    cute_device_release(dev);
    free(a);
    free(b);
    free(c);
    free(want);
    printf("%s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
