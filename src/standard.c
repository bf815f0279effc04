/* standard.c -- KernelBench's own protocol, for comparison (docs/correctness.md, "The
 * standard protocol"): reference and candidate in one worker process, TF32 off, KernelBench's
 * seeds and 5 trials judged with its allclose, and its timing (the mean of 100 trials).
 *
 * Fills r->standard with the protocol's own verdict (verdict_status() over its trials, the
 * findings not counted, as KernelBench counts none). When it is the only protocol its trials
 * are also the result's cases and its failure the evaluation's. What its worker's guard sees
 * is a finding of the result like any other (session.c), and under --protocol both it counts
 * toward the result's status (eval.c), not toward r->standard.status.
 */
#include "evalctx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int standard_read_trial(eval_ctx *c, reply_trial *tr, const char *prefix, int t, kbv_tensor **ro, int *rn, kbv_tensor **no, int *nn,
                        int *pass, char *why, size_t whylen, kbv_err *err) {
    char pre[2][PATH_MAX + 48];
    snprintf(pre[0], sizeof pre[0], "%s%d_ref_", prefix, t);
    snprintf(pre[1], sizeof pre[1], "%s%d_new_", prefix, t);
    out_spec sref = {.prefix = pre[0], .max_bytes = session_max_file_bytes(c), .consume = 1}, snew = {.prefix = pre[1], .consume = 1};
    *ro = *no = NULL, *rn = *nn = 0, *pass = 1;
    int rrc = session_read_outputs(&tr->ref, &sref, ro, rn, err), nrc = 0;
    if (rrc == 0) snew.like = *ro, snew.nlike = *rn, nrc = session_read_outputs(&tr->cand, &snew, no, nn, err);
    if (rrc == -3 || nrc == -3) {
        session_free_outputs(*ro, *rn), session_free_outputs(*no, *nn);
        *ro = *no = NULL, *rn = *nn = 0;
        return -3;
    }
    if (rrc < 0 || nrc < 0) {
        *pass = 0;
        snprintf(why, whylen, "%s", err->msg);
    } else if (*rn != *nn) {
        *pass = 0;
        snprintf(why, whylen, "%d outputs, expected %d", *nn, *rn);
    }
    return rrc < 0 ? -1 : nrc < 0 ? -2 : 0;
}

/* Judge trial t's outputs (read, then deleted) with KernelBench's allclose into *kc and the
 * running figures. 0, or -3 when kbv had no memory or descriptor to read them. */
static int standard_judge(eval_ctx *c, reply_trial *tr, const char *prefix, int t, kbv_case *kc, kbv_standard *acc, kbv_err *err) {
    kbv_tensor *ro = NULL, *no = NULL;
    int rn = 0, nn = 0, pass = 1;
    char why[200] = "";
    if (standard_read_trial(c, tr, prefix, t, &ro, &rn, &no, &nn, &pass, why, sizeof why, err) == -3) return -3;
    double tol = 0, worst = 0;
    for (int k = 0; pass && k < rn; k++) {
        tol = c->o->standard_tol > 0 ? c->o->standard_tol : (ro[k].dtype == KBV_DT_F16 || ro[k].dtype == KBV_DT_BF16) ? 1e-2 : 1e-4;
        double m;
        pass = judge_kernelbench_allclose(&ro[k], &no[k], tol, &m, why, sizeof why);
        if (m > worst) worst = m;
    }
    acc->tolerance = tol > 0 ? tol : (c->o->standard_tol > 0 ? c->o->standard_tol : 1e-4);
    if (worst > acc->max_abs_err) acc->max_abs_err = worst;
    acc->trials_passed += pass;
    if (!pass && acc->correct) snprintf(acc->detail, sizeof acc->detail, "trial %d: %s", t, why);
    acc->correct &= pass;
    snprintf(kc->distribution, sizeof kc->distribution, "nominal");
    snprintf(kc->domain, sizeof kc->domain, "kernelbench");
    kc->klass = -1;
    kc->seed = (uint64_t)tr->seed;
    kc->evaluated = 1, kc->passed = pass, kc->max_abs_err = worst, kc->atol = kc->rtol = acc->tolerance;
    if (!pass) snprintf(kc->detail, sizeof kc->detail, "%s", why);
    session_free_outputs(ro, rn), session_free_outputs(no, nn);
    return 0;
}

void standard_run(eval_ctx *c, int only, kbv_err *err) {
    kbv_result *r = c->r;
    kbv_standard *st = &r->standard;
    kbv_proc w;
    kbv_reply rep, fail;
    proc_result pr;
    st->ran = 1, st->trials = 5;
    eval_progress(c, "%s", "standard protocol: KernelBench's check in one process");
    int s = session_load(c, &w, "standard", 1, NULL, &pr, &fail, err);
    if (s < 0) { /* the worker did not start: no candidate code ran, so kbv's failure (eval.c) */
        snprintf(st->detail, sizeof st->detail, "%s", err->msg);
        c->failure = FAILURE_KBV;
        result_add_error(r, "the standard protocol's worker did not start: %s", err->msg);
        return;
    }
    int loaded = s == 0, ntrials = 0;
    char prefix[PATH_MAX + 32];
    snprintf(prefix, sizeof prefix, "%s/std/t", c->scratch);
    kbv_case trials[REPLY_MAX_TRIALS]; /* the decoder allows no more */
    kbv_standard acc = {.correct = 1};
    kbv_reply trep;
    memset(trials, 0, sizeof trials), memset(&trep, 0, sizeof trep);
    if (s == 0) {
        /* One trial a command, its outputs read before the next (src/worker/standard.c); the
         * trials share the GPU like kbv's own cases, the timing has it alone. */
        int tt = c->o->timing ? c->o->standard_trials : 0, locked = kbv_gpulock_set(&c->lock, 1, err), exhausted = 0;
        for (int t = 0; locked == 0 && s == 0 && t < st->trials && t < REPLY_MAX_TRIALS; t++) {
            s = session_call(c, &w, json_pack("{s:s, s:s, s:i, s:i}", "op", "standard", "prefix", prefix, "first", t, "trials", 1), c->o->timeout_s,
                             &rep, &pr, err);
            if (s) {
                fail = rep;
                break;
            }
            kbv_case *kc = &trials[ntrials++];
            if (rep.ntrials != 1) { /* asked for one trial: another count judges nothing, and fails it */
                snprintf(kc->distribution, sizeof kc->distribution, "nominal");
                snprintf(kc->domain, sizeof kc->domain, "kernelbench");
                kc->klass = -1, kc->evaluated = 1, kc->passed = 0;
                snprintf(kc->detail, sizeof kc->detail, "the worker replied with %d trials, asked for one", rep.ntrials);
                if (acc.correct) snprintf(acc.detail, sizeof acc.detail, "trial %d: %s", t, kc->detail);
                acc.correct = 0;
            } else if (standard_judge(c, &rep.trials[0], prefix, t, kc, &acc, err) == -3) {
                exhausted = 1, s = -1;
            }
            reply_free(&rep);
        }
        if (locked == 0 && s == 0 && tt > 0 && (locked = kbv_gpulock_set(&c->lock, 2, err)) == 0) {
            s = session_call(c, &w, json_pack("{s:s, s:i}", "op", "standard_time", "time_trials", tt), c->o->timeout_s, &trep, &pr, err);
            if (s) fail = trep, memset(&trep, 0, sizeof trep); /* the failure is the timing's */
        }
        kbv_gpulock_set(&c->lock, 0, NULL);
        if (locked < 0 || exhausted) { /* kbv's failure, no verdict */
            snprintf(st->detail, sizeof st->detail, "%s", err->msg);
            c->failure = FAILURE_KBV;
            if (exhausted) result_add_error(r, "the standard protocol's trial %d: %s (kbv's own exhaustion)", ntrials - 1, err->msg);
            else result_add_error(r, "the standard protocol: %s", err->msg);
            proc_kill(&w), proc_free(&w);
            return;
        }
    }
    if (s) {
        kbv_failure f;
        if (strcmp(fail.kind, "problem") == 0 && only) f = session_problem_failure(c, &w, "standard check", pr, &fail, err);
        else f = session_candidate_failure(c, &w, loaded ? "standard check" : "load", pr, &fail, err);
        snprintf(st->detail, sizeof st->detail, "%s", session_reply_msg(&fail));
        st->status = verdict_status(&(verdict_in){.failure = f});
        if (only || f == FAILURE_KBV) c->failure = f; /* kbv's own failure is the evaluation's */
        reply_free(&fail);
        proc_kill(&w), proc_free(&w);
        return;
    }
    if (trep.has_time) {
        st->timed = 1;
        st->time_ref_ms = trep.time_ref_ms;
        st->time_cand_ms = trep.time_cand_ms;
        st->time_trials = (int)trep.time_trials;
    }
    reply_free(&trep);
    st->correct = acc.correct, st->trials_passed = acc.trials_passed, st->max_abs_err = acc.max_abs_err, st->tolerance = acc.tolerance;
    if (acc.detail[0]) snprintf(st->detail, sizeof st->detail, "%s", acc.detail);
    for (int t = 0; only && t < ntrials; t++) {
        kbv_case *rc = result_add_case(r);
        if (rc) *rc = trials[t];
    }
    /* KernelBench's verdict: its trials only (a finding does not count there). */
    st->status = verdict_status(&(verdict_in){.cases = trials, .ncases = ntrials});
    if (only) session_finish_candidate(c, &w, !st->correct);
    else proc_finish(&w, 5.0);
    proc_free(&w);
}
