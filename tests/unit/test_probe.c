/* test_probe.c -- probe.c: fixed inputs, zero structure, symmetry, ranges and booleans. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "probe.h"

static void fill(kbv_tensor *t, kbv_dtype dt, int64_t r, int64_t c, double (*f)(int64_t, int64_t, int), int draw) {
    kbv_err err;
    int64_t shape[2] = {r, c};
    kbv_tensor_alloc(t, dt, 2, shape, &err);
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++) {
            double v = f(i, j, draw);
            if (dt == KBV_DT_F32) ((float *)t->data)[i * c + j] = (float)v;
            else if (dt == KBV_DT_I64) ((int64_t *)t->data)[i * c + j] = (int64_t)v;
            else ((uint8_t *)t->data)[i * c + j] = v != 0;
        }
}

static double tril(int64_t i, int64_t j, int d) { return j > i ? 0 : 1 + ((i * 31 + j * 17 + d * 7) % 13); }
static double sym(int64_t i, int64_t j, int d) { return (double)((i + j) * (d + 1) % 9) - 4; }
static double ramp(int64_t i, int64_t j, int d) { return (double)(i * 10 + j); }
static double ints(int64_t i, int64_t j, int d) { return (double)((i * 7 + j * 3 + d) % 50); }
static double bools(int64_t i, int64_t j, int d) { return (i + j + d) % 4 == 0; }

int main(void) {
    probe_input p;
    kbv_tensor t;
    /* lower-triangular draws: the strict upper triangle is zero in all of them */
    probe_init(&p);
    for (int d = 0; d < 3; d++) fill(&t, KBV_DT_F32, 6, 6, tril, d), probe_add(&p, &t), kbv_tensor_free(&t);
    CHECK(p.consistent && !p.fixed && p.zero_count == 15 && p.zeros[1] == 1 && p.zeros[6] == 0);
    CHECK(!p.symmetric && p.min == 0 && p.max >= 12);
    json_t *j = probe_to_json(&p);
    CHECK(json_integer_value(json_object_get(j, "zeros")) == 15 && json_is_false(json_object_get(j, "fixed")));
    json_decref(j);
    probe_free(&p);
    /* symmetric draws */
    probe_init(&p);
    for (int d = 0; d < 3; d++) fill(&t, KBV_DT_F32, 5, 5, sym, d), probe_add(&p, &t), kbv_tensor_free(&t);
    CHECK(p.symmetric && !p.fixed);
    probe_free(&p);
    /* the same values under every seed: fixed */
    probe_init(&p);
    for (int d = 0; d < 3; d++) fill(&t, KBV_DT_F32, 3, 4, ramp, d), probe_add(&p, &t), kbv_tensor_free(&t);
    j = probe_to_json(&p);
    CHECK(p.fixed && json_is_true(json_object_get(j, "fixed")));
    json_decref(j);
    probe_free(&p);
    /* integers: the range over all draws */
    probe_init(&p);
    for (int d = 0; d < 3; d++) fill(&t, KBV_DT_I64, 20, 20, ints, d), probe_add(&p, &t), kbv_tensor_free(&t);
    CHECK(p.min == 0 && p.max == 49 && p.zeros == NULL);
    probe_free(&p);
    /* booleans: the share of true */
    probe_init(&p);
    for (int d = 0; d < 2; d++) fill(&t, KBV_DT_BOOL, 8, 8, bools, d), probe_add(&p, &t), kbv_tensor_free(&t);
    j = probe_to_json(&p);
    CHECK_NEAR(json_real_value(json_object_get(j, "true_fraction")), 0.25, 0.02);
    json_decref(j);
    probe_free(&p);
    /* a shape that changes with the seed: inconsistent, not fixed */
    probe_init(&p);
    fill(&t, KBV_DT_F32, 3, 3, sym, 0), probe_add(&p, &t), kbv_tensor_free(&t);
    fill(&t, KBV_DT_F32, 4, 3, sym, 1), probe_add(&p, &t), kbv_tensor_free(&t);
    CHECK(!p.consistent && !p.fixed);
    probe_free(&p);
    /* float32 takes a block-wise scan: NaN and Inf are skipped in min/max and reported, in
     * any block, and zeros are kept only where every draw had one (across block edges) */
    {
        int64_t shape[1] = {10000};
        kbv_err err;
        probe_init(&p);
        for (int d = 0; d < 2; d++) {
            kbv_tensor_alloc(&t, KBV_DT_F32, 1, shape, &err);
            float *x = t.data;
            for (int64_t i = 0; i < 10000; i++) x[i] = i % 1000 == 0 ? 0.0f : (float)((i * 37 + d) % 101) - 50.0f;
            if (d == 1) x[5000] = NAN, x[9999] = INFINITY, x[4100] = -1e30f, x[123] = 0.0f;
            probe_add(&p, &t), kbv_tensor_free(&t);
        }
        /* zeros in both draws: every 1000th but 5000 (NaN in the second draw); the ramp's
         * zeros ((37i + d) % 101 == 50) never fall on the same element in both draws */
        int64_t want = 9;
        CHECK(p.nonfinite && p.min == (double)-1e30f && p.max == 50);
        CHECK(p.zero_count == want && p.zeros[4000] == 1 && p.zeros[5000] == 0 && p.zeros[123] == 0);
        probe_free(&p);
    }
    CHECK_DONE("test_probe");
}
