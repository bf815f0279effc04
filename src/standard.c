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
    int loaded = s == 0;
    char prefix[PATH_MAX + 32];
    snprintf(prefix, sizeof prefix, "%s/std/t", c->scratch);
    memset(&rep, 0, sizeof rep);
    if (s == 0) {
        if (kbv_gpulock_set(&c->lock, 2, err) < 0) { /* its trials and timing alone on the GPU: kbv's failure */
            snprintf(st->detail, sizeof st->detail, "%s", err->msg);
            c->failure = FAILURE_KBV;
            result_add_error(r, "the standard protocol: %s", err->msg);
            proc_kill(&w), proc_free(&w);
            return;
        }
        int tt = c->o->timing ? c->o->standard_trials : 0;
        s = session_call(c, &w, json_pack("{s:s, s:s, s:i, s:i}", "op", "standard", "prefix", prefix, "trials", st->trials, "time_trials", tt),
                         c->o->timeout_s * (st->trials + (tt > 0)), &rep, &pr, err);
        kbv_gpulock_set(&c->lock, 0, NULL);
        if (s) fail = rep, memset(&rep, 0, sizeof rep);
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
    if (rep.has_time) {
        st->timed = 1;
        st->time_ref_ms = rep.time_ref_ms;
        st->time_cand_ms = rep.time_cand_ms;
        st->time_trials = (int)rep.time_trials;
    }
    kbv_case trials[REPLY_MAX_TRIALS]; /* the decoder allows no more */
    memset(trials, 0, sizeof trials);
    st->correct = 1;
    for (int t = 0; t < rep.ntrials; t++) {
        kbv_tensor *ro = NULL, *no = NULL;
        int rn = 0, nn = 0, pass = 1;
        char why[200] = "";
        int rrc = standard_read_trial(c, &rep.trials[t], prefix, t, &ro, &rn, &no, &nn, &pass, why, sizeof why, err);
        if (rrc == -3) { /* kbv had no memory or descriptor to read them: kbv's failure, no verdict */
            c->failure = FAILURE_KBV;
            result_add_error(r, "the standard protocol's trial %d: %s (kbv's own exhaustion)", t, err->msg);
            reply_free(&rep);
            proc_kill(&w), proc_free(&w);
            return;
        }
        double tol = 0, worst = 0;
        for (int k = 0; pass && k < rn; k++) {
            tol = c->o->standard_tol > 0 ? c->o->standard_tol : (ro[k].dtype == KBV_DT_F16 || ro[k].dtype == KBV_DT_BF16) ? 1e-2 : 1e-4;
            double m;
            pass = judge_kernelbench_allclose(&ro[k], &no[k], tol, &m, why, sizeof why);
            if (m > worst) worst = m;
        }
        st->tolerance = tol > 0 ? tol : (c->o->standard_tol > 0 ? c->o->standard_tol : 1e-4);
        if (worst > st->max_abs_err) st->max_abs_err = worst;
        st->trials_passed += pass;
        if (!pass && st->correct) snprintf(st->detail, sizeof st->detail, "trial %d: %s", t, why);
        st->correct &= pass;
        kbv_case *kc = &trials[t];
        snprintf(kc->distribution, sizeof kc->distribution, "nominal");
        snprintf(kc->domain, sizeof kc->domain, "kernelbench");
        kc->klass = -1;
        kc->seed = (uint64_t)rep.trials[t].seed;
        kc->evaluated = 1, kc->passed = pass, kc->max_abs_err = worst, kc->atol = kc->rtol = st->tolerance;
        if (!pass) snprintf(kc->detail, sizeof kc->detail, "%s", why);
        kbv_case *rc = only ? result_add_case(r) : NULL;
        if (rc) *rc = *kc;
        session_free_outputs(ro, rn), session_free_outputs(no, nn);
    }
    /* KernelBench's verdict: its trials only (a finding does not count there). */
    st->status = verdict_status(&(verdict_in){.cases = trials, .ncases = rep.ntrials});
    reply_free(&rep);
    if (only) session_finish_candidate(c, &w, !st->correct);
    else proc_finish(&w, 5.0);
    proc_free(&w);
}
