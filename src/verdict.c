/* verdict.c -- derive the status (see verdict.h). */
#include "verdict.h"

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
