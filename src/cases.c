/* cases.c -- the cases of the verified protocol: for each distribution and seed, the
 * reference's runs (the float64 oracle, the TF32 baseline, the strict fp32 run) with the
 * domain fallback of a hidden case, the candidate's two runs under different poison in its
 * own process, and the judgement of the case in C (docs/correctness.md).
 *
 * Case plan: for each distribution in kDists, --cases seeds. A hidden case whose reference
 * output is not valid is retried in narrower domains (raw, abs, nominal_range, a fresh
 * nominal draw); if none is valid the case is skipped and never counts. After them, when every
 * ordinary case passed, the weight cases: the reference's floating state redrawn in its
 * worker (redraw_weights), given by name to a fresh ModelNew before its first call, two
 * cases judged as any other, and both models put back as built (docs/correctness.md,
 * "Weight cases").
 * What the outputs of a failed case show is detect.c's; the reference side kept for later
 * candidates is refcache.c's; the status is verdict.c's.
 */
#include "evalctx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "gen_host.h"

static const char *kDists[] = {"nominal", "normal", "uniform_shifted", "mixed_magnitude", "heavy_tailed"};
static const int kDistCode[] = {-1, KBV_DIST_NORMAL, KBV_DIST_UNIFORM_SHIFTED, KBV_DIST_MIXED_MAGNITUDE, KBV_DIST_HEAVY_TAILED};
static const char *kDomains[] = {"raw", "abs", "nominal_range", "nominal"};

static uint64_t case_seed(uint64_t run_seed, int i) { return kbv_derive_seed(run_seed, 0x100 + (uint64_t)i) & SEED_MASK; }

static json_t *forward_cmd(const eval_ctx *c, const char *dir, int ci, const char *tag, const char *precision, int tf32, int poison,
                           long long poison_bytes) {
    char prefix[PATH_MAX + 64];
    snprintf(prefix, sizeof prefix, "%s/%s/case%d_%s_", c->scratch, dir, ci, tag);
    json_t *cmd = json_pack("{s:s, s:s, s:s}", "op", "forward", "prefix", prefix, "precision", precision);
    if (tf32 >= 0 && strcmp(c->r->device, "cuda") == 0) json_object_set_new(cmd, "tf32", json_boolean(tf32));
    if (poison >= 0) {
        json_object_set_new(cmd, "poison", json_integer(poison));
        json_object_set_new(cmd, "poison_bytes", json_integer(poison_bytes));
    }
    return cmd;
}

/* Make case ci's inputs (domain dom) in worker p. On success *prints (if non-NULL) gets their
 * fingerprints; a failure reply is left in *fail (caller frees). */
static proc_result gen_inputs(eval_ctx *c, kbv_proc *p, int ci, int dist, int dom, uint64_t seed, reply_prints *prints, kbv_reply *fail,
                              kbv_err *err) {
    kbv_reply rep;
    memset(fail, 0, sizeof *fail);
    proc_result pr = session_step(
        c, p,
        json_pack("{s:s, s:I, s:o}", "op", "gen_inputs", "seed", (json_int_t)seed, "inputs", plan_case_specs(&c->plan, c->r->seed, ci, dist, dom)),
        c->o->timeout_s, &rep, err);
    if (pr != PROC_OK) return pr;
    if (!rep.ok) {
        *fail = rep;
        return pr;
    }
    if (prints) *prints = rep.prints, memset(&rep.prints, 0, sizeof rep.prints);
    reply_free(&rep);
    return pr;
}

/* A failure of the reference: the problem cannot be evaluated. */
static void problem_failed(eval_ctx *c, kbv_proc *ref, const char *what, proc_result pr, kbv_reply *fail, kbv_err *err) {
    c->failure = session_problem_failure(c, ref, what, pr, fail, err);
    reply_free(fail);
}

/* Reference: inputs, oracle, baseline and strict runs for case ci in domain dom. Returns 0,
 * 1 when the problem failed (c->failure set), 2 when the reference rejected these inputs
 * (c->invalid_why), -1 when kbv failed. */
static int reference_case(eval_ctx *c, kbv_proc *ref, int ci, int dist, int dom, uint64_t seed, ref_runs *rr, kbv_err *err) {
    kbv_reply fail;
    memset(rr, 0, sizeof *rr);
    proc_result pr = gen_inputs(c, ref, ci, dist, dom, seed, &rr->prints, &fail, err);
    if (pr != PROC_OK || fail.op[0]) {
        problem_failed(c, ref, "input generation", pr, &fail, err);
        return 1;
    }
    int cuda = strcmp(c->r->device, "cuda") == 0;
    int dirty = 0;                        /* the inputs may have been changed by the last run: make them again */
    int hidden = dist >= 0 || c->redrawn; /* inputs or weights the problem's author never ran */
    /* The oracle: float64, or (once float64 has failed) the strict fp32 run. */
    if (!c->oracle_fallback) {
        json_t *cmd = forward_cmd(c, "ref", ci, "oracle", "float64", 0, -1, 0);
        if (!c->o->candidate) json_object_set_new(cmd, "save", json_false()); /* kbv check: facts only */
        pr = session_run(c, ref, cmd, c->o->timeout_s, NULL, 0, &rr->oracle, &fail, err);
        int failed = fail.op[0] != 0;
        dirty = failed || !reply_prints_equal(&rr->oracle.rep.after, &rr->prints);
        if (pr == PROC_OK && failed && hidden) {
            /* On hidden inputs, first see whether the model itself accepts them. */
            reply_free(&fail);
            run_free(&rr->oracle);
            c->oracle_retry = 1;
        } else if (pr == PROC_OK && failed) {
            if (strcmp(fail.kind, "oracle") == 0) {
                c->oracle_fallback = 1;
                snprintf(c->r->oracle, sizeof c->r->oracle, "float32 with TF32 off (float64 failed: %.100s)", session_reply_msg(&fail));
                reply_free(&fail);
            } else {
                problem_failed(c, ref, "float64 oracle", pr, &fail, err);
                return 1;
            }
        } else if (pr != PROC_OK) {
            problem_failed(c, ref, "float64 oracle", pr, &fail, err);
            return pr == PROC_ERROR ? -1 : 1;
        }
    }
    /* Each run starts from the inputs as made: made again after a run that changed them. */
    const char *tags[2] = {"strict", "tf32"};
    run_out *outs[2] = {&rr->strict, &rr->tf32};
    for (int k = 0; k < (cuda ? 2 : 1); k++) {
        if (dirty) {
            pr = gen_inputs(c, ref, ci, dist, dom, seed, NULL, &fail, err);
            if (pr != PROC_OK || fail.op[0]) {
                problem_failed(c, ref, "input generation", pr, &fail, err);
                return 1;
            }
        }
        json_t *cmd = forward_cmd(c, "ref", ci, tags[k], "native", k, -1, 0);
        /* kbv check reads no outputs: they stay in the worker, which replies with the facts
         * validity needs (the strict run's stand in for a failed float64 oracle's). */
        if (!c->o->candidate) json_object_set_new(cmd, "save", json_false());
        pr = session_run(c, ref, cmd, c->o->timeout_s, NULL, 0, outs[k], &fail, err);
        if (pr == PROC_OK && fail.op[0] && hidden && strcmp(fail.kind, "python") == 0) {
            /* A hidden input the reference rejects (e.g. a matrix that is not positive
             * definite) makes the case invalid in this domain, not the problem broken. */
            snprintf(c->invalid_why, sizeof c->invalid_why, "the reference raised: %.150s", session_reply_msg(&fail));
            reply_free(&fail);
            return 2;
        }
        if (pr != PROC_OK || fail.op[0]) {
            problem_failed(c, ref, "forward", pr, &fail, err);
            return pr == PROC_ERROR ? -1 : 1;
        }
        dirty = !reply_prints_equal(&outs[k]->rep.after, &rr->prints);
        if (dirty) rr->mutates_inputs = 1;
    }
    if (c->oracle_retry) { /* the model ran in fp32 on these inputs: float64 is what failed */
        c->oracle_retry = 0;
        c->oracle_fallback = 1;
        snprintf(c->r->oracle, sizeof c->r->oracle, "float32 with TF32 off (float64 failed on a hidden case)");
    }
    /* No TF32 on the CPU: the plain fp32 run is the baseline. After a float64 failure the
     * strict run doubles as the oracle (with its facts: kbv check). */
    if ((!cuda && run_copy_outputs(&rr->tf32, &rr->strict) < 0) ||
        (c->oracle_fallback && (run_free(&rr->oracle), run_copy_outputs(&rr->oracle, &rr->strict)) < 0))
        return kbv_seterr(err, "out of memory copying outputs"), -1;
    if (run_out_count(&rr->oracle) != run_out_count(&rr->strict)) {
        c->failure = FAILURE_PROBLEM;
        result_add_error(c->r, "the float64 oracle returned %d outputs, the model %d", run_out_count(&rr->oracle), run_out_count(&rr->strict));
        return 1;
    }
    return 0;
}

/* Whether case rr's oracle outputs make a valid case (docs/correctness.md): 1 or 0 (why
 * filled), -1 when the worker's reply lacks their facts. The nominal case is always valid
 * and records whether its outputs are non-finite or constant, which then allows it. */
static int oracle_valid(eval_ctx *c, const ref_runs *rr, int nominal, char *why, size_t whylen) {
    judge_facts f;
    for (int k = 0; k < run_out_count(&rr->oracle); k++) {
        if (run_out_facts(&rr->oracle, k, &f) < 0) return -1;
        if (nominal) {
            c->nominal_nonfinite |= f.nonfinite;
            c->nominal_degenerate |= f.constant;
        } else if (!judge_valid_facts(&f, c->nominal_nonfinite, c->nominal_degenerate, why, whylen)) {
            return 0;
        } else {
            /* PyTorch's float32 runs finite where the oracle is: a hidden value that overflows
             * float32 but not float64 (x^6 of mixed_magnitude's 2^24) leaves no float32 answer
             * that a faithful candidate could match. */
            for (int q = 0; q < 2 && !c->nominal_nonfinite; q++)
                if (run_out_facts(q ? &rr->tf32 : &rr->strict, k, &f) == 0 && f.nonfinite) {
                    snprintf(why, whylen, "the float32 reference output has NaN or Inf where the float64 oracle's has none");
                    return 0;
                }
        }
    }
    return 1;
}

/* Where output k's figures are kept in rr (made on first use), or NULL without memory for it. */
static ref_calib *calib_slot(ref_runs *rr, int k) {
    if (!rr->calib && rr->oracle.n > 0 && (rr->calib = calloc((size_t)rr->oracle.n, sizeof *rr->calib))) rr->ncalib = rr->oracle.n;
    return k < rr->ncalib ? &rr->calib[k] : NULL;
}

/* Output k's calibration into *cal: kept in rr once computed (returns 1), or, without memory
 * to keep it, computed each time (returns 0). */
static int case_calibration(ref_runs *rr, int k, judge_calib *cal) {
    ref_calib *slot = calib_slot(rr, k);
    if (slot && slot->done) {
        *cal = slot->cal;
        return 1;
    }
    judge_calibrate(&rr->oracle.t[k], &rr->tf32.t[k], &rr->strict.t[k], cal);
    if (!slot) return 0;
    slot->cal = *cal, slot->done = 1;
    return 1;
}

/* Output k's oracle fingerprint, kept beside its calibration where there is memory for it. */
static uint64_t case_oracle_print(ref_runs *rr, int k) {
    ref_calib *slot = calib_slot(rr, k);
    if (slot && slot->fp_done) return slot->oracle_fp;
    uint64_t fp = gen_fingerprint_host(rr->oracle.t[k].data, rr->oracle.t[k].nbytes);
    if (slot) slot->oracle_fp = fp, slot->fp_done = 1;
    return fp;
}

/* Output k's calibration as its outputs are judged against: after a float64 failure the
 * oracle is itself an fp32 run, and the floor allows fp32 reordering. */
static void output_calibration(const eval_ctx *c, ref_runs *rr, int k, judge_calib *cal) {
    case_calibration(rr, k, cal);
    if (c->oracle_fallback) {
        cal->floor *= 10;
        cal->tol_norm = JUDGE_K * cal->tf32.norm_rel + cal->floor;
    }
}

void cases_judge_output(const eval_ctx *c, ref_runs *rr, int k, const kbv_tensor *t, judge_calib *cal, judge_result *jr) {
    output_calibration(c, rr, k, cal);
    judge_calibrated(&rr->oracle.t[k], &rr->strict.t[k], &rr->tf32.t[k], cal, t, jr);
}

/* The passes over output k of a case's two runs. Each reads its tensors once and adds its
 * sums in index order (judge.c); none reads what another writes, so for a large output they
 * run at once (kbv_parallel) in two waves, and the figures are the same to the bit as one
 * after the other: first the two runs' difference, the first run's fingerprint and, unless
 * reference_passes (below) made them beside the candidate's runs, the calibration and the
 * oracle's fingerprint; then the first run against the oracle and, where the second must pass
 * on its own (an output PyTorch rounds, the runs not differing), the second, which counts only
 * if the first passed. On an H100 host a 1 GiB output's judgement took 6-7.5 s a case one pass
 * after the other (BENCHMARKS.md, call GA). */
#define JUDGE_PARALLEL_MIN (1 << 20) /* elements of the oracle's output (relu's 128 x 8192 in CI) */

typedef struct out_judge {
    const eval_ctx *c;
    ref_runs *rr;
    int k;
    const kbv_tensor *x1, *x2; /* x2 NULL: the second run's output is not comparable */
    judge_calib cal;
    judge_result jr1, jr2;
    judge_err diff;
    uint64_t fp1, fpo;
} out_judge;

static void oj_calibrate(void *a) {
    out_judge *j = a;
    output_calibration(j->c, j->rr, j->k, &j->cal);
}
static void oj_diff(void *a) {
    out_judge *j = a;
    judge_error(j->x1, j->x2, &j->diff);
}
static void oj_fp1(void *a) {
    out_judge *j = a;
    j->fp1 = gen_fingerprint_host(j->x1->data, j->x1->nbytes);
}
static void oj_fpo(void *a) {
    out_judge *j = a;
    j->fpo = case_oracle_print(j->rr, j->k);
}
static void oj_judge1(void *a) {
    out_judge *j = a;
    judge_calibrated(&j->rr->oracle.t[j->k], &j->rr->strict.t[j->k], &j->rr->tf32.t[j->k], &j->cal, j->x1, &j->jr1);
}
static void oj_judge2(void *a) {
    out_judge *j = a;
    judge_calibrated(&j->rr->oracle.t[j->k], &j->rr->strict.t[j->k], &j->rr->tf32.t[j->k], &j->cal, j->x2, &j->jr2);
}

/* The limit on the two runs' difference: 1% of the tolerance where PyTorch's fp32 result is
 * exact (*exact set: no order to vary), else the tolerance (judge_case says why). */
static double runs_limit(const judge_calib *cal, int *exact) {
    *exact = !(cal->strict.norm_rel > 0);
    return *exact ? 0.01 * cal->tol_norm : cal->tol_norm;
}

/* The reference side's passes of a case, which read none of the candidate's outputs: each
 * output's calibration and the oracle's fingerprint. Where an output is large they run on a
 * thread while the candidate's worker runs the case (candidate_case), and judge_case then
 * finds them done: the candidate's commands and kbv's reading of the reference side overlap.
 * The thread writes only rr's calibrations, which nothing reads until it is joined, and is
 * joined before anything else reads or frees the case. */
static int large_outputs(const ref_runs *rr) {
    for (int k = 0; k < rr->oracle.n; k++)
        if (kbv_tensor_numel(&rr->oracle.t[k]) >= JUDGE_PARALLEL_MIN) return 1;
    return 0;
}

static void reference_passes(void *arg) {
    ref_runs *rr = arg;
    for (int k = 0; k < rr->oracle.n && k < rr->tf32.n && k < rr->strict.n; k++) {
        judge_calib cal;
        case_calibration(rr, k, &cal);
        case_oracle_print(rr, k);
    }
}

static void judge_output_passes(out_judge *j) {
    int par = kbv_tensor_numel(&j->rr->oracle.t[j->k]) >= JUDGE_PARALLEL_MIN, n = 0;
    const ref_calib *rc = j->k < j->rr->ncalib ? &j->rr->calib[j->k] : NULL;
    int ready = rc && rc->done && rc->fp_done; /* kept from reference_passes: taken here, no thread */
    if (ready) oj_calibrate(j), oj_fpo(j);
    kbv_task wave1[4];
    if (j->x2) wave1[n++] = (kbv_task){oj_diff, j};
    wave1[n++] = (kbv_task){oj_fp1, j};
    if (!ready) wave1[n++] = (kbv_task){oj_fpo, j}, wave1[n++] = (kbv_task){oj_calibrate, j};
    kbv_parallel(wave1, n, par);
    int exact;
    double lim = runs_limit(&j->cal, &exact);
    int second = j->x2 && !exact && !(j->diff.nonfinite_mismatch || j->diff.norm_rel > lim);
    j->jr2.passed = 1;
    kbv_task wave2[2] = {{second ? oj_judge2 : NULL, j}, {oj_judge1, j}};
    kbv_parallel(wave2, 2, par);
}

void cases_compact_kept(ref_runs *rr) {
    for (int k = 0; k < rr->oracle.n && k < rr->tf32.n && k < rr->strict.n; k++) {
        kbv_tensor *tf = &rr->tf32.t[k], *st = &rr->strict.t[k];
        judge_calib cal;
        if (!kbv_dtype_is_float(tf->dtype) || !tf->data || !st->data || !case_calibration(rr, k, &cal)) continue;
        kbv_tensor_drop_data(tf), kbv_tensor_drop_data(st);
    }
}

static json_t *print_json(const reply_prints *p, int j) {
    char hex[17];
    if (j >= p->n || !p->has[j]) return json_null();
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)p->fp[j]);
    return json_string(hex);
}

/* Judge the candidate's runs of one case against the reference's; fills kc. */
static void judge_case(eval_ctx *c, kbv_case *kc, ref_runs *rr, const run_out *c1, const run_out *c2, const reply_prints *cand_prints) {
    kc->evaluated = 1, kc->passed = 1, kc->klass = JUDGE_FP32;
    kc->atol = kc->rtol = 0;
#define FAIL(...)                                                             \
    do {                                                                      \
        if (kc->passed) snprintf(kc->detail, sizeof kc->detail, __VA_ARGS__); \
        kc->passed = 0;                                                       \
    } while (0)
    if (!reply_prints_equal(cand_prints, &rr->prints)) {
        FAIL("the candidate's process made different inputs from the same recipe (it changed how get_inputs() or torch's RNG behave)");
        result_add_finding(c->r, FIND_INPUT_GENERATION_TAMPERED, NULL, "case %s: input fingerprints differ from the reference worker's",
                           kc->distribution);
    }
    if (c1->n != rr->oracle.n) FAIL("%d outputs, expected %d", c1->n, rr->oracle.n);
    if (c2->n != c1->n) FAIL("the second run returned %d outputs, the first %d", c2->n, c1->n);
    /* Every output hashed once: the semantic detectors and the constant-output memory share it. */
    uint64_t *cfp = calloc((size_t)c1->n + 1, sizeof *cfp), *ofp = calloc((size_t)c1->n + 1, sizeof *ofp);
    unsigned char *hashed = calloc((size_t)c1->n + 1, 1);
    for (int k = 0; kc->passed && k < c1->n && k < rr->oracle.n; k++) {
        out_judge oj = {.c = c, .rr = rr, .k = k, .x1 = &c1->t[k]};
        int comparable = k < c2->n && c2->t[k].dtype == c1->t[k].dtype && c2->t[k].nbytes == c1->t[k].nbytes;
        if (comparable) oj.x2 = &c2->t[k];
        judge_output_passes(&oj);
        if (cfp && ofp && hashed) cfp[k] = oj.fp1, ofp[k] = oj.fpo, hashed[k] = 1;
        const judge_calib cal = oj.cal;
        const judge_result jr = oj.jr1;
        if (jr.err.max_abs > kc->max_abs_err) kc->max_abs_err = jr.err.max_abs;
        if (jr.err.max_rel > kc->max_rel_err) kc->max_rel_err = jr.err.max_rel;
        if (jr.err.norm_rel > kc->norm_rel_err || k == 0) {
            kc->norm_rel_err = jr.err.norm_rel;
            kc->tol_norm = cal.tol_norm;
            kc->baseline_norm_rel_err = cal.tf32.norm_rel;
            kc->strict_norm_rel_err = cal.strict.norm_rel;
        }
        if ((int)jr.klass > kc->klass) kc->klass = (int)jr.klass;
        if (!jr.passed) {
            FAIL("output %d: %s", k, jr.reason);
            break;
        }
        /* Two runs under different poison must agree: to 1% of the tolerance where PyTorch's
         * own fp32 result is exact (an elementwise op has no order to vary: a difference is
         * unwritten memory, a race or added noise). Where it rounds (a reduction), an honest
         * kernel's atomics reorder a sum, and two orders differ by about as much as each
         * differs from the exact sum: there the second run must pass the tolerance itself and
         * the runs agree within it (docs/correctness.md says why no tighter limit holds). */
        if (k < c2->n) {
            if (!comparable) FAIL("output %d: the second run returned a different dtype or shape", k);
            else {
                const judge_err d = oj.diff;
                int exact;
                double lim = runs_limit(&cal, &exact);
                int differ = d.nonfinite_mismatch || d.norm_rel > lim;
                judge_result jr2 = {.passed = 1};
                if (!exact && !differ) jr2 = oj.jr2; /* under the first run's calibration (fallback included) */
                if (differ || !jr2.passed) {
                    if (differ) FAIL("output %d: two runs differ (relative %.3g > %.3g): elements left unwritten, or a race", k, d.norm_rel, lim);
                    else FAIL("output %d: the second run on the same inputs fails: %s", k, jr2.reason);
                    result_add_finding(
                        c->r, FIND_NONDETERMINISTIC_OUTPUT,
                        json_pack("{s:s, s:i, s:f, s:f}", "case", kc->distribution, "output", k, "difference", d.norm_rel, "limit", lim),
                        "case %s, output %d: two runs on the same inputs differ (relative %.3g): uninitialised memory or a race", kc->distribution, k,
                        d.norm_rel);
                }
            }
        }
        /* Strides as the reference's: a view in another layout is reported, not failed. */
        int same = rr->tf32.t[k].ndim == c1->t[k].ndim;
        for (int d = 0; same && d < c1->t[k].ndim; d++) same = c1->t[k].shape[d] <= 1 || c1->t[k].strides[d] == rr->tf32.t[k].strides[d];
        if (!same) result_add_finding(c->r, FIND_STRIDE_MISMATCH, NULL, "output %d has other strides than the reference's", k);
    }
    /* Inputs unchanged, no aliasing the reference does not do. */
    const reply_prints *after = &c1->rep.after;
    if (!rr->mutates_inputs && after->present && !reply_prints_equal(after, cand_prints)) {
        for (int j = 0; j < after->n; j++) {
            int same = j < cand_prints->n && after->has[j] == cand_prints->has[j] && (!after->has[j] || after->fp[j] == cand_prints->fp[j]);
            if (same) continue;
            json_t *a = print_json(after, j), *b = print_json(cand_prints, j);
            FAIL("input %d was modified by the call (fingerprint %s, was %s)", j, json_string_value(a) ?: "?", json_string_value(b) ?: "?");
            result_add_finding(c->r, FIND_INPUT_MUTATION,
                               json_pack("{s:s, s:i, s:O, s:O}", "case", kc->distribution, "input", j, "before", b, "after", a),
                               "case %s: the call changed input %d", kc->distribution, j);
            json_decref(a), json_decref(b);
            break;
        }
    }
    const kbv_reply *ca = &c1->rep, *ra = &rr->strict.rep;
    for (int q = 0; q < ca->naliases; q++) {
        int found = 0;
        for (int r2 = 0; r2 < ra->naliases; r2++) found |= ca->aliases[q][0] == ra->aliases[r2][0] && ca->aliases[q][1] == ra->aliases[r2][1];
        if (!found) {
            FAIL("output %d shares memory with input %d; the reference's does not", ca->aliases[q][0], ca->aliases[q][1]);
            break;
        }
    }
    if (!kc->passed && kc->klass < JUDGE_HALF) kc->klass = JUDGE_WRONG;
    for (int k = 0; cfp && ofp && hashed && k < c1->n; k++) { /* those the loop above did not reach */
        if (hashed[k]) continue;
        cfp[k] = gen_fingerprint_host(c1->t[k].data, c1->t[k].nbytes);
        if (k < rr->oracle.n) ofp[k] = case_oracle_print(rr, k);
    }
    if (cfp && ofp && hashed) {
        if (!kc->passed) detect_semantic(c, kc, rr, c1, c2, cand_prints, cfp, ofp);
        for (int k = 0; k < c1->n && k < rr->oracle.n && k < EVAL_MAX_SEEN; k++)
            if (c->seen[k] < EVAL_MAX_SEEN_CASES) {
                c->seen_cand[k][c->seen[k]] = cfp[k];
                c->seen_ref[k][c->seen[k]] = ofp[k];
                c->seen[k]++;
            }
    }
    free(cfp), free(ofp), free(hashed);
#undef FAIL
}

static long long out_bytes(const run_out *r) {
    long long b = 0;
    for (int k = 0; k < r->n; k++) b += (long long)r->t[k].nbytes;
    return b;
}

/* Candidate: same inputs, two runs under different poison. Returns 0 when judged, -1 when kbv
 * failed (err), 1 when the candidate failed (c->failure set), 2 when an output was larger than the reference's: the case
 * failed (judged so, the output unread) and the worker's state is unknown (a reply of its own
 * may be on its way), so no case follows. */
static int candidate_case(eval_ctx *c, kbv_proc *cand, int ci, int dist, int dom, uint64_t seed, ref_runs *rr, kbv_case *kc, kbv_err *err) {
    run_out r[2];
    memset(r, 0, sizeof r);
    reply_prints prints;
    kbv_reply fail;
    memset(&prints, 0, sizeof prints);
    static const int poisons[2] = {0x80, 0x01}; /* new memory holds 0x7f / 0xfe bytes (CPU and GPU) */
    int rc = 0;
    double t_cand = kbv_now();
    kbv_async pre = {0};
    if (large_outputs(rr)) kbv_async_start(&pre, reference_passes, rr);
    for (int k = 0; k < 2; k++) {
        proc_result pr = gen_inputs(c, cand, ci, dist, dom, seed, k ? NULL : &prints, &fail, err);
        if (pr != PROC_OK || fail.op[0]) {
            c->failure = session_candidate_failure(c, cand, "input generation", pr, &fail, err);
            reply_free(&fail);
            rc = 1;
            break;
        }
        char tag[16];
        snprintf(tag, sizeof tag, "run%d", k);
        pr = session_run(c, cand, forward_cmd(c, "cand", ci, tag, "native", 1, poisons[k], 2 * out_bytes(&rr->strict)), c->o->timeout_s, rr->strict.t,
                         rr->strict.n, &r[k], &fail, err);
        if (pr == PROC_ERROR && r[k].oversize) { /* an output larger than the reference's: wrong, and not read */
            kc->evaluated = 1, kc->passed = 0, kc->klass = JUDGE_WRONG;
            snprintf(kc->detail, sizeof kc->detail, "%s", err->msg);
            rc = 2;
            break;
        }
        if (pr == PROC_ERROR && r[k].kbv_side) { /* kbv had no memory for the outputs: kbv's failure */
            rc = -1;
            break;
        }
        if (pr != PROC_OK || fail.op[0]) {
            c->failure = session_candidate_failure(c, cand, "forward", pr == PROC_ERROR ? PROC_PROTOCOL : pr, &fail, err);
            reply_free(&fail);
            rc = 1;
            break;
        }
    }
    kbv_async_join(&pre);
    if (rc == 0) {
        double t_judge = kbv_now();
        kc->t_candidate_s = t_judge - t_cand;
        judge_case(c, kc, rr, &r[0], &r[1], &prints);
        kc->t_judge_s = kbv_now() - t_judge;
    }
    run_free(&r[0]), run_free(&r[1]);
    reply_prints_free(&prints);
    return rc;
}

/* ---- weight cases (docs/correctness.md, "Weight cases") ----------------------------------- */

#define WEIGHT_CASES 2

/* A redraw_weights step of the reference. 0 with *rep; 1 when the problem failed (c->failure
 * set); -1 kbv's failure. With soft, a failure reply (kbv's redraw could not handle this
 * state_dict) is 2, why in r->redraw.skipped, and the problem stands. */
static int ref_redraw(eval_ctx *c, kbv_proc *ref, json_t *cmd, int soft, kbv_reply *rep, kbv_err *err) {
    proc_result pr;
    if (!session_call(c, ref, cmd, c->o->timeout_s, rep, &pr, err)) return 0;
    if (soft && pr == PROC_OK) {
        snprintf(c->r->redraw.skipped, sizeof c->r->redraw.skipped, "the reference's weights could not be redrawn: %.180s", session_reply_msg(rep));
        reply_free(rep);
        return 2;
    }
    c->failure = session_problem_failure(c, ref, "redrawing its weights", pr, rep, err);
    reply_free(rep);
    return pr == PROC_ERROR ? -1 : 1;
}

/* A fingerprint of a state the reference saved (its entries' names and bytes, read back by
 * kbv) into hex (17 bytes); 0, or -1 with *err set. */
static int state_print(const reply_values *st, char *hex, kbv_err *err) {
    uint64_t h = 0x5747A7Eull;
    for (int i = 0; i < st->n; i++) {
        const reply_value *v = &st->v[i];
        h = h * 0x100000001b3ull + gen_fingerprint_host(v->name, strlen(v->name));
        if (!v->is_tensor) {
            h = h * 0x100000001b3ull + gen_fingerprint_host(&v->value, sizeof v->value);
            continue;
        }
        kbv_tensor t;
        if (kbv_tensor_load(&t, v->path, err) < 0) return -1;
        h = h * 0x100000001b3ull + gen_fingerprint_host(t.data, t.nbytes);
        kbv_tensor_free(&t);
    }
    snprintf(hex, 17, "%016llx", (unsigned long long)h);
    return 0;
}

/* A fresh candidate model (build) given state (stolen) by name before its first call
 * (load_state). 0 with *matched (the state mapped onto its state_dict), or 1 when the
 * candidate failed (c->failure set). */
static int fresh_candidate(eval_ctx *c, kbv_proc *cand, json_t *state, const char *what, int *matched, kbv_err *err) {
    kbv_reply rep;
    proc_result pr;
    char step[96];
    if (session_call(c, cand, json_pack("{s:s, s:s, s:I}", "op", "build", "model", "candidate", "seed", (json_int_t)c->r->build_seed),
                     c->o->timeout_s, &rep, &pr, err)) {
        json_decref(state);
        snprintf(step, sizeof step, "model construction (%s)", what);
        c->failure = session_candidate_failure(c, cand, step, pr, &rep, err);
        reply_free(&rep);
        return 1;
    }
    reply_free(&rep);
    if (session_call(c, cand, json_pack("{s:s, s:o}", "op", "load_state", "state", state), c->o->timeout_s, &rep, &pr, err)) {
        snprintf(step, sizeof step, "loading the %s", what);
        c->failure = session_candidate_failure(c, cand, step, pr, &rep, err);
        reply_free(&rep);
        return 1;
    }
    *matched = rep.matched;
    reply_free(&rep);
    return 0;
}

/* Weight case k: the reference's runs on the redrawn weights, on the problem's own inputs
 * (k 0, or every k when no input is generated) or on normal ones (k 1) in the first domain
 * that gives a valid oracle, then the candidate's runs, judged as any case. 0 (judged or
 * skipped); 1 stop: something failed (c->failure) or an output was oversized; -1 kbv. */
static int weight_case(eval_ctx *c, kbv_proc *ref, kbv_proc *cand, int k, kbv_err *err) {
    kbv_result *r = c->r;
    int ci = 5 * c->o->ncases + 0x100 + k, dist = k > 0 && plan_has_gen(&c->plan) ? KBV_DIST_NORMAL : -1;
    kbv_case *kc = result_add_case(r);
    if (!kc) return kbv_seterr(err, "out of memory");
    kc->weights = 1;
    snprintf(kc->distribution, sizeof kc->distribution, "weights_%s", dist < 0 ? "nominal" : "normal");
    kc->seed = case_seed(r->seed, ci);
    eval_progress(c, "case %s", kc->distribution);
    ref_runs rr;
    char why[200] = "";
    int valid = 0, dom = dist < 0 ? 3 : 0;
    double t_ref = kbv_now();
    for (; dom < 4; dom++) {
        uint64_t seed = dom == 3 && dist >= 0 ? (kbv_mix64(kc->seed ^ 0xF00D) & SEED_MASK) : kc->seed;
        int rc = reference_case(c, ref, ci, dist, dom, seed, &rr, err);
        if (rc == 2) { /* the reference rejected these inputs on these weights */
            c->oracle_retry = 0;
            snprintf(why, sizeof why, "%s", c->invalid_why);
            ref_runs_free(&rr);
            continue;
        }
        if (rc) {
            ref_runs_free(&rr);
            return rc < 0 ? -1 : 1;
        }
        valid = oracle_valid(c, &rr, 0, why, sizeof why);
        if (valid < 0) {
            ref_runs_free(&rr);
            return kbv_seterr(err, "the reference worker's reply has no facts for an output it kept");
        }
        if (valid) {
            kc->seed = seed;
            break;
        }
        ref_runs_free(&rr);
    }
    kc->t_reference_s = kbv_now() - t_ref;
    snprintf(kc->domain, sizeof kc->domain, "%s", kDomains[plan_effective_domain(&c->plan, dom < 4 ? dom : 3)]);
    if (!valid) {
        kc->skipped = 1;
        snprintf(kc->skip_reason, sizeof kc->skip_reason, "no domain gave a valid reference output on the redrawn weights (last: %s)", why);
        return 0;
    }
    if (dist >= 0 && dom > 0)
        snprintf(kc->fallback_reason, sizeof kc->fallback_reason, "%s in domain %s", why, kDomains[plan_effective_domain(&c->plan, dom - 1)]);
    int cc = candidate_case(c, cand, ci, dist, dom, kc->seed, &rr, kc, err);
    ref_runs_free(&rr);
    if (cc) return cc < 0 ? -1 : 1;
    r->redraw.cases++;
    return 0;
}

/* The weight cases, after every ordinary case passed: redraw, a fresh candidate given the
 * redrawn state, WEIGHT_CASES cases, both models back as built. A candidate whose state_dict
 * does not map onto the reference's gets weights_unverifiable and no weight cases; a failed
 * weight case, weights_overfit (the status: overfit, verdict.c). Returns as cases_run. */
static int weight_cases(eval_ctx *c, kbv_proc *ref, kbv_proc *cand, kbv_err *err) {
    kbv_result *r = c->r;
    kbv_reply rep;
    char prefix[PATH_MAX + 32];
    if (!c->o->candidate || c->failure != FAILURE_NONE) return 0;
    for (int i = 0; i < r->ncases; i++)
        if (!r->cases[i].skipped && r->cases[i].evaluated && !r->cases[i].passed) {
            snprintf(r->redraw.skipped, sizeof r->redraw.skipped, "not run: an ordinary case failed");
            return 0;
        }
    double t0 = kbv_now(), w0 = c->lock.waited_s;
    eval_progress(c, "%s", "weight cases: the reference's floating state redrawn");
    snprintf(prefix, sizeof prefix, "%s/inputs/redrawn", c->scratch);
    uint64_t seed = kbv_derive_seed(r->seed, 0x3E16D) & SEED_MASK;
    int rc = ref_redraw(c, ref, json_pack("{s:s, s:I, s:s}", "op", "redraw_weights", "seed", (json_int_t)seed, "prefix", prefix), 1, &rep, err);
    if (rc) return rc == 2 ? 0 : rc < 0 ? -1 : 0;
    r->redraw.redrawn = rep.redrawn, r->redraw.kept = rep.kept;
    if (rep.redrawn == 0) { /* nothing changed: nothing to put back */
        reply_free(&rep);
        snprintf(r->redraw.skipped, sizeof r->redraw.skipped, "the reference has no floating parameter or buffer to redraw%s",
                 r->redraw.kept ? " (its floating entries are integers, masks or hold NaN/Inf)" : "");
        r->redraw.time_s = eval_busy_since(c, t0, w0);
        return 0;
    }
    if (state_print(&rep.state, r->redraw.print, err) < 0) {
        reply_free(&rep);
        return -1;
    }
    json_t *state = reply_values_to_json(&rep.state);
    reply_free(&rep);
    int matched = r->weights_matched, rebuilt = matched;
    if (matched && fresh_candidate(c, cand, state, "redrawn weights", &matched, err)) return 0;
    if (!rebuilt) json_decref(state);
    if (!matched) {
        result_add_finding(r, FIND_WEIGHTS_UNVERIFIABLE, json_pack("{s:I}", "redrawn", (json_int_t)r->redraw.redrawn),
                           "the candidate's state_dict does not map onto the reference's (names, shapes or dtypes differ): the %lld redrawn "
                           "entries could not be given to it, so no weight case ran",
                           r->redraw.redrawn);
        snprintf(r->redraw.skipped, sizeof r->redraw.skipped, "the candidate's state_dict does not map onto the reference's");
    } else {
        c->redrawn = 1;
        for (int k = 0; k < WEIGHT_CASES && rc == 0; k++) rc = weight_case(c, ref, cand, k, err);
        c->redrawn = 0;
        if (rc) return rc < 0 ? -1 : 0; /* failed or oversized: the evaluation stops here */
        for (int i = 0; i < r->ncases; i++) {
            const kbv_case *kc = &r->cases[i];
            if (!kc->weights || kc->skipped || kc->passed) continue;
            result_add_finding(r, FIND_WEIGHTS_OVERFIT, json_pack("{s:s, s:s}", "case", kc->distribution, "detail", kc->detail),
                               "right on every ordinary case, wrong on case %s with the reference's floating state redrawn: the kernel fits "
                               "the weights the constructor made (%s)",
                               kc->distribution, kc->detail);
            break;
        }
    }
    /* Both models as built again, for what follows (the timing's checks use the reference's). */
    snprintf(prefix, sizeof prefix, "%s/inputs/weight", c->scratch);
    json_t *cmd = json_pack("{s:s, s:b}", "op", "redraw_weights", "restore", 1);
    if (rebuilt) json_object_set_new(cmd, "prefix", json_string(prefix)); /* the state the candidate is given again */
    rc = ref_redraw(c, ref, cmd, 0, &rep, err);
    if (rc) return rc < 0 ? -1 : 0;
    state = rebuilt ? reply_values_to_json(&rep.state) : NULL;
    reply_free(&rep);
    if (rebuilt && fresh_candidate(c, cand, state, "reference's weights", &matched, err)) return 0;
    r->redraw.time_s = eval_busy_since(c, t0, w0);
    return 0;
}

/* Whether the reference's output is one constant over every valid case (a degenerate problem,
 * such as a mean of a normalised tensor: KernelBench level 2 problems 23, 80 and 83 give 0 for
 * any input): every element of every float output within 1e-6 (relative to max(1, |value|))
 * of the first element of the first case. Cases whose values kbv did not read leave it open. */
static void degenerate_note(kbv_result *r, const ref_runs *rr) {
    if (r->degenerate.cases < 0) return;
    const run_out *o = &rr->oracle;
    for (int k = 0; k < o->n; k++)
        if (!o->t[k].data) {
            r->degenerate.cases = -1;
            return;
        }
    for (int k = 0; k < o->n && !r->degenerate.varies; k++) {
        const kbv_tensor *t = &o->t[k];
        int64_t n = kbv_tensor_numel(t);
        for (int64_t i = 0; i < n; i++) {
            double v = kbv_tensor_get(t, i);
            if (r->degenerate.cases == 0 && k == 0 && i == 0) r->degenerate.value = v;
            double c = r->degenerate.value;
            if (!isfinite(v) || !isfinite(c) || fabs(v - c) > 1e-6 * fmax(1, fabs(c))) {
                r->degenerate.varies = 1;
                break;
            }
        }
    }
    r->degenerate.cases++;
}

int cases_run(eval_ctx *c, kbv_proc *ref, kbv_proc *cand, kept_case *kept, int *nkept, kbv_err *err) {
    kbv_result *r = c->r;
    int hidden = plan_has_gen(&c->plan);
    for (int di = 0; di < 5 && c->failure == FAILURE_NONE; di++) {
        for (int si = 0; si < c->o->ncases; si++) {
            int ci = di * c->o->ncases + si;
            kbv_case *kc = result_add_case(r);
            if (!kc) return kbv_seterr(err, "out of memory");
            snprintf(kc->distribution, sizeof kc->distribution, "%s", kDists[di]);
            kc->seed = case_seed(r->seed, ci);
            if (di > 0 && !hidden) {
                kc->skipped = 1;
                snprintf(kc->skip_reason, sizeof kc->skip_reason, "no input can be generated (all are fixed, scalars or vary in shape)");
                continue;
            }
            eval_progress(c, "case %s", kDists[di]); /* the GPU's lock is shared per worker command (util.h) */
            ref_runs rr;
            int dom = di == 0 ? 3 : 0, valid = 0;
            double t_ref = kbv_now();
            char why[200] = "";
            int taken = c->cache.loaded ? refcache_take(c, ci, kc, &rr, &dom, err) : 0;
            if (taken < 0) {
                ref_runs_free(&rr);
                return -1;
            }
            if (taken) valid = !kc->skipped;
            c->cache.keep = c->cache.cases ? c->cache.tmp : NULL; /* this evaluation records */
            for (; !taken && dom < 4; dom++) {
                uint64_t seed = dom == 3 && di > 0 ? (kbv_mix64(kc->seed ^ 0xF00D) & SEED_MASK) : kc->seed;
                int rc = reference_case(c, ref, ci, kDistCode[di], dom, seed, &rr, err);
                if (rc == -1 || rc == 1) ref_runs_free(&rr);
                if (rc < 0) return -1;
                if (rc == 2) { /* the reference rejected these inputs: try the next domain */
                    c->oracle_retry = 0;
                    snprintf(why, sizeof why, "%s", c->invalid_why);
                    ref_runs_free(&rr);
                    continue;
                }
                if (rc > 0) return 0;
                valid = oracle_valid(c, &rr, di == 0, why, sizeof why);
                if (valid < 0) {
                    ref_runs_free(&rr);
                    return kbv_seterr(err, "the reference worker's reply has no facts for an output it kept");
                }
                if (di == 0) break;
                if (valid) {
                    kc->seed = seed;
                    break;
                }
                ref_runs_free(&rr);
            }
            c->cache.keep = NULL;
            if (!taken) {
                snprintf(kc->domain, sizeof kc->domain, "%s", kDomains[plan_effective_domain(&c->plan, dom < 4 ? dom : 3)]);
                if (!valid) {
                    kc->skipped = 1;
                    snprintf(kc->skip_reason, sizeof kc->skip_reason, "no domain gave a valid reference output (last: %s)", why);
                } else if (di > 0 && dom > 0) { /* why the domain before this one was not valid */
                    snprintf(kc->fallback_reason, sizeof kc->fallback_reason, "%s in domain %s", why,
                             kDomains[plan_effective_domain(&c->plan, dom - 1)]);
                }
                refcache_record(c, ci, kc, dom, valid ? &rr : NULL);
            }
            kc->t_reference_s = kbv_now() - t_ref;
            if (!valid) continue;
            degenerate_note(r, &rr);
            if (!c->o->candidate) {
                ref_runs_free(&rr);
                continue;
            }
            int cc = candidate_case(c, cand, ci, kDistCode[di], dom, kc->seed, &rr, kc, err);
            if (cc) { /* failed, an oversized output, or kbv's own failure (-1) */
                ref_runs_free(&rr);
                return cc < 0 ? -1 : 0;
            }
            if (kc->passed && di > 0 && c->fresh_ci < 0)
                c->fresh_ci = ci, c->fresh_dist = kDistCode[di], c->fresh_dom = dom, c->fresh_seed = kc->seed;
            /* The first two passed cases are the timing's input sets (their oracles re-check
             * the timed outputs). */
            if (kc->passed && *nkept < 2 && !rr.mutates_inputs) {
                kept[*nkept].rr = rr;
                cases_compact_kept(&kept[*nkept].rr);
                kept[*nkept].ci = ci, kept[*nkept].dist = kDistCode[di], kept[*nkept].dom = dom, kept[*nkept].seed = kc->seed;
                (*nkept)++;
            } else {
                ref_runs_free(&rr);
            }
        }
    }
    return weight_cases(c, ref, cand, err);
}

/* A hidden check case for the timing phase (timing.c): the reference's runs on a fresh draw of
 * hidden distribution 1 + k % 4 (a case number no ordinary case uses, so values no call has
 * seen), in the first domain that gives a valid reference output, into *out. 0; 2 when no
 * domain does (no check of this distribution); 1 the problem failed (c->failure); -1 kbv. */
int cases_reference_check(eval_ctx *c, kbv_proc *ref, int k, kept_case *out, kbv_err *err) {
    int di = 1 + k % 4, ci = 5 * c->o->ncases + 0x200 + k;
    uint64_t base = case_seed(c->r->seed, ci);
    char why[200];
    kbv_case kc; /* what the kept reference side records of it (refcache.c) */
    memset(out, 0, sizeof *out);
    memset(&kc, 0, sizeof kc);
    if (!plan_has_gen(&c->plan)) return 2;
    int dom = 0, taken = c->cache.loaded ? refcache_take(c, ci, &kc, &out->rr, &dom, err) : 0;
    if (taken < 0) return ref_runs_free(&out->rr), -1;
    if (taken) { /* an earlier evaluation of the problem in this run drew it */
        if (kc.skipped) return ref_runs_free(&out->rr), 2;
        out->ci = ci, out->dist = kDistCode[di], out->dom = dom, out->seed = kc.seed;
        cases_compact_kept(&out->rr);
        return 0;
    }
    c->cache.keep = c->cache.cases ? c->cache.tmp : NULL; /* this evaluation records */
    int rc = 2;
    for (dom = 0; dom < 4; dom++) {
        uint64_t seed = dom == 3 ? (kbv_mix64(base ^ 0xF00D) & SEED_MASK) : base;
        int r = reference_case(c, ref, ci, kDistCode[di], dom, seed, &out->rr, err);
        if (r == 2) {
            c->oracle_retry = 0;
            ref_runs_free(&out->rr);
            continue;
        }
        if (r) {
            ref_runs_free(&out->rr);
            rc = r;
            break;
        }
        int valid = oracle_valid(c, &out->rr, 0, why, sizeof why);
        if (valid > 0 && !out->rr.mutates_inputs) {
            out->ci = ci, out->dist = kDistCode[di], out->dom = dom, out->seed = seed;
            kc.seed = seed;
            snprintf(kc.domain, sizeof kc.domain, "%s", kDomains[plan_effective_domain(&c->plan, dom)]);
            refcache_record(c, ci, &kc, dom, &out->rr);
            cases_compact_kept(&out->rr);
            rc = 0;
            break;
        }
        ref_runs_free(&out->rr);
        if (valid < 0) {
            rc = kbv_seterr(err, "the reference worker's reply has no facts for an output it kept");
            break;
        }
    }
    if (rc == 2) { /* no domain gave a usable draw: later evaluations need not try again */
        kc.skipped = 1, kc.seed = base;
        snprintf(kc.skip_reason, sizeof kc.skip_reason, "no domain gave a valid, input-preserving reference output");
        refcache_record(c, ci, &kc, 3, NULL);
    }
    c->cache.keep = NULL;
    return rc;
}
