/* paper.c -- KernelBench-Verified's protocol as its paper published it, for comparison
 * (docs/correctness.md, "The paper protocol"; docs/timing.md): reference and candidate in one
 * worker process, KernelBench's 5 seeded trials judged with allclose at 1e-3, then four input
 * variants (a fresh get_inputs() draw scaled by 1, 3, 0.01 and -1), the mean of CUDA events
 * against the reference timed with TF32 on and off, and torch's peak memory over one call.
 *
 * Fills r->paper with the protocol's own verdict (verdict_status() over its trials and
 * variants, the findings not counted, as the paper counts none). When it is the only
 * protocol, its trials and variants are also the result's cases and its failure the
 * evaluation's. What its worker's guard sees is a finding of the result like any other
 * (session.c), and under --protocol all it counts toward the result's status (eval.c), not
 * toward r->paper.status. The worker runs in the one-process role "standard" (session.c
 * gives that role its folder, budget and confinement); its commands are paper, paper_time
 * and paper_memory (docs/protocol.md).
 */
#include "evalctx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAPER_TRIALS 5 /* the published num_correct_trials */

double paper_tolerance(kbv_dtype dt) { return dt == KBV_DT_F16 || dt == KBV_DT_BF16 ? 1e-2 : 1e-3; }

int paper_finite(const kbv_tensor *t) {
    if (!kbv_dtype_is_float(t->dtype)) return 1;
    int64_t n = kbv_tensor_numel(t);
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(kbv_tensor_get(t, i))) return 0;
    return 1;
}

void paper_verdict(kbv_paper *pp, const kbv_case *cases, int ncases) {
    pp->standard_correct = pp->trials_passed == pp->trials && pp->trials > 0;
    pp->hidden_correct = pp->variants_run;
    for (int k = 0; k < KBV_PAPER_VARIANTS; k++)
        if (pp->variants[k].evaluated && !pp->variants[k].passed) pp->hidden_correct = 0;
    pp->correct = pp->standard_correct && pp->hidden_correct;
    pp->status = verdict_status(&(verdict_in){.cases = cases, .ncases = ncases});
}

/* What one worker failure means: the candidate's (its kind) or, for a reference failure when
 * the protocol runs alone, the problem's. Fills the status and detail; kbv's own failure and
 * a lone protocol's failure become the evaluation's. */
static void paper_failed(eval_ctx *c, kbv_proc *w, const char *what, proc_result pr, kbv_reply *fail, int only, kbv_err *err) {
    kbv_paper *pp = &c->r->paper;
    kbv_failure f;
    if (strcmp(fail->kind, "problem") == 0 && only) f = session_problem_failure(c, w, what, pr, fail, err);
    else f = session_candidate_failure(c, w, what, pr, fail, err);
    snprintf(pp->detail, sizeof pp->detail, "%s: %s", what, session_reply_msg(fail));
    pp->status = verdict_status(&(verdict_in){.failure = f});
    if (!pp->correct) { /* while checking; a failure while measuring leaves the judged verdict, as published */
        pp->standard_correct = pp->trials > 0 && pp->trials_passed == pp->trials;
        pp->hidden_correct = 0;
    }
    if (only || f == FAILURE_KBV) c->failure = f;
}

/* Read trial t's outputs (files PREFIX<t>_ref_<j>.kbt and _new_) and judge them as the paper
 * does: allclose at paper_tolerance() of each reference output's dtype. Fills kc (evaluated,
 * passed, max_abs_err, atol, detail); *nonfinite: a reference output holds NaN or Inf. 0, or
 * -3 when kbv had no memory or descriptor to read them (kbv's failure). */
static int paper_judge(eval_ctx *c, reply_trial *tr, const char *prefix, int t, kbv_case *kc, int *nonfinite, kbv_err *err) {
    kbv_tensor *ro = NULL, *no = NULL;
    int rn = 0, nn = 0, pass = 1;
    char why[200] = "";
    int rd = standard_read_trial(c, tr, prefix, t, &ro, &rn, &no, &nn, &pass, why, sizeof why, err);
    if (rd == -3) return -3;
    *nonfinite = 0;
    for (int k = 0; rd != -1 && k < rn; k++)
        if (!paper_finite(&ro[k])) *nonfinite = 1;
    double tol = 1e-3, worst = 0;
    for (int k = 0; pass && k < rn; k++) {
        double m, tk = paper_tolerance(ro[k].dtype);
        if (tk > tol) tol = tk;
        pass = judge_kernelbench_allclose(&ro[k], &no[k], tk, &m, why, sizeof why);
        if (m > worst) worst = m;
    }
    kbv_paper *pp = &c->r->paper;
    if (tol > pp->tolerance) pp->tolerance = tol;
    if (!*nonfinite && rd == 0) {
        pp->judged = 1;
        if (worst > pp->max_abs_err) pp->max_abs_err = worst;
    }
    kc->klass = -1;
    kc->seed = (uint64_t)tr->seed;
    kc->evaluated = 1, kc->passed = pass, kc->max_abs_err = worst, kc->atol = kc->rtol = tol;
    if (!pass) snprintf(kc->detail, sizeof kc->detail, "%s", why);
    session_free_outputs(ro, rn), session_free_outputs(no, nn);
    return 0;
}

/* One paper command: 0 with *rep, or 1 after paper_failed (the worker is then killed unless
 * the reference failed on a variant: keep_on_problem, *problem set, the reply in *rep). */
static int paper_step(eval_ctx *c, kbv_proc *w, json_t *cmd, double timeout, const char *what, int only, int keep_on_problem, int *problem,
                      kbv_reply *rep, kbv_err *err) {
    proc_result pr;
    if (problem) *problem = 0;
    if (session_call(c, w, cmd, timeout, rep, &pr, err) == 0) return 0;
    if (keep_on_problem && pr == PROC_OK && strcmp(rep->kind, "problem") == 0) {
        *problem = 1;
        return 1;
    }
    if (pr != PROC_OK) memset(rep, 0, sizeof *rep);
    paper_failed(c, w, what, pr, rep, only, err);
    reply_free(rep);
    return 1;
}

/* The trials and the variants: the cases (trials first) into cases (*ncases of them). 0; 1 when the
 * worker failed (status set, worker to be killed); -1 when kbv failed (c->failure). */
static int paper_check(eval_ctx *c, kbv_proc *w, int only, kbv_case *cases, int *ncases, kbv_err *err) {
    kbv_paper *pp = &c->r->paper;
    kbv_reply rep;
    char prefix[PATH_MAX + 32];
    json_t *cmd;
    /* One trial a command, its outputs read (and deleted) before the next: never more than one
     * trial's outputs on disk (the standard step's five of 1 GiB went over a candidate folder's
     * budget on the H200; standard.c). The worker keeps its two models between commands. */
    for (int t = 0; t < pp->trials && t < PAPER_TRIALS; t++) {
        snprintf(prefix, sizeof prefix, "%s/std/p%d_", c->scratch, t);
        cmd = json_pack("{s:s, s:s, s:i, s:i, s:f}", "op", "paper", "prefix", prefix, "first", t, "trials", 1, "scale", 1.0);
        if (paper_step(c, w, cmd, c->o->timeout_s, "paper check", only, 0, NULL, &rep, err)) {
            pp->trials_passed = 0, *ncases = 0, pp->judged = 0, pp->max_abs_err = 0, pp->tolerance = 1e-3; /* as when its one command failed */
            return 1;
        }
        kbv_case *kc = &cases[(*ncases)++];
        int nonfinite;
        memset(kc, 0, sizeof *kc);
        snprintf(kc->distribution, sizeof kc->distribution, "nominal");
        snprintf(kc->domain, sizeof kc->domain, "paper");
        if (rep.ntrials != 1) { /* asked for one: another count judges nothing, and fails it */
            kc->evaluated = 1, kc->klass = -1;
            snprintf(kc->detail, sizeof kc->detail, "the worker replied with %d trials, asked for one", rep.ntrials);
        } else if (paper_judge(c, &rep.trials[0], prefix, 0, kc, &nonfinite, err) < 0) {
            reply_free(&rep);
            c->failure = FAILURE_KBV;
            result_add_error(c->r, "the paper protocol's trial %d: %s (kbv's own exhaustion)", t, err->msg);
            return -1;
        }
        reply_free(&rep);
        pp->trials_passed += kc->passed;
        if (!kc->passed && !pp->detail[0]) snprintf(pp->detail, sizeof pp->detail, "trial %d: %s", t, kc->detail);
    }
    if (pp->trials_passed < pp->trials) { /* the published hidden check runs only after the trials pass */
        for (int k = 0; k < KBV_PAPER_VARIANTS; k++) snprintf(pp->variants[k].detail, sizeof pp->variants[k].detail, "not run: a trial failed");
        return 0;
    }
    pp->variants_run = 1;
    for (int k = 0; k < KBV_PAPER_VARIANTS; k++) {
        kbv_paper_variant *v = &pp->variants[k];
        char vprefix[PATH_MAX + 40], what[64];
        int problem;
        snprintf(vprefix, sizeof vprefix, "%s/std/v%d_", c->scratch, k);
        snprintf(what, sizeof what, "paper variant x%g", v->scale);
        cmd = json_pack("{s:s, s:s, s:i, s:i, s:f}", "op", "paper", "prefix", vprefix, "first", PAPER_TRIALS + k, "trials", 1, "scale", v->scale);
        if (paper_step(c, w, cmd, c->o->timeout_s, what, only, 1, &problem, &rep, err)) {
            if (!problem) return 1;
            v->skipped = 1; /* the reference raised: the published generator drops the variant */
            snprintf(v->detail, sizeof v->detail, "dropped: the reference raised: %s", session_reply_msg(&rep));
            reply_free(&rep);
            continue;
        }
        kbv_case kc = {0};
        int nonfinite = 0;
        snprintf(kc.distribution, sizeof kc.distribution, "%s", k == 0 ? "nominal" : "scaled");
        snprintf(kc.domain, sizeof kc.domain, "x%g", v->scale);
        if (rep.ntrials != 1) {
            reply_free(&rep);
            memset(&rep, 0, sizeof rep);
            snprintf(rep.kind, sizeof rep.kind, "protocol");
            snprintf(rep.message, sizeof rep.message, "a paper variant's reply without its one trial");
            paper_failed(c, w, what, PROC_PROTOCOL, &rep, only, err);
            return 1;
        }
        if (paper_judge(c, &rep.trials[0], vprefix, 0, &kc, &nonfinite, err) < 0) {
            reply_free(&rep);
            c->failure = FAILURE_KBV;
            result_add_error(c->r, "the paper protocol's variant x%g: %s (kbv's own exhaustion)", v->scale, err->msg);
            return -1;
        }
        reply_free(&rep);
        if (nonfinite) { /* dropped, as the published generator drops it */
            v->skipped = 1, kc.skipped = 1, kc.evaluated = 0;
            snprintf(v->detail, sizeof v->detail, "dropped: the reference output contains NaN/Inf");
            snprintf(kc.skip_reason, sizeof kc.skip_reason, "%s", v->detail);
            kc.detail[0] = '\0';
        } else {
            v->evaluated = 1, v->passed = kc.passed;
            if (!kc.passed) {
                snprintf(v->detail, sizeof v->detail, "%s", kc.detail);
                if (!pp->detail[0]) snprintf(pp->detail, sizeof pp->detail, "variant x%g: %s", v->scale, kc.detail);
            }
        }
        cases[(*ncases)++] = kc;
    }
    return 0;
}

/* The published timing and memory of a correct candidate: 0, or 1 when the worker failed. */
static int paper_measure(eval_ctx *c, kbv_proc *w, int only, kbv_err *err) {
    kbv_paper *pp = &c->r->paper;
    kbv_reply rep;
    int tt = c->o->timing ? c->o->standard_trials : 0;
    if (tt > 0) {
        /* the candidate under torch's defaults, then the reference with TF32 ('high'), then without */
        static const struct {
            const char *model;
            int tf32;
        } arms[3] = {{"new", 0}, {"ref", 1}, {"ref", 0}};
        double ms[3] = {0, 0, 0};
        for (int a = 0; a < 3; a++) {
            json_t *cmd = json_pack("{s:s, s:s, s:i, s:b}", "op", "paper_time", "model", arms[a].model, "trials", tt, "tf32", arms[a].tf32);
            if (paper_step(c, w, cmd, c->o->timeout_s * 3, "paper timing", only, 0, NULL, &rep, err)) return 1;
            ms[a] = a ? rep.time_ref_ms : rep.time_cand_ms;
            reply_free(&rep);
        }
        pp->timed = 1, pp->time_trials = tt;
        pp->time_cand_ms = ms[0], pp->time_tf32_ms = ms[1], pp->time_fp32_ms = ms[2];
    }
    long long *peak[2] = {&pp->peak_cand, &pp->peak_ref};
    for (int m = 0; m < 2; m++) {
        json_t *cmd = json_pack("{s:s, s:s}", "op", "paper_memory", "model", m ? "ref" : "new");
        if (paper_step(c, w, cmd, c->o->timeout_s, "paper memory", only, 0, NULL, &rep, err)) return 1;
        if (rep.audit.has_torch_peak) *peak[m] = rep.audit.torch_peak_bytes;
        reply_free(&rep);
    }
    return 0;
}

void paper_run(eval_ctx *c, int only, kbv_err *err) {
    kbv_result *r = c->r;
    kbv_paper *pp = &r->paper;
    kbv_proc w;
    kbv_reply fail;
    proc_result pr;
    pp->ran = 1, pp->trials = PAPER_TRIALS, pp->tolerance = 1e-3, pp->warmup = 3;
    for (int k = 0; k < KBV_PAPER_VARIANTS; k++) pp->variants[k].scale = kbv_paper_scales[k];
    eval_progress(c, "%s", "paper protocol: KernelBench-Verified's check in one process");
    int s = session_load(c, &w, "standard", 1, NULL, &pr, &fail, err);
    if (s < 0) { /* the worker did not start: no candidate code ran, so kbv's failure (eval.c) */
        snprintf(pp->detail, sizeof pp->detail, "%s", err->msg);
        pp->status = verdict_status(&(verdict_in){.failure = FAILURE_KBV});
        c->failure = FAILURE_KBV;
        result_add_error(r, "the paper protocol's worker did not start: %s", err->msg);
        return;
    }
    if (s > 0) {
        paper_failed(c, &w, "load", pr, &fail, only, err);
        reply_free(&fail);
        proc_kill(&w), proc_free(&w);
        return;
    }
    kbv_case cases[PAPER_TRIALS + KBV_PAPER_VARIANTS];
    int ncases = 0;
    /* Its checks share the GPU like kbv's own cases; its timing and memory have it alone. */
    int locked = kbv_gpulock_set(&c->lock, 1, err);
    s = locked < 0 ? -1 : paper_check(c, &w, only, cases, &ncases, err);
    if (s == 0) paper_verdict(pp, cases, ncases);
    if (s == 0 && pp->correct) s = (locked = kbv_gpulock_set(&c->lock, 2, err)) < 0 ? -1 : paper_measure(c, &w, only, err);
    kbv_gpulock_set(&c->lock, 0, NULL);
    if (locked < 0) { /* kbv's failure */
        snprintf(pp->detail, sizeof pp->detail, "%s", err->msg);
        c->failure = FAILURE_KBV;
        result_add_error(r, "the paper protocol: %s", err->msg);
    }
    if (s != 0) { /* the status and detail say why (paper_failed), or kbv failed */
        if (s < 0) pp->status = verdict_status(&(verdict_in){.failure = FAILURE_KBV});
        pp->timed = 0;
        proc_kill(&w), proc_free(&w);
        return;
    }
    for (int i = 0; only && i < ncases; i++) {
        kbv_case *rc = result_add_case(r);
        if (rc) *rc = cases[i];
    }
    if (only) session_finish_candidate(c, &w, !pp->correct);
    else proc_finish(&w, 5.0);
    proc_free(&w);
}
