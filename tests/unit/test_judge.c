/* test_judge.c -- judge.c: tolerance edges, NaN/Inf placement, shape and dtype checks. */
#include <math.h>

#include "check.h"
#include "judge.h"

static void make(kbv_tensor *t, kbv_dtype dt, int n, const double *v) {
    kbv_err err;
    int64_t shape[1] = {n};
    kbv_tensor_alloc(t, dt, 1, shape, &err);
    for (int i = 0; i < n; i++) {
        if (dt == KBV_DT_F32) ((float *)t->data)[i] = (float)v[i];
        else if (dt == KBV_DT_F64) ((double *)t->data)[i] = v[i];
        else if (dt == KBV_DT_I64) ((int64_t *)t->data)[i] = (int64_t)v[i];
    }
}

int main(void) {
    kbv_tensor r, c;
    judge_cmp o;
    judge_tol tol = judge_default_tol(KBV_DT_F32);
    CHECK(tol.atol == 1e-4 && tol.rtol == 1e-4);
    CHECK(judge_default_tol(KBV_DT_BF16).atol == 1e-2);
    CHECK(judge_default_tol(KBV_DT_I64).atol == 0);

    /* Inside and just outside atol + rtol*|ref| (float64 so the edge is exact enough). */
    double ref[3] = {0, 100, -2}, in[3] = {0.00009, 100.0101, -2.0002}, out[3] = {0.00011, 100.0101, -2.0002};
    make(&r, KBV_DT_F64, 3, ref), make(&c, KBV_DT_F64, 3, in);
    judge_compare(&r, &c, tol, &o);
    CHECK(o.passed && o.n_bad == 0 && o.first_bad == -1);
    CHECK_NEAR(o.max_abs_err, 0.0101, 1e-9);
    CHECK_NEAR(o.max_rel_err, 0.000101, 1e-9); /* 0.0101 / 100 */
    kbv_tensor_free(&c);
    make(&c, KBV_DT_F64, 3, out);
    judge_compare(&r, &c, tol, &o);
    CHECK(!o.passed && o.n_bad == 1 && o.first_bad == 0);
    CHECK(strstr(o.reason, "element 0") != NULL);
    kbv_tensor_free(&r), kbv_tensor_free(&c);

    /* rtol scales the reference, not the candidate: a huge wrong value does not pass. */
    double r2[1] = {1}, c2[1] = {1e6};
    make(&r, KBV_DT_F64, 1, r2), make(&c, KBV_DT_F64, 1, c2);
    judge_compare(&r, &c, tol, &o);
    CHECK(!o.passed);
    kbv_tensor_free(&r), kbv_tensor_free(&c);

    /* NaN must match NaN; Inf must match Inf of the same sign. */
    double rn[4] = {NAN, INFINITY, -INFINITY, 1}, cn[4] = {NAN, INFINITY, -INFINITY, 1};
    make(&r, KBV_DT_F32, 4, rn), make(&c, KBV_DT_F32, 4, cn);
    judge_compare(&r, &c, tol, &o);
    CHECK(o.passed);
    ((float *)c.data)[1] = -INFINITY;
    ((float *)c.data)[3] = NAN;
    judge_compare(&r, &c, tol, &o);
    CHECK(!o.passed && o.n_bad == 2 && o.first_bad == 1);
    CHECK(strstr(o.reason, "2 of 4 elements") != NULL);
    ((float *)c.data)[1] = INFINITY, ((float *)c.data)[3] = 1;
    ((float *)c.data)[0] = 0; /* NaN expected, a number given */
    judge_compare(&r, &c, tol, &o);
    CHECK(!o.passed && o.first_bad == 0);
    kbv_tensor_free(&r), kbv_tensor_free(&c);

    /* Integers compare exactly. */
    double ri[2] = {3, 4}, ci[2] = {3, 5};
    make(&r, KBV_DT_I64, 2, ri), make(&c, KBV_DT_I64, 2, ci);
    judge_compare(&r, &c, judge_default_tol(KBV_DT_I64), &o);
    CHECK(!o.passed && o.first_bad == 1);
    kbv_tensor_free(&c);

    /* dtype and shape mismatches are failures with a reason. */
    make(&c, KBV_DT_F64, 2, ri);
    judge_compare(&r, &c, tol, &o);
    CHECK(!o.passed);
    CHECK(strstr(o.reason, "dtype float64, expected int64") != NULL);
    kbv_tensor_free(&c);
    make(&c, KBV_DT_I64, 1, ri);
    judge_compare(&r, &c, tol, &o);
    CHECK(!o.passed);
    CHECK(strstr(o.reason, "shape [1], expected [2]") != NULL);
    kbv_tensor_free(&r), kbv_tensor_free(&c);
    CHECK_DONE("test_judge");
}
