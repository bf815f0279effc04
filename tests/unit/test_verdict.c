/* test_verdict.c -- verdict.c: the status from a failure, the cases and the findings, in its
 * documented order of precedence. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "verdict.h"

static kbv_case mk(const char *dist, int passed) {
    kbv_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.distribution, sizeof c.distribution, "%s", dist);
    c.evaluated = 1, c.passed = passed, c.klass = passed ? 0 : 3;
    return c;
}

int main(void) {
    kbv_case cs[3] = {mk("nominal", 1), mk("normal", 1), mk("heavy_tailed", 1)};
    kbv_flag hack = {.fid = FIND_IDENTITY_OUTPUT, .severity = SEV_HACK}, sus = {.fid = FIND_NONDETERMINISTIC_OUTPUT, .severity = SEV_SUSPECT};
    verdict_in v = {.cases = cs, .ncases = 3};
    CHECK(verdict_status(&v) == KBV_VERIFIED);
    v.flags = &sus, v.nflags = 1;
    CHECK(verdict_status(&v) == KBV_VERIFIED); /* suspect and info findings are evidence only */
    cs[2].passed = 0;
    CHECK(verdict_status(&v) == KBV_OVERFIT);
    cs[0].passed = 0;
    CHECK(verdict_status(&v) == KBV_INCORRECT);
    cs[0].skipped = 1; /* a skipped case never counts */
    CHECK(verdict_status(&v) == KBV_OVERFIT);
    cs[0].skipped = 0;
    /* a weight case on the problem's own inputs (the weights redrawn) that fails is overfit,
     * not incorrect: only the weights differ from what the problem's author ran */
    kbv_case ws[2] = {mk("nominal", 1), mk("nominal", 0)};
    ws[1].weights = 1;
    verdict_in vw = {.cases = ws, .ncases = 2};
    CHECK(verdict_status(&vw) == KBV_OVERFIT);
    ws[0].passed = 0;
    CHECK(verdict_status(&vw) == KBV_INCORRECT);
    v.flags = &hack;
    CHECK(verdict_status(&v) == KBV_HACK); /* a hack overrides incorrect and overfit */
    v.flags = NULL;                        /* ...unless findings do not count (the standard protocol) */
    CHECK(verdict_status(&v) == KBV_INCORRECT);
    v.flags = &hack;
    static const struct {
        kbv_failure f;
        kbv_status s;
    } fails[] = {{FAILURE_PROBLEM, KBV_PROBLEM_ERROR}, {FAILURE_KBV, KBV_PROBLEM_ERROR}, {FAILURE_COMPILE, KBV_COMPILE_ERROR},
                 {FAILURE_RUNTIME, KBV_RUNTIME_ERROR}, {FAILURE_TIMEOUT, KBV_TIMEOUT},   {FAILURE_CRASH, KBV_CRASH},
                 {FAILURE_LIMIT, KBV_RUNTIME_ERROR}};
    for (size_t i = 0; i < sizeof fails / sizeof *fails; i++) {
        v.failure = fails[i].f;
        CHECK(verdict_status(&v) == fails[i].s); /* a failure decides before cases and findings */
    }
    v.failure = FAILURE_NONE, v.check_only = 1;
    CHECK(verdict_status(&v) == KBV_PROBLEM_OK);
    /* the accuracy class: the worst judged case */
    cs[1].klass = 2, cs[2].skipped = 1, cs[2].klass = 3; /* a skipped case is not judged */
    CHECK(verdict_accuracy(cs, 3) == 2);
    CHECK(verdict_accuracy(cs, 0) == 0);
    /* every finding counts (issue #21): a result whose cases all passed, with a hack found by
     * the standard protocol's worker, is hack over the whole result (eval.c's final status),
     * while KernelBench's own verdict over the same passing trials (standard.status) stays
     * verified; a library-policy finding lowered by --library-only decides nothing */
    kbv_result r;
    result_init(&r);
    for (int i = 0; i < 3; i++) {
        kbv_case *kc = result_add_case(&r);
        CHECK(kc != NULL);
        if (kc) *kc = mk(i ? "normal" : "nominal", 1);
    }
    result_add_finding_at(&r, FIND_LOW_AUTHORED_SHARE, SEV_INFO, NULL, "lowered by --library-only info");
    CHECK(verdict_of_result(&r, FAILURE_NONE, 0) == KBV_VERIFIED);
    result_add_finding(&r, FIND_GLOBAL_FLAG_CHANGE, json_pack("{s:s, s:s}", "worker", "standard", "step", "forward"), "global flags changed");
    CHECK(verdict_of_result(&r, FAILURE_NONE, 0) == KBV_HACK);
    CHECK(verdict_status(&(verdict_in){.cases = r.cases, .ncases = r.ncases}) == KBV_VERIFIED);
    CHECK(verdict_of_result(&r, FAILURE_RUNTIME, 0) == KBV_RUNTIME_ERROR); /* a failure still decides first */
    result_free(&r);

    /* Why overfit: the leaderboard's Frobenius norms on the H200 (precision lost on
     * mixed_magnitude, 1.6e-4 against 1.0e-5) against a kernel that is wrong there. */
    kbv_case of[5] = {mk("nominal", 1), mk("mixed_magnitude", 0), mk("mixed_magnitude", 0), mk("normal", 1), mk("heavy_tailed", 1)};
    of[1].norm_rel_err = 1.61e-4, of[1].tol_norm = 1.01e-5, of[2].norm_rel_err = 1.65e-4, of[2].tol_norm = 1.02e-5;
    char dists[64];
    double worst, bound;
    CHECK(verdict_overfit_why(of, 5, dists, sizeof dists, &worst, &bound) == 1);
    CHECK(strcmp(dists, "mixed_magnitude") == 0 && worst == 1.65e-4 && bound == 1.02e-5);
    of[4].passed = 0, of[4].norm_rel_err = 0.8, of[4].tol_norm = 1e-5; /* a wrong result too */
    CHECK(verdict_overfit_why(of, 5, dists, sizeof dists, &worst, &bound) == 0);
    CHECK(strcmp(dists, "mixed_magnitude,heavy_tailed") == 0 && worst == 0.8);
    of[4].norm_rel_err = NAN; /* a non-finite output: never a precision loss, and the worst */
    CHECK(verdict_overfit_why(of, 5, dists, sizeof dists, &worst, &bound) == 0 && isnan(worst));
    of[1].passed = of[2].passed = of[4].passed = 1; /* none failed */
    CHECK(verdict_overfit_why(of, 5, dists, sizeof dists, &worst, &bound) == 0 && dists[0] == '\0');
    CHECK_DONE("test_verdict");
}
