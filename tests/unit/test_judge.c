/* test_judge.c -- judge.c: tolerance edges, NaN/Inf placement, shape and dtype checks. */
#include <math.h>
#include <stdlib.h>

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
    /* ---- the calibrated rule ---- */
    enum { M = 4096 };
    double *ov = malloc(sizeof(double) * M), *tv = malloc(sizeof(double) * M), *sv = malloc(sizeof(double) * M);
    double *cv = malloc(sizeof(double) * M);
    for (int i = 0; i < M; i++) {
        ov[i] = sin(i * 0.37) * 10;
        tv[i] = ov[i] * (1 + ((i % 7) - 3) * 1e-4); /* TF32-like error, ~1e-4 relative */
        sv[i] = ov[i] * (1 + ((i % 5) - 2) * 1e-7); /* fp32-like error */
    }
    kbv_tensor ot, t, st, cand;
    make(&ot, KBV_DT_F64, M, ov), make(&t, KBV_DT_F32, M, tv), make(&st, KBV_DT_F32, M, sv);
    judge_calib cal;
    judge_calibrate(&ot, &t, &st, &cal);
    CHECK(cal.dtype == KBV_DT_F32 && cal.floor == 1e-6);
    CHECK(cal.tf32.norm_rel > 1e-4 && cal.tf32.norm_rel < 3e-4);
    CHECK(cal.strict.norm_rel < 2e-7);
    CHECK_NEAR(cal.tol_norm, JUDGE_K * cal.tf32.norm_rel + 1e-6, 1e-15);
    judge_result jr;
    /* an fp32-accurate candidate: passes, class fp32 */
    for (int i = 0; i < M; i++) cv[i] = ov[i] * (1 + ((i % 3) - 1) * 1e-7);
    make(&cand, KBV_DT_F32, M, cv);
    judge_calibrated(&ot, &st, &t, &cal, &cand, &jr);
    CHECK(jr.passed && jr.klass == JUDGE_FP32);
    kbv_tensor_free(&cand);
    /* a TF32-accurate candidate: passes, class tf32 */
    for (int i = 0; i < M; i++) cv[i] = ov[i] * (1 + ((i % 11) - 5) * 0.8e-4);
    make(&cand, KBV_DT_F32, M, cv);
    judge_calibrated(&ot, &st, &t, &cal, &cand, &jr);
    CHECK(jr.passed && jr.klass == JUDGE_TF32);
    kbv_tensor_free(&cand);
    /* a bfloat16-accurate candidate (~4e-3): fails, class half */
    for (int i = 0; i < M; i++) cv[i] = ov[i] * (1 + ((i % 11) - 5) * 8e-4);
    make(&cand, KBV_DT_F32, M, cv);
    judge_calibrated(&ot, &st, &t, &cal, &cand, &jr);
    CHECK(!jr.passed && jr.klass == JUDGE_HALF);
    CHECK(strstr(jr.reason, "relative error") != NULL);
    kbv_tensor_free(&cand);
    /* one element badly wrong: the 2-norm barely moves, the elementwise bound catches it */
    for (int i = 0; i < M; i++) cv[i] = sv[i];
    cv[M / 2] = ov[M / 2] + 0.2;
    make(&cand, KBV_DT_F32, M, cv);
    judge_calibrated(&ot, &st, &t, &cal, &cand, &jr);
    CHECK(!jr.passed);
    CHECK(strstr(jr.reason, "1 elements exceed the elementwise bound") != NULL);
    kbv_tensor_free(&cand);
    /* a NaN where the oracle has a number */
    for (int i = 0; i < M; i++) cv[i] = sv[i];
    cv[7] = NAN;
    make(&cand, KBV_DT_F32, M, cv);
    judge_calibrated(&ot, &st, &t, &cal, &cand, &jr);
    CHECK(!jr.passed && strstr(jr.reason, "NaN/Inf") != NULL);
    kbv_tensor_free(&cand);
    /* wrong dtype */
    make(&cand, KBV_DT_F64, M, sv);
    judge_calibrated(&ot, &st, &t, &cal, &cand, &jr);
    CHECK(!jr.passed && strstr(jr.reason, "dtype float64, expected float32") != NULL);
    kbv_tensor_free(&cand);

    /* validity of a hidden case */
    char why[200];
    CHECK(judge_valid_case(&ot, 0, 0, why, sizeof why) == 1);
    kbv_tensor z;
    double zeros[4] = {0, 0, 0, 0}, nanv[3] = {1, NAN, 2};
    make(&z, KBV_DT_F64, 4, zeros);
    CHECK(judge_valid_case(&z, 0, 0, why, sizeof why) == 0 && strstr(why, "constant") != NULL);
    CHECK(judge_valid_case(&z, 0, 1, why, sizeof why) == 1); /* the nominal case is constant too */
    kbv_tensor_free(&z);
    make(&z, KBV_DT_F64, 3, nanv);
    CHECK(judge_valid_case(&z, 0, 0, why, sizeof why) == 0 && strstr(why, "NaN") != NULL);
    CHECK(judge_valid_case(&z, 1, 0, why, sizeof why) == 1);
    kbv_tensor_free(&z);

    /* KernelBench's allclose: rtol scales the candidate, NaN fails */
    double kr[2] = {1, 100}, kc[2] = {1.00005, 100.009};
    kbv_tensor a2, b2;
    make(&a2, KBV_DT_F32, 2, kr), make(&b2, KBV_DT_F32, 2, kc);
    double mabs;
    CHECK(judge_kernelbench_allclose(&a2, &b2, 1e-4, &mabs, why, sizeof why) == 1);
    ((float *)b2.data)[1] = 100.03f;
    CHECK(judge_kernelbench_allclose(&a2, &b2, 1e-4, &mabs, why, sizeof why) == 0);
    ((float *)b2.data)[1] = NAN;
    CHECK(judge_kernelbench_allclose(&a2, &b2, 1e-2, &mabs, why, sizeof why) == 0);
    kbv_tensor_free(&a2), kbv_tensor_free(&b2);
    kbv_tensor_free(&ot), kbv_tensor_free(&t), kbv_tensor_free(&st);
    free(ov), free(tv), free(sv), free(cv);
    CHECK_DONE("test_judge");
}
