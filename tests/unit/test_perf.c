/* test_perf.c -- timing summaries and authored-kernel names, with known answers. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "perf.h"

static int has(const json_t *a, const char *s) {
    for (size_t i = 0; i < json_array_size(a); i++)
        if (strcmp(json_string_value(json_array_get(a, i)), s) == 0) return 1;
    return 0;
}

int main(void) {
    /* times: the missing (0) sample is left out; R type 7 quartiles of 1..4. */
    double ms[] = {4, 0, 1, 3, 2};
    kbv_times t;
    perf_times(ms, 5, &t);
    CHECK(t.n == 4);
    CHECK(fabs(t.median - 2.5) < 1e-12);
    CHECK(fabs(t.q1 - 1.75) < 1e-12 && fabs(t.q3 - 3.25) < 1e-12);
    CHECK(fabs(t.mean - 2.5) < 1e-12);
    perf_times(ms, 0, &t);
    CHECK(t.n == 0);

    /* ratio: per-round num/den, median, CI containing it; rounds with a zero left out. */
    double num[] = {2, 4, 6, 8, 0}, den[] = {1, 2, 3, 4, 5};
    kbv_ratio q;
    perf_ratio(num, den, 5, 1, &q);
    CHECK(q.measured && fabs(q.value - 2.0) < 1e-12 && q.lo == 2.0 && q.hi == 2.0);
    double a[200], b[200];
    for (int i = 0; i < 200; i++) a[i] = 1.0 + 0.01 * ((i * 37) % 11 - 5), b[i] = 1.0;
    perf_ratio(a, b, 200, 7, &q);
    CHECK(q.measured && q.lo <= q.value && q.value <= q.hi && q.hi - q.lo < 0.05);
    perf_ratio(num, den, 0, 1, &q);
    CHECK(!q.measured);

    /* authored kernels: __global__ functions (templates, qualifiers) and triton.jit ones. */
    const char *src =
        "cuda = r'''\n"
        "template <int B> __global__ void __launch_bounds__(256) tiled_mm(const float* a) {}\n"
        "__global__ void relu_kernel (float* x, int n) {}\n"
        "extern \"C\" __global__\nvoid k2(void) {}\n"
        "__global__ void relu_kernel(float* x, int n);\n"
        "'''\n"
        "@triton.jit\ndef add_kernel(x_ptr, n):\n    pass\n";
    json_t *names = perf_authored_kernels(src);
    CHECK(has(names, "tiled_mm"));
    CHECK(has(names, "relu_kernel"));
    CHECK(has(names, "k2"));
    CHECK(has(names, "add_kernel"));
    CHECK(json_array_size(names) == 4);
    json_decref(names);
    names = perf_authored_kernels("import torch\nclass ModelNew: pass\n");
    CHECK(json_array_size(names) == 0);
    json_decref(names);
    CHECK_DONE("perf");
}
