/* test_judge.c -- judge.c: the calibrated rule (classes, norm and elementwise bounds, NaN/Inf
 * placement, dtype, shape, integers), case validity, and KernelBench's allclose. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- what the judge's one-pass loops must give, to the bit: one plain loop per figure, every
 * element read through kbv_tensor_get (judge.c's code before it computed several figures in
 * one typed pass). */
static void plain_error(const kbv_tensor *o, const kbv_tensor *x, judge_err *e) {
    memset(e, 0, sizeof *e);
    double num = 0, den = 0;
    for (int64_t i = 0; i < kbv_tensor_numel(o); i++) {
        double ov = kbv_tensor_get(o, i), xv = kbv_tensor_get(x, i);
        if (!isfinite(ov) || !isfinite(xv)) {
            e->nonfinite_mismatch += !((isnan(ov) && isnan(xv)) || (isinf(ov) && ov == xv));
            continue;
        }
        double d = fabs(xv - ov);
        num += d * d, den += ov * ov;
        if (d > e->max_abs) e->max_abs = d;
        if (ov != 0 && d / fabs(ov) > e->max_rel) e->max_rel = d / fabs(ov);
    }
    e->norm_rel = den > 0 ? sqrt(num / den) : (num > 0 ? INFINITY : 0);
}

static double plain_rms(const kbv_tensor *o) {
    double ss = 0;
    int64_t m = 0;
    for (int64_t i = 0; i < kbv_tensor_numel(o); i++) {
        double v = kbv_tensor_get(o, i);
        if (isfinite(v)) ss += v * v, m++;
    }
    return m ? sqrt(ss / (double)m) : 0;
}

static int64_t plain_bound(const kbv_tensor *o, const kbv_tensor *x, const judge_calib *c, int64_t *first) {
    int64_t bad = 0;
    *first = -1;
    for (int64_t i = 0; i < kbv_tensor_numel(o); i++) {
        double ov = kbv_tensor_get(o, i), xv = kbv_tensor_get(x, i);
        if (isfinite(ov) && fabs(xv - ov) > c->tol_abs + c->floor * (fabs(ov) + c->rms)) {
            if (*first < 0) *first = i;
            bad++;
        }
    }
    return bad;
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }
static int same_err(const judge_err *a, const judge_err *b) {
    return same_bits(a->norm_rel, b->norm_rel) && same_bits(a->max_abs, b->max_abs) && same_bits(a->max_rel, b->max_rel) &&
           a->nonfinite_mismatch == b->nonfinite_mismatch;
}

static uint64_t lcg(uint64_t *s) { return *s = *s * 6364136223846793005ULL + 1442695040888963407ULL, *s >> 11; }

/* n values of dtype dt near base (relative noise rel), with NaN, Inf and zeros sprinkled in
 * where special is set (one element in 97, at positions drawn from the seed). */
static void noisy(kbv_tensor *t, kbv_dtype dt, int64_t n, const double *base, double rel, int special, uint64_t seed) {
    kbv_err err;
    int64_t shape[1] = {n};
    kbv_tensor_alloc(t, dt, 1, shape, &err);
    for (int64_t i = 0; i < n; i++) {
        double u = (double)(lcg(&seed) % 2000001) / 1e6 - 1, v = base[i] * (1 + rel * u);
        uint64_t pick = lcg(&seed) % 97;
        if (special && pick == 0) v = NAN;
        else if (special && pick == 1) v = (lcg(&seed) & 1) ? INFINITY : -INFINITY;
        else if (special && pick == 2) v = 0;
        if (dt == KBV_DT_F64) ((double *)t->data)[i] = v;
        else if (dt == KBV_DT_F32) ((float *)t->data)[i] = (float)v;
        else if (dt == KBV_DT_F16) ((uint16_t *)t->data)[i] = isnan(v) ? 0x7e00 : isinf(v) ? (v > 0 ? 0x7c00 : 0xfc00) : 0x3c00 + (uint16_t)(i % 512);
        else if (dt == KBV_DT_I32) ((int32_t *)t->data)[i] = (int32_t)(isfinite(v) ? v : 7);
    }
}

/* Every figure of judge_calibrate, judge_calibrated, judge_error and KernelBench's allclose
 * against the plain loops, for the dtype combinations the judge has loops for and for others. */
static void one_pass_matches(kbv_dtype od, kbv_dtype rd, kbv_dtype sd, kbv_dtype xd, int special, uint64_t seed) {
    enum { N = 3 * 4096 + 5 };
    double *base = malloc(sizeof(double) * N);
    for (int i = 0; i < N; i++) base[i] = sin(i * 0.013 + (double)seed) * 50;
    kbv_tensor o, tf, st, x;
    noisy(&o, od, N, base, 0, special, seed), noisy(&tf, rd, N, base, 1e-4, special, seed + 1), noisy(&st, sd, N, base, 1e-7, 0, seed + 2);
    noisy(&x, xd, N, base, 2e-4, special, seed + 3);
    for (int64_t i = 500; i < N && kbv_dtype_is_float(xd) && xd != KBV_DT_F16; i += 1000) /* outliers for the elementwise bound */
        if (xd == KBV_DT_F32) ((float *)x.data)[i] *= 1.002f;
        else ((double *)x.data)[i] *= 1.002;
    judge_calib c;
    judge_calibrate(&o, &tf, &st, &c);
    judge_err pe;
    plain_error(&o, &tf, &pe);
    CHECK(same_err(&c.tf32, &pe));
    plain_error(&o, &st, &pe);
    CHECK(same_err(&c.strict, &pe));
    CHECK(same_bits(c.rms, plain_rms(&o)));
    judge_err e;
    judge_error(&o, &x, &e);
    plain_error(&o, &x, &pe);
    CHECK(same_err(&e, &pe));
    judge_result r;
    c.dtype = x.dtype; /* judged, not refused for its dtype */
    judge_calibrated(&o, &st, &tf, &c, &x, &r);
    CHECK(same_err(&r.err, &pe));
    if (kbv_dtype_is_float(xd) && !pe.nonfinite_mismatch && pe.norm_rel <= c.tol_norm) {
        int64_t first, bad = plain_bound(&o, &x, &c, &first);
        CHECK(r.passed == (bad == 0) && (bad > 0 || xd == KBV_DT_F16));
        if (bad) {
            char want[64];
            snprintf(want, sizeof want, "%lld elements exceed the elementwise bound; first: element %lld ", (long long)bad, (long long)first);
            CHECK(strstr(r.reason, want) != NULL);
        }
    }
    double ma;
    char why[256];
    int close = judge_kernelbench_allclose(&tf, &x, 1e-3, &ma, why, sizeof why);
    double pma = 0;
    int64_t pbad = 0;
    for (int64_t i = 0; i < N; i++) {
        double a = kbv_tensor_get(&tf, i), b = kbv_tensor_get(&x, i), d = fabs(a - b);
        if (isnan(d)) pbad += !(isinf(a) && a == b);
        else pma = d > pma ? d : pma, pbad += !(d <= 1e-3 + 1e-3 * fabs(b));
    }
    CHECK(close == (pbad == 0) && same_bits(ma, pma));
    kbv_tensor_free(&o), kbv_tensor_free(&tf), kbv_tensor_free(&st), kbv_tensor_free(&x);
    free(base);
}

/* NaN and Inf found wherever they lie: before, at and after the scan's block edges. */
static void nonfinite_anywhere(kbv_dtype dt) {
    enum { N = 2 * 4096 + 3 };
    static const int64_t at[] = {0, 4095, 4096, 4097, 8191, 8192, N - 1};
    double *v = calloc(N, sizeof *v);
    for (int i = 0; i < N; i++) v[i] = i % 3 ? 3.4e38 : -1e-310; /* large and subnormal values are finite */
    kbv_tensor t;
    make(&t, dt, N, v);
    CHECK(judge_has_nonfinite(&t) == 0);
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
        for (int s = 0; s < 3; s++) {
            double bad = s == 0 ? NAN : s == 1 ? INFINITY : -INFINITY;
            if (dt == KBV_DT_F32) ((float *)t.data)[at[k]] = (float)bad;
            else ((double *)t.data)[at[k]] = bad;
            CHECK(judge_has_nonfinite(&t) == 1);
            if (dt == KBV_DT_F32) ((float *)t.data)[at[k]] = 1;
            else ((double *)t.data)[at[k]] = 1;
        }
    }
    CHECK(judge_has_nonfinite(&t) == 0);
    kbv_tensor_free(&t);
    free(v);
}

int main(void) {
    CHECK(judge_floor(KBV_DT_F32) == 1e-5 && judge_floor(KBV_DT_BF16) == 1.6e-2 && judge_floor(KBV_DT_F64) == 1e-12);
    CHECK_STR(judge_class_name(JUDGE_HALF), "half");
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
    CHECK(cal.dtype == KBV_DT_F32 && cal.floor == 1e-5);
    CHECK(cal.tf32.norm_rel > 1e-4 && cal.tf32.norm_rel < 3e-4);
    CHECK(cal.strict.norm_rel < 2e-7);
    CHECK_NEAR(cal.tol_norm, JUDGE_K * cal.tf32.norm_rel + 1e-5, 1e-15);
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
    /* the honest order of additions (weight_prepack's kernel on a low mixed_magnitude case,
     * H200 2026-12-03): a bias-dominated element off by 2.3e-6 relative, a few of them; the
     * floor (1e-5) takes it, the class stays fp32 */
    for (int i = 0; i < M; i++) cv[i] = sv[i];
    for (int i = 0; i < 13; i++) cv[i * 97] = ov[i * 97] * (1 + 2.3e-6);
    make(&cand, KBV_DT_F32, M, cv);
    judge_calibrated(&ot, &st, &t, &cal, &cand, &jr);
    CHECK(jr.passed && jr.klass == JUDGE_FP32);
    kbv_tensor_free(&cand);
    /* ... but an element off by 1e-4 of the output's scale still fails */
    for (int i = 0; i < M; i++) cv[i] = sv[i];
    cv[100] = ov[100] + 2e-4 * (fabs(ov[100]) + cal.rms) + JUDGE_K * cal.tf32.max_abs;
    make(&cand, KBV_DT_F32, M, cv);
    judge_calibrated(&ot, &st, &t, &cal, &cand, &jr);
    CHECK(!jr.passed && strstr(jr.reason, "1 elements exceed the elementwise bound") != NULL);
    kbv_tensor_free(&cand);
    {
        /* A float32 softmax whose row sums are added left to right (the leaderboard's
         * one-thread-per-row kernels on KernelBench's level 1 problem 23, H200 2026-12-03):
         * each row off by one factor of a few 1e-6, where PyTorch's tree sum is 2e-7 off. It
         * passes, class fp32 (with a 1e-6 floor it was called half precision, a hack). */
        double *bv = malloc(sizeof(double) * M);
        for (int i = 0; i < M; i++) bv[i] = ov[i] * (1 + ((i % 5) - 2) * 1e-7);
        kbv_tensor bt;
        judge_calib c2;
        make(&bt, KBV_DT_F32, M, bv);
        judge_calibrate(&ot, &bt, &bt, &c2);
        CHECK(c2.tf32.norm_rel < 2e-7 && c2.tol_norm < 1.1e-5);
        for (int i = 0; i < M; i++) cv[i] = ov[i] * (1 + 4e-6 * ((i / 256) % 3 - 1));
        make(&cand, KBV_DT_F32, M, cv);
        judge_calibrated(&ot, &bt, &bt, &c2, &cand, &jr);
        CHECK(jr.err.norm_rel > 2e-6 && jr.passed && jr.klass == JUDGE_FP32);
        kbv_tensor_free(&cand);
        /* 3e-5 off: fails, but no half-precision arithmetic gives so small an error: wrong */
        for (int i = 0; i < M; i++) cv[i] = ov[i] * (1 + 4e-5 * ((i / 256) % 3 - 1));
        make(&cand, KBV_DT_F32, M, cv);
        judge_calibrated(&ot, &bt, &bt, &c2, &cand, &jr);
        CHECK(jr.err.norm_rel > 2e-5 && jr.err.norm_rel < JUDGE_HALF_MIN && !jr.passed && jr.klass == JUDGE_WRONG);
        kbv_tensor_free(&cand);
        /* the same values rounded to float16's 11 significant bits: half */
        for (int i = 0; i < M; i++) {
            int e;
            double m = frexp(ov[i], &e);
            cv[i] = ldexp(nearbyint(ldexp(m, 11)), e - 11);
        }
        make(&cand, KBV_DT_F32, M, cv);
        judge_calibrated(&ot, &bt, &bt, &c2, &cand, &jr);
        CHECK(jr.err.norm_rel > 1e-4 && !jr.passed && jr.klass == JUDGE_HALF);
        kbv_tensor_free(&cand);
        kbv_tensor_free(&bt);
        free(bv);
    }
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

    /* wrong shape */
    make(&cand, KBV_DT_F32, M / 2, sv);
    judge_calibrated(&ot, &st, &t, &cal, &cand, &jr);
    CHECK(!jr.passed && strstr(jr.reason, "shape [2048], expected [4096]") != NULL);
    kbv_tensor_free(&cand);
    /* integer outputs: equal to the strict or the baseline run, nothing else */
    double iv[3] = {1, 2, 3}, iw[3] = {1, 2, 4};
    kbv_tensor io, ic;
    make(&io, KBV_DT_I64, 3, iv), make(&ic, KBV_DT_I64, 3, iv);
    judge_calib ical;
    judge_calibrate(&io, &io, &io, &ical);
    judge_calibrated(&io, &io, &io, &ical, &ic, &jr);
    CHECK(jr.passed);
    kbv_tensor_free(&ic);
    make(&ic, KBV_DT_I64, 3, iw);
    judge_calibrated(&io, &io, &io, &ical, &ic, &jr);
    CHECK(!jr.passed && strstr(jr.reason, "integer output differs") != NULL);
    kbv_tensor_free(&ic), kbv_tensor_free(&io);

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
    judge_facts f;
    judge_facts_of(&z, &f); /* a NaN: non-finite, and not one value everywhere */
    CHECK(f.nonfinite == 1 && f.constant == 0);
    kbv_tensor_free(&z);
    double infs[2] = {INFINITY, INFINITY};
    make(&z, KBV_DT_F64, 2, infs);
    judge_facts_of(&z, &f);
    CHECK(f.nonfinite == 1 && f.constant == 1 && isinf(f.value));
    CHECK(judge_valid_facts(&f, 1, 0, why, sizeof why) == 0 && strstr(why, "inf everywhere") != NULL);
    kbv_tensor_free(&z);
    /* the worker's facts (kbv check) are judged by the same rule */
    judge_facts wf = {.nonfinite = 0, .constant = 1, .value = 0.5};
    CHECK(judge_valid_facts(&wf, 0, 0, why, sizeof why) == 0 && strstr(why, "0.5 everywhere") != NULL);
    CHECK(judge_valid_facts(&wf, 0, 1, why, sizeof why) == 1);

    /* KernelBench's allclose: rtol scales the candidate, NaN fails */
    double kr[2] = {1, 100}, kc[2] = {1.00005, 100.009};
    kbv_tensor a2, b2;
    make(&a2, KBV_DT_F32, 2, kr), make(&b2, KBV_DT_F32, 2, kc);
    double mabs;
    CHECK(judge_kernelbench_allclose(&a2, &b2, 1e-4, &mabs, why, sizeof why) == 1);
    ((float *)b2.data)[1] = 100.03f;
    CHECK(judge_kernelbench_allclose(&a2, &b2, 1e-4, &mabs, why, sizeof why) == 0);
    CHECK(strstr(why, "1 of 2 elements not close (max_abs_err 0.0299") != NULL && !strstr(why, "not finite"));
    ((float *)b2.data)[1] = NAN;
    CHECK(judge_kernelbench_allclose(&a2, &b2, 1e-2, &mabs, why, sizeof why) == 0);
    CHECK(strstr(why, "1 of 2 elements not close (1 not finite, max_abs_err") != NULL);
    /* a NaN beside a finite element far off: both counted, the finite one's difference kept */
    ((float *)b2.data)[0] = 3;
    CHECK(judge_kernelbench_allclose(&a2, &b2, 1e-2, &mabs, why, sizeof why) == 0 && mabs == 2);
    CHECK(strstr(why, "2 of 2 elements not close (1 not finite, max_abs_err 2,") != NULL);
    kbv_tensor_free(&a2), kbv_tensor_free(&b2);
    /* judge_error's loop for float64 vs float32 gives what the generic one (an int64 oracle
     * with the same values) gives, non-finite elements included */
    {
        const double ovals[6] = {1, 2, 3, 0, -4, 5}, xvals[6] = {1.5, 2, NAN, 0, -4, INFINITY};
        kbv_tensor of, oi, xf;
        make(&of, KBV_DT_F64, 6, ovals), make(&oi, KBV_DT_I64, 6, ovals), make(&xf, KBV_DT_F32, 6, xvals);
        judge_err ef, ei;
        judge_error(&of, &xf, &ef), judge_error(&oi, &xf, &ei);
        CHECK(ef.nonfinite_mismatch == 2 && ef.nonfinite_mismatch == ei.nonfinite_mismatch);
        CHECK(ef.max_abs == 0.5 && ef.max_abs == ei.max_abs && ef.max_rel == 0.5 && ef.max_rel == ei.max_rel);
        CHECK(ef.norm_rel == ei.norm_rel && fabs(ef.norm_rel - 0.5 / sqrt(21.0)) < 1e-15);
        kbv_tensor_free(&of), kbv_tensor_free(&oi), kbv_tensor_free(&xf);
    }
    kbv_tensor_free(&ot), kbv_tensor_free(&t), kbv_tensor_free(&st);
    free(ov), free(tv), free(sv), free(cv);
    /* the one-pass loops against one plain loop per figure, bit for bit: the typed pairs, and
     * combinations read element by element (float16 runs, int32, strict and baseline apart) */
    for (int special = 0; special < 2; special++) {
        one_pass_matches(KBV_DT_F64, KBV_DT_F32, KBV_DT_F32, KBV_DT_F32, special, 11);
        one_pass_matches(KBV_DT_F32, KBV_DT_F32, KBV_DT_F32, KBV_DT_F32, special, 12);
        one_pass_matches(KBV_DT_F64, KBV_DT_F64, KBV_DT_F64, KBV_DT_F64, special, 13);
        one_pass_matches(KBV_DT_F64, KBV_DT_F16, KBV_DT_F16, KBV_DT_F16, special, 14);
        one_pass_matches(KBV_DT_F64, KBV_DT_F32, KBV_DT_F64, KBV_DT_F32, special, 15);
        one_pass_matches(KBV_DT_F64, KBV_DT_F32, KBV_DT_F32, KBV_DT_F64, special, 16);
        one_pass_matches(KBV_DT_F64, KBV_DT_I32, KBV_DT_I32, KBV_DT_I32, special, 17);
    }
    nonfinite_anywhere(KBV_DT_F32), nonfinite_anywhere(KBV_DT_F64);
    CHECK_DONE("test_judge");
}
