/* judge.c -- the calibrated comparison and KernelBench's allclose (see judge.h).
 * Reads tensors element by element in double precision; each function reads its tensors once,
 * computing all of its figures in that one pass, every sum in index order.
 */
#include "judge.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *judge_class_name(judge_class c) {
    static const char *n[] = {"fp32", "tf32", "half", "wrong"};
    return c >= 0 && c <= JUDGE_WRONG ? n[c] : "wrong";
}

double judge_floor(kbv_dtype dt) {
    switch (dt) {
    case KBV_DT_F64: return 1e-12;
    case KBV_DT_F16: return 2e-3;
    case KBV_DT_BF16: return 1.6e-2;
    default: return 1e-5;
    }
}

static int same_shape(const kbv_tensor *a, const kbv_tensor *b) {
    if (a->ndim != b->ndim) return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

static inline void err_step(judge_err *e, double *num, double *den, double ov, double xv) {
    if (!isfinite(ov) || !isfinite(xv)) {
        int same = (isnan(ov) && isnan(xv)) || (isinf(ov) && ov == xv);
        e->nonfinite_mismatch += !same;
        return;
    }
    double d = fabs(xv - ov);
    *num += d * d, *den += ov * ov;
    if (d > e->max_abs) e->max_abs = d;
    if (ov != 0 && d > e->max_rel * fabs(ov)) { /* the division only where it may raise the max */
        double r = d / fabs(ov);
        if (r > e->max_rel) e->max_rel = r;
    }
}

static void err_finish(judge_err *e, double num, double den) { e->norm_rel = den > 0 ? sqrt(num / den) : (num > 0 ? INFINITY : 0); }

/* The element loops. Each is written once per common combination of dtypes (the oracle
 * float64, the runs float32; or all float32, or all float64), so that the element type is not
 * decided again for every element, and any other combination reads through kbv_tensor_get.
 * STEP(i, a, b[, c]) gets element i of each tensor as a double (exact for every float type).
 * A loop adds every sum in index order, as one loop per figure did: which loop ran, and how
 * many figures it computes at once, changes no bit of any figure. */
#define TYPED2(TA, TB, A, B, n, STEP)                          \
    do {                                                       \
        const TA *pa_ = (const TA *)(A)->data;                 \
        const TB *pb_ = (const TB *)(B)->data;                 \
        for (int64_t i_ = 0; i_ < (n); i_++) {                 \
            double a_ = (double)pa_[i_], b_ = (double)pb_[i_]; \
            STEP(i_, a_, b_);                                  \
        }                                                      \
    } while (0)
#define LOOP2(A, B, n, STEP)                                                                    \
    do {                                                                                        \
        kbv_dtype da_ = (A)->dtype, db_ = (B)->dtype;                                           \
        if (da_ == KBV_DT_F64 && db_ == KBV_DT_F32) TYPED2(double, float, A, B, n, STEP);       \
        else if (da_ == KBV_DT_F32 && db_ == KBV_DT_F32) TYPED2(float, float, A, B, n, STEP);   \
        else if (da_ == KBV_DT_F64 && db_ == KBV_DT_F64) TYPED2(double, double, A, B, n, STEP); \
        else                                                                                    \
            for (int64_t i_ = 0; i_ < (n); i_++) {                                              \
                double a_ = kbv_tensor_get(A, i_), b_ = kbv_tensor_get(B, i_);                  \
                STEP(i_, a_, b_);                                                               \
            }                                                                                   \
    } while (0)
#define TYPED3(TA, TB, A, B, C, n, STEP)                                             \
    do {                                                                             \
        const TA *pa_ = (const TA *)(A)->data;                                       \
        const TB *pb_ = (const TB *)(B)->data, *pc_ = (const TB *)(C)->data;         \
        for (int64_t i_ = 0; i_ < (n); i_++) {                                       \
            double a_ = (double)pa_[i_], b_ = (double)pb_[i_], c_ = (double)pc_[i_]; \
            STEP(i_, a_, b_, c_);                                                    \
        }                                                                            \
    } while (0)
#define LOOP3(A, B, C, n, STEP)                                                                            \
    do {                                                                                                   \
        kbv_dtype da_ = (A)->dtype, db_ = (B)->dtype;                                                      \
        if (db_ != (C)->dtype) da_ = KBV_DT_COUNT;                                                         \
        if (da_ == KBV_DT_F64 && db_ == KBV_DT_F32) TYPED3(double, float, A, B, C, n, STEP);               \
        else if (da_ == KBV_DT_F32 && db_ == KBV_DT_F32) TYPED3(float, float, A, B, C, n, STEP);           \
        else if (da_ == KBV_DT_F64 && db_ == KBV_DT_F64) TYPED3(double, double, A, B, C, n, STEP);         \
        else                                                                                               \
            for (int64_t i_ = 0; i_ < (n); i_++) {                                                         \
                double a_ = kbv_tensor_get(A, i_), b_ = kbv_tensor_get(B, i_), c_ = kbv_tensor_get(C, i_); \
                STEP(i_, a_, b_, c_);                                                                      \
            }                                                                                              \
    } while (0)

void judge_error(const kbv_tensor *o, const kbv_tensor *x, judge_err *e) {
    memset(e, 0, sizeof *e);
    double num = 0, den = 0;
    int64_t n = kbv_tensor_numel(o);
#define STEP(i, ov, xv) err_step(e, &num, &den, ov, xv)
    LOOP2(o, x, n, STEP);
#undef STEP
    err_finish(e, num, den);
}

/* One pass over the oracle and both of PyTorch's runs: the oracle's RMS and each run's error. */
void judge_calibrate(const kbv_tensor *o, const kbv_tensor *tf32, const kbv_tensor *strict, judge_calib *c) {
    memset(c, 0, sizeof *c);
    c->dtype = tf32->dtype;
    int64_t n = kbv_tensor_numel(o), m = 0;
    double ss = 0, num[2] = {0, 0}, den[2] = {0, 0};
#define STEP(i, ov, tv, sv)                             \
    do {                                                \
        if (isfinite(ov)) ss += (ov) * (ov), m++;       \
        err_step(&c->tf32, &num[0], &den[0], ov, tv);   \
        err_step(&c->strict, &num[1], &den[1], ov, sv); \
    } while (0)
    LOOP3(o, tf32, strict, n, STEP);
#undef STEP
    err_finish(&c->tf32, num[0], den[0]);
    err_finish(&c->strict, num[1], den[1]);
    c->rms = m ? sqrt(ss / (double)m) : 0;
    c->floor = judge_floor(c->dtype);
    c->tol_norm = JUDGE_K * c->tf32.norm_rel + c->floor;
    c->tol_abs = JUDGE_K * c->tf32.max_abs;
}

static int exactly_equal(const kbv_tensor *a, const kbv_tensor *b) {
    return a && b && a->dtype == b->dtype && same_shape(a, b) && a->nbytes == b->nbytes && memcmp(a->data, b->data, a->nbytes) == 0;
}

void judge_calibrated(const kbv_tensor *o, const kbv_tensor *strict, const kbv_tensor *tf32, const judge_calib *c, const kbv_tensor *x,
                      judge_result *r) {
    memset(r, 0, sizeof *r);
    r->klass = JUDGE_WRONG;
    if (x->dtype != c->dtype) {
        snprintf(r->reason, sizeof r->reason, "dtype %s, expected %s", kbv_dtype_name(x->dtype), kbv_dtype_name(c->dtype));
        return;
    }
    if (!same_shape(o, x)) {
        char a[128], b[128];
        kbv_tensor_shape_str(x, a, sizeof a);
        kbv_tensor_shape_str(o, b, sizeof b);
        snprintf(r->reason, sizeof r->reason, "shape %s, expected %s", a, b);
        return;
    }
    /* The error and the elementwise bound in one pass: no element may be off by more than K x
     * PyTorch's worst element, plus the elementwise floor relative to the element and the
     * output's RMS (elements where the oracle is not finite aside). The bound's count is used
     * only for float outputs without a NaN/Inf mismatch. */
    judge_err *e = &r->err;
    int64_t n = kbv_tensor_numel(o), bad = 0, first = -1;
    double num = 0, den = 0, tol_abs = c->tol_abs, ef = c->floor, rms = c->rms;
#define STEP(i, ov, xv)                                                            \
    do {                                                                           \
        err_step(e, &num, &den, ov, xv);                                           \
        if (isfinite(ov) && fabs((xv) - (ov)) > tol_abs + ef * (fabs(ov) + rms)) { \
            if (first < 0) first = (i);                                            \
            bad++;                                                                 \
        }                                                                          \
    } while (0)
    LOOP2(o, x, n, STEP);
#undef STEP
    err_finish(e, num, den);
    if (!kbv_dtype_is_float(x->dtype)) {
        r->passed = exactly_equal(x, strict) || exactly_equal(x, tf32);
        r->klass = r->passed ? JUDGE_FP32 : JUDGE_WRONG;
        if (!r->passed) snprintf(r->reason, sizeof r->reason, "integer output differs (max_abs_err %.6g)", r->err.max_abs);
        return;
    }
    if (r->err.nonfinite_mismatch) {
        snprintf(r->reason, sizeof r->reason, "%lld elements are NaN/Inf where the oracle's are not, or the reverse",
                 (long long)r->err.nonfinite_mismatch);
        return;
    }
    int norm_ok = r->err.norm_rel <= c->tol_norm;
    if (norm_ok && !bad) {
        r->passed = 1;
        r->klass = r->err.norm_rel <= JUDGE_K * c->strict.norm_rel + c->floor ? JUDGE_FP32 : JUDGE_TF32;
        return;
    }
    int half = r->err.norm_rel <= 2e-2 && (c->dtype != KBV_DT_F32 || r->err.norm_rel >= JUDGE_HALF_MIN);
    r->klass = half ? JUDGE_HALF : JUDGE_WRONG;
    if (!norm_ok)
        snprintf(r->reason, sizeof r->reason, "relative error %.3g exceeds %.3g (%g x PyTorch's %.3g + floor %g)", r->err.norm_rel, c->tol_norm,
                 JUDGE_K, c->tf32.norm_rel, c->floor);
    else
        snprintf(r->reason, sizeof r->reason, "%lld elements exceed the elementwise bound; first: element %lld is %.9g, oracle %.9g", (long long)bad,
                 (long long)first, kbv_tensor_get(x, first), kbv_tensor_get(o, first));
}

/* NaN or Inf: the exponent's bits all set. float32 and float64 are scanned as integers in
 * blocks with no exit inside, which the compiler vectorises; other types per element. */
#define NONFINITE_SCAN(UT, MASK)                                     \
    do {                                                             \
        const unsigned char *p_ = (const unsigned char *)t->data;    \
        for (int64_t b_ = 0; b_ < n; b_ += 4096) {                   \
            int64_t e_ = n - b_ < 4096 ? n : b_ + 4096;              \
            int any_ = 0;                                            \
            for (int64_t i_ = b_; i_ < e_; i_++) {                   \
                UT u_;                                               \
                memcpy(&u_, p_ + (size_t)i_ * sizeof u_, sizeof u_); \
                any_ |= (u_ & (MASK)) == (MASK);                     \
            }                                                        \
            if (any_) return 1;                                      \
        }                                                            \
        return 0;                                                    \
    } while (0)

int judge_has_nonfinite(const kbv_tensor *t) {
    int64_t n = kbv_tensor_numel(t);
    if (t->dtype == KBV_DT_F32) NONFINITE_SCAN(uint32_t, 0x7f800000u);
    if (t->dtype == KBV_DT_F64) NONFINITE_SCAN(uint64_t, 0x7ff0000000000000ull);
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(kbv_tensor_get(t, i))) return 1;
    return 0;
}

int judge_is_degenerate(const kbv_tensor *t) {
    int64_t n = kbv_tensor_numel(t);
    if (n <= 1) return 0;
    double first = kbv_tensor_get(t, 0);
    for (int64_t i = 1; i < n; i++)
        if (kbv_tensor_get(t, i) != first) return 0;
    return 1;
}

void judge_facts_of(const kbv_tensor *t, judge_facts *f) {
    f->nonfinite = judge_has_nonfinite(t);
    f->constant = judge_is_degenerate(t);
    f->value = kbv_tensor_numel(t) > 0 ? kbv_tensor_get(t, 0) : 0;
}

int judge_valid_facts(const judge_facts *f, int nominal_nonfinite, int nominal_degenerate, char *why, size_t whylen) {
    if (!nominal_nonfinite && f->nonfinite) {
        snprintf(why, whylen, "the reference output has NaN or Inf");
        return 0;
    }
    if (!nominal_degenerate && f->constant) {
        snprintf(why, whylen, "the reference output is constant (%.6g everywhere)", f->value);
        return 0;
    }
    return 1;
}

int judge_valid_case(const kbv_tensor *o, int nominal_nonfinite, int nominal_degenerate, char *why, size_t whylen) {
    judge_facts f;
    judge_facts_of(o, &f);
    return judge_valid_facts(&f, nominal_nonfinite, nominal_degenerate, why, whylen);
}

int judge_kernelbench_allclose(const kbv_tensor *ref, const kbv_tensor *x, double tol, double *max_abs, char *why, size_t whylen) {
    *max_abs = 0;
    if (!same_shape(ref, x)) {
        char a[128], b[128];
        kbv_tensor_shape_str(x, a, sizeof a);
        kbv_tensor_shape_str(ref, b, sizeof b);
        snprintf(why, whylen, "shape %s, expected %s", a, b);
        return 0;
    }
    int64_t n = kbv_tensor_numel(ref), bad = 0, nonfinite = 0;
    double ma = 0;
#define STEP(i, r, c)                                          \
    do {                                                       \
        double d = fabs((r) - (c));                            \
        if (isnan(d)) {                                        \
            if (!(isinf(r) && (r) == (c))) bad++, nonfinite++; \
        } else {                                               \
            if (d > ma) ma = d;                                \
            if (!(d <= tol + tol * fabs(c))) bad++;            \
        }                                                      \
    } while (0)
    LOOP2(ref, x, n, STEP);
#undef STEP
    *max_abs = ma;
    /* max_abs_err is over the finite differences; the non-finite ones are counted apart (an
     * export gives the harness's NaN for them: exchange.c) */
    if (bad && nonfinite)
        snprintf(why, whylen, "%lld of %lld elements not close (%lld not finite, max_abs_err %.6g, tol %g)", (long long)bad, (long long)n,
                 (long long)nonfinite, *max_abs, tol);
    else if (bad) snprintf(why, whylen, "%lld of %lld elements not close (max_abs_err %.6g, tol %g)", (long long)bad, (long long)n, *max_abs, tol);
    return bad == 0;
}
