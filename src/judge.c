/* judge.c -- elementwise comparison of outputs (see judge.h for the rule).
 *
 * Does not decide a verdict: eval.c combines the per-output comparisons into cases and a
 * status. Reads both tensors once, in double precision.
 */
#include "judge.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

judge_tol judge_default_tol(kbv_dtype dt) {
    switch (dt) {
    case KBV_DT_F32:
    case KBV_DT_F64: return (judge_tol){1e-4, 1e-4};
    case KBV_DT_F16:
    case KBV_DT_BF16: return (judge_tol){1e-2, 1e-2};
    default: return (judge_tol){0, 0};
    }
}

int judge_compare(const kbv_tensor *ref, const kbv_tensor *cand, judge_tol tol, judge_cmp *o) {
    memset(o, 0, sizeof *o);
    o->first_bad = -1;
    if (ref->dtype != cand->dtype) {
        snprintf(o->reason, sizeof o->reason, "dtype %s, expected %s", kbv_dtype_name(cand->dtype),
                 kbv_dtype_name(ref->dtype));
        return 0;
    }
    int same = ref->ndim == cand->ndim;
    for (int i = 0; same && i < ref->ndim; i++) same = ref->shape[i] == cand->shape[i];
    if (!same) {
        char a[128], b[128];
        kbv_tensor_shape_str(cand, a, sizeof a);
        kbv_tensor_shape_str(ref, b, sizeof b);
        snprintf(o->reason, sizeof o->reason, "shape %s, expected %s", a, b);
        return 0;
    }
    int64_t n = kbv_tensor_numel(ref);
    for (int64_t i = 0; i < n; i++) {
        double r = kbv_tensor_get(ref, i), c = kbv_tensor_get(cand, i);
        int bad;
        if (isnan(r) || isnan(c)) bad = !(isnan(r) && isnan(c));
        else if (isinf(r) || isinf(c)) bad = r != c;
        else {
            double d = fabs(c - r);
            if (d > o->max_abs_err) o->max_abs_err = d;
            if (r != 0 && d / fabs(r) > o->max_rel_err) o->max_rel_err = d / fabs(r);
            bad = d > tol.atol + tol.rtol * fabs(r);
        }
        if (bad) {
            if (o->first_bad < 0) {
                o->first_bad = i;
                snprintf(o->reason, sizeof o->reason, "element %lld is %.9g, expected %.9g", (long long)i, c, r);
            }
            o->n_bad++;
        }
    }
    if (o->n_bad > 1) {
        char first[200];
        snprintf(first, sizeof first, "%s", o->reason);
        snprintf(o->reason, sizeof o->reason, "%lld of %lld elements outside tolerance; first: %s",
                 (long long)o->n_bad, (long long)n, first);
    }
    o->passed = o->n_bad == 0;
    return 0;
}
