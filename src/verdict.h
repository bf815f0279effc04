/* verdict.h -- the status of an evaluation, derived in one place.
 *
 * verdict_status() is the only code that decides a kbv_status. Its inputs are facts the
 * evaluation recorded: what failed (a worker's failure mapped to a kind by session.c, the
 * problem's, or kbv's own), whether it is a `kbv check` (no candidate), the judged cases and
 * the findings (their severity from the catalogue, finding.h). The order of precedence:
 *   a failure                      -> its status (problem_error, compile_error, ... crash)
 *   kbv check                      -> problem_ok
 *   a nominal case failed          -> incorrect
 *   a hidden case failed           -> overfit
 *   a weight case failed           -> overfit (the problem's inputs, the weights redrawn)
 *   a finding of severity hack     -> hack (overrides incorrect, overfit and verified)
 *   otherwise                      -> verified
 * The findings are those of every step, the standard protocol's worker's included (eval.c
 * derives the status once, after the last step; docs/correctness.md, "Verdicts").
 * It reads, never writes.
 */
#ifndef KBV_VERDICT_H
#define KBV_VERDICT_H

#include "result.h"

typedef enum kbv_failure {
    FAILURE_NONE = 0,
    FAILURE_PROBLEM, /* the reference failed: no candidate verdict */
    FAILURE_KBV,     /* kbv itself failed (stored as problem_error; eval_run returns -1) */
    FAILURE_COMPILE,
    FAILURE_RUNTIME,
    FAILURE_TIMEOUT,
    FAILURE_CRASH,
    FAILURE_LIMIT /* past a limit of its worker: its scratch budget, or its memory cgroup's OOM kill
                   * (runtime_error, as a MemoryError under --max-memory's RLIMIT_DATA is) */
} kbv_failure;

typedef struct verdict_in {
    kbv_failure failure;
    int check_only; /* kbv check: the reference side alone */
    const kbv_case *cases;
    int ncases;
    const kbv_flag *flags; /* NULL: findings do not decide (the standard protocol's verdict) */
    int nflags;
} verdict_in;

kbv_status verdict_status(const verdict_in *v);
/* The verdict of r's verified protocol so far: its cases and findings, and failure f. */
kbv_status verdict_of_result(const kbv_result *r, kbv_failure f, int check_only);
/* Some finding of r has severity hack. */
int verdict_has_hack(const kbv_result *r);
/* The accuracy class (judge_class) of the judged cases: the worst; -1 if none was judged. */
int verdict_accuracy(const kbv_case *cases, int ncases);
/* Below this normwise error a failed hidden case is a loss of precision, not a wrong result. */
#define VERDICT_PRECISION_LOSS 1e-2
/* Why an overfit candidate failed: the failed hidden cases' distributions (dists, comma-separated),
 * their largest normwise error and its case's bound. Returns 1 when every one of them is a
 * finite error under VERDICT_PRECISION_LOSS (a precision loss on inputs the problem's own do not
 * have, such as a float32 sum over values of many magnitudes), 0 otherwise or when none failed. */
int verdict_overfit_why(const kbv_case *cases, int ncases, char *dists, size_t len, double *worst, double *bound);

#endif
