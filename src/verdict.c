/* verdict.c -- derive the status (see verdict.h). */
#include "verdict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "judge.h"

static kbv_status failure_status(kbv_failure f) {
    switch (f) {
    case FAILURE_PROBLEM:
    case FAILURE_KBV: return KBV_PROBLEM_ERROR;
    case FAILURE_COMPILE: return KBV_COMPILE_ERROR;
    case FAILURE_RUNTIME:
    case FAILURE_LIMIT: return KBV_RUNTIME_ERROR;
    case FAILURE_TIMEOUT: return KBV_TIMEOUT;
    case FAILURE_CRASH: return KBV_CRASH;
    case FAILURE_NONE: break;
    }
    return KBV_VERIFIED;
}

kbv_status verdict_status(const verdict_in *v) {
    if (v->failure != FAILURE_NONE) return failure_status(v->failure);
    if (v->check_only) return KBV_PROBLEM_OK;
    kbv_status s = KBV_VERIFIED;
    for (int i = 0; i < v->ncases; i++) {
        const kbv_case *kc = &v->cases[i];
        if (kc->skipped || !kc->evaluated || kc->passed) continue;
        if (strcmp(kc->distribution, "nominal") == 0 && !kc->weights) s = KBV_INCORRECT;
        else if (s == KBV_VERIFIED) s = KBV_OVERFIT;
    }
    for (int i = 0; v->flags && i < v->nflags; i++)
        if (v->flags[i].severity == SEV_HACK) return KBV_HACK;
    return s;
}

kbv_status verdict_of_result(const kbv_result *r, kbv_failure f, int check_only) {
    verdict_in v = {.failure = f, .check_only = check_only, .cases = r->cases, .ncases = r->ncases, .flags = r->flags, .nflags = r->nflags};
    return verdict_status(&v);
}

int verdict_has_hack(const kbv_result *r) {
    for (int i = 0; i < r->nflags; i++)
        if (r->flags[i].severity == SEV_HACK) return 1;
    return 0;
}

int verdict_accuracy(const kbv_case *cases, int ncases) {
    int k = JUDGE_FP32;
    for (int i = 0; i < ncases; i++)
        if (!cases[i].skipped && cases[i].evaluated && cases[i].klass > k) k = cases[i].klass;
    return k;
}

int verdict_overfit_why(const kbv_case *cases, int ncases, char *dists, size_t len, double *worst, double *bound) {
    int n = 0, precision = 1;
    size_t used = 0;
    *worst = 0, *bound = 0;
    if (len) dists[0] = '\0';
    for (int i = 0; i < ncases; i++) {
        const kbv_case *kc = &cases[i];
        if (kc->skipped || !kc->evaluated || kc->passed || (strcmp(kc->distribution, "nominal") == 0 && !kc->weights)) continue;
        n++;
        double e = kc->norm_rel_err;
        if (!isfinite(e) || e >= VERDICT_PRECISION_LOSS) precision = 0;
        if (isfinite(*worst) && (!isfinite(e) || e > *worst)) *worst = e, *bound = kc->tol_norm; /* NaN or inf stays the worst */
        const char *d = kc->distribution, *hit = strstr(dists, d);
        size_t dl = strlen(d);
        int listed = hit && (hit == dists || hit[-1] == ',') && (hit[dl] == '\0' || hit[dl] == ',');
        if (!listed && used + dl + 2 < len) used += (size_t)snprintf(dists + used, len - used, "%s%s", used ? "," : "", d);
    }
    return n > 0 && precision;
}
