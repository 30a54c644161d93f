/* typed_launch.c: the same launch through the typed header cutec generates
 * (`cutec build vector_add.cute --emit=header -o vector_add.h`): one C parameter per
 * .cute parameter, views with the static layout entries filled in.
 *
 *   ./typed_launch VECTOR_ADD.cubin
 * Exit codes: 0 PASS, 1 FAIL, 2 usage, 77 SKIP (no CUDA driver/GPU). */
#include <stdio.h>
#include <stdlib.h>

#include "vector_add.h"

#define CHECK(call)                                                                            \
    do {                                                                                       \
        int st_ = (call);                                                                      \
        if (st_ != CUTE_OK) {                                                                  \
            printf("FAIL: %s -> %s: %s\n", #call, cute_status_name(st_), cute_last_error()); \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

int main(int argc, char** argv) {
    enum { N = 4099 };
    static float a[N], b[N], c[N];
    cute_device* dev = NULL;
    cute_stream* stream = NULL;
    cute_module* module = NULL;
    cute_kernel* k = NULL;
    uint64_t da, db, dc;
    cute_tensor ta, tb, tc;
    cute_launch_config cfg = cute_launch_linear(N, 128);
    int i, st, bad = 0;

    if (argc != 2) {
        fprintf(stderr, "usage: %s VECTOR_ADD.cubin\n", argv[0]);
        return 2;
    }
    st = cute_device_open(0, &dev);
    if (st == CUTE_ERROR_UNAVAILABLE) {
        printf("SKIP: no CUDA driver/GPU: %s\n", cute_last_error());
        return 77;
    }
    CHECK(st);
    CHECK(cute_stream_create(dev, &stream));
    CHECK(cute_module_load_file(dev, argv[1], &module));
    CHECK(vector_add_get(module, &k));
    for (i = 0; i < N; i++) {
        a[i] = (float)i;
        b[i] = 0.5f * (float)i;
    }
    CHECK(cute_malloc(dev, sizeof a, &da));
    CHECK(cute_malloc(dev, sizeof b, &db));
    CHECK(cute_malloc(dev, sizeof c, &dc));
    CHECK(cute_memcpy_htod(stream, da, a, sizeof a));
    CHECK(cute_memcpy_htod(stream, db, b, sizeof b));
    ta = vector_add_a_view(da, N, sizeof a);
    tb = vector_add_b_view(db, N, sizeof b);
    tc = vector_add_c_view(dc, N, sizeof c);
    CHECK(vector_add_launch(k, stream, &cfg, &ta, &tb, &tc));
    CHECK(cute_memcpy_dtoh(stream, c, dc, sizeof c));
    for (i = 0; i < N; i++) bad += c[i] != a[i] + b[i];
    /* The seed's failure mode, refused: a view longer than its memory. */
    tc = vector_add_c_view(dc, N + 1, sizeof c);
    st = vector_add_launch(k, stream, &cfg, &ta, &tb, &tc);
    printf("%s typed launch: mismatches=%d; oversize view -> %s (%s)\n", bad == 0 && st == CUTE_ERROR_ARGUMENT_MISMATCH ? "PASS" : "FAIL",
           bad, cute_status_name(st), cute_last_error());
    cute_kernel_release(k);
    cute_module_release(module);
    cute_free(dev, da);
    cute_free(dev, db);
    cute_free(dev, dc);
    cute_stream_release(stream);
    cute_device_release(dev);
    return bad == 0 && st == CUTE_ERROR_ARGUMENT_MISMATCH ? 0 : 1;
}
