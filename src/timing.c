/* timing.c -- the timed comparison of a verified candidate with the reference (docs/timing.md).
 *
 * Both workers stay alive from the cases. The stages, in order:
 *   setup       each worker makes the timing input sets (the first two passed cases, copied
 *               to up to 32 placements) and, where it can, values no call has seen
 *   audit       one call each under CUPTI, kept out of the timed samples (detect_audit)
 *   checks      the reference's runs on a fresh draw of each hidden distribution (hidden checks)
 *   memo probe  new values in the same input tensors must change the output
 *   partial     a small part of an input changed in place must change the output where the
 *               reference's changes
 *   warm-up     until clocks and caches settle (and torch.compile has compiled)
 *   rounds      every arm once per round in random order (candidate, reference with TF32,
 *               strict reference, torch.compile), until the speedup's CI is narrow enough;
 *               timed outputs re-checked against the oracle; value-cache rounds interleaved
 *   summary     medians, per-round ratios with bootstrap CIs, the process offset
 *   wall        batches of calls of both arms on kbv's own clock
 *   graphs      CUDA-graph replay, and the timer's floor (kbv's empty kernel)
 *   battery     each hidden check once more, after every timed call
 * One headline round in 16 (drawn from kbv's secret) is a hidden check instead.
 * A hack finding (detect.c) stops the stages that follow. The verdict is verdict.c's.
 */
#include "evalctx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_host.h"
#include "perf.h"
#include "stats.h"

enum { ARM_CAND, ARM_REF, ARM_STRICT, ARM_COMPILE, ARM_COUNT };
/* The largest difference between the two workers' medians in 16 A/A runs of a 5.5 us call on
 * the H200 (2026-12-01/02; BENCHMARKS.md): 4 steps of the 32 ns event clock. */
#define PROCESS_OFFSET_NS 128.0
enum { MAX_ROUNDS = 5000 };
/* Hidden check cases (one fresh draw per hidden distribution) and the share of headline rounds
 * that run the candidate on one of them instead (docs/timing.md, "Hidden checks"). */
enum { CHECK_ONE_IN = 16 }; /* TIMING_CHECKS: evalctx.h */
/* The worker's number of timing sets: bench_save's "set" is 2 + k for check set k. */
#define BENCH_SETS_ 2
static const char *kArmWhat[ARM_COUNT] = {"candidate", "reference (TF32 on)", "reference (fp32 strict)", "torch.compile(reference)"};

typedef struct timing {
    eval_ctx *c;
    kbv_proc *ref, *cand, *procs[ARM_COUNT];
    kept_case *kept;
    int nkept, cuda;
    double to;       /* each step's limit, seconds */
    double peak_gbs; /* the reference worker's peak bandwidth (the roofline) */
    int fresh_ok;    /* both workers can draw values no call has seen */
    int kept_differ; /* the two kept cases' oracles differ somewhere: the memoization probe's premise */
    int arms[ARM_COUNT], narms;
    double *ms[ARM_COUNT], *ratio; /* paired rounds: ms[arm][0..n) */
    int n;
    kept_case checks[TIMING_CHECKS]; /* hidden check cases: fresh draws of each distribution */
    int nchecks;
    uint64_t check_rng;      /* kbv's secret draws of check rounds */
    long long cand_samples; /* the candidate's timed calls so far (bench samples) */
    double *dref, *dcand; /* detect_value_cache's rounds */
    unsigned char *dnew;
    int nd;
} timing;

static const char *why_failed(const kbv_reply *rep, proc_result pr, const kbv_err *err) { return pr == PROC_OK ? session_reply_msg(rep) : err->msg; }

/* The GPU lock in timing (util.h). Every call of the candidate or the reference that timing
 * makes runs with the GPU to this evaluation alone, timed or not, so that the candidate cannot
 * tell a timed call from a checked one by what else runs on the GPU. Saving a call's outputs
 * and judging them (kbv's CPU work: seconds for outputs of a GiB) need no GPU of their own:
 * there other evaluations' shared commands run (gpu_share), and the next call takes the GPU
 * back (gpu_alone). On the H200 these saves and judgements were most of the time that
 * evaluations held the GPU alone (BENCHMARKS.md). */
static int gpu_share(timing *t, kbv_err *err) { return kbv_gpulock_set(&t->c->lock, 1, err); }
static int gpu_alone(timing *t, kbv_err *err) { return kbv_gpulock_set(&t->c->lock, 2, err); }

static json_t *bench_cmd(int arm, double warmup, int prime, long long fresh) {
    json_t *cmd = json_pack("{s:s, s:s, s:i}", "op", "bench", "arm", arm == ARM_COMPILE ? "compile" : "model", "n", 1);
    if (prime) json_object_set_new(cmd, "prime", json_true());
    if (fresh >= 0) json_object_set_new(cmd, "fresh", json_integer(fresh));
    json_object_set_new(cmd, "tf32", json_boolean(arm != ARM_STRICT));
    if (warmup > 0) json_object_set_new(cmd, "warmup_s", json_real(warmup));
    return cmd;
}

/* The candidate failed in a stage: its failure, 1. */
static int cand_failed(timing *t, const char *what, proc_result pr, kbv_reply *rep, kbv_err *err) {
    t->c->failure = session_candidate_failure(t->c, t->cand, what, pr, rep, err);
    reply_free(rep);
    return 1;
}

/* ---- setup ------------------------------------------------------------------------------ */

static int stage_setup(timing *t, kbv_err *err) {
    eval_ctx *c = t->c;
    kbv_perf *pf = &c->r->perf;
    kbv_reply rep;
    proc_result pr;
    json_t *sets = json_array();
    for (int k = 0; k < t->nkept; k++)
        json_array_append_new(sets,
                              json_pack("{s:o, s:I}", "inputs", plan_case_specs(&c->plan, c->r->seed, t->kept[k].ci, t->kept[k].dist, t->kept[k].dom),
                                        "seed", (json_int_t)t->kept[k].seed));
    json_t *checks = json_array();
    for (int k = 0; k < t->nchecks; k++)
        json_array_append_new(checks, json_pack("{s:o, s:I}", "inputs",
                                                plan_case_specs(&c->plan, c->r->seed, t->checks[k].ci, t->checks[k].dist, t->checks[k].dom),
                                                "seed", (json_int_t)t->checks[k].seed));
    for (int side = 0; side < 2; side++) {
        kbv_proc *p = side ? t->cand : t->ref;
        json_t *setup = json_pack("{s:s, s:O}", "op", "bench_setup", "sets", sets);
        if (side && t->nchecks) json_object_set(setup, "checks", checks);
        if (c->fresh_ci >= 0)
            json_object_set_new(setup, "fresh",
                                json_pack("{s:o, s:I}", "inputs", plan_case_specs(&c->plan, c->r->seed, c->fresh_ci, c->fresh_dist, c->fresh_dom),
                                          "seed", (json_int_t)c->fresh_seed));
        if (session_call(t->c, p, setup, t->to, &rep, &pr, err)) {
            json_decref(sets), json_decref(checks);
            if (side) return cand_failed(t, "timing setup", pr, &rep, err);
            snprintf(pf->note, sizeof pf->note, "the reference failed to set up timing: %s", why_failed(&rep, pr, err));
            reply_free(&rep);
            return 2;
        }
        /* figures used as limits come from the reference's worker only */
        if (!side && rep.has_peak_gbs) t->peak_gbs = rep.peak_gbs;
        t->fresh_ok &= rep.fresh;
        pf->slots[side] = (int)rep.slots;
        reply_free(&rep);
    }
    json_decref(sets), json_decref(checks);
    return 0;
}

/* ---- the audit ---------------------------------------------------------------------------- */

static void keep_audit(eval_ctx *c, const kbv_reply *a, int cand) {
    kbv_result *r = c->r;
    long long tpeak = a->audit.has_torch_peak ? a->audit.torch_peak_bytes : -1;
    if (cand)
        json_decref(r->audit_cand), r->audit_cand = json_incref(a->audit.doc), r->memory.peak_cand = a->audit.peak_bytes,
                                    r->memory.torch_peak_cand = tpeak;
    else
        json_decref(r->audit_ref), r->audit_ref = json_incref(a->audit.doc), r->memory.peak_ref = a->audit.peak_bytes,
                                   r->memory.torch_peak_ref = tpeak;
}

static int stage_audit(timing *t, kbv_err *err) {
    eval_ctx *c = t->c;
    kbv_perf *pf = &c->r->perf;
    kbv_reply rep;
    proc_result pr;
    eval_progress(c, "%s", "timing: CUPTI audit of one call each");
    /* The candidate's own kernels, as the static inspection at load time named them. */
    json_t *names = json_array();
    for (int i = 0; i < c->nkernels; i++) json_array_append_new(names, json_string(c->kernels[i]));
    for (int side = 0; side < 2; side++) {
        kbv_proc *p = side ? t->cand : t->ref;
        json_t *cmd = json_pack("{s:s, s:o}", "op", "audit", "authored", side ? json_incref(names) : json_array());
        if (session_call(t->c, p, cmd, t->to, &rep, &pr, err) == 0) {
            keep_audit(c, &rep, side);
            detect_audit(c, &rep, side);
            reply_free(&rep);
            continue;
        }
        if (side && !(pr == PROC_OK && strcmp(rep.kind, "audit") == 0)) {
            json_decref(names);
            return cand_failed(t, "audited call", pr, &rep, err);
        }
        result_add_finding(c->r, FIND_AUDIT_UNAVAILABLE, NULL, "no CUPTI audit of the %s: %s", side ? "candidate" : "reference",
                           why_failed(&rep, pr, err));
        reply_free(&rep);
        if (!side && pr != PROC_OK) {
            json_decref(names);
            snprintf(pf->note, sizeof pf->note, "the reference worker failed during the audit");
            return 2;
        }
    }
    json_decref(names);
    return 0;
}

/* ---- the memoization probe ------------------------------------------------------------------ */

static int kept_differ(const kept_case *kept, int nkept) {
    if (nkept != 2) return 0;
    const kept_case *k0 = &kept[0], *k1 = &kept[1];
    int differ = 0;
    for (int k = 0; !differ && k < k0->rr.oracle.n && k < k1->rr.oracle.n; k++)
        differ = gen_fingerprint_host(k0->rr.oracle.t[k].data, k0->rr.oracle.t[k].nbytes) !=
                 gen_fingerprint_host(k1->rr.oracle.t[k].data, k1->rr.oracle.t[k].nbytes);
    return differ;
}

static int stage_memo_probe(timing *t, kbv_err *err) {
    if (t->nkept != 2 || !t->kept_differ) return 0;
    kbv_reply rep;
    proc_result pr;
    if (session_call(t->c, t->cand, json_pack("{s:s}", "op", "memo_probe"), t->to, &rep, &pr, err))
        return cand_failed(t, "the memoization probe", pr, &rep, err);
    if (reply_prints_equal(&rep.before, &rep.after))
        result_add_finding(t->c->r, FIND_OUTPUT_MEMOIZATION, json_pack("{s:o}", "outputs", reply_prints_to_json(&rep.after)),
                           "new values written into the same input tensors left the output unchanged: it was cached");
    reply_free(&rep);
    return 0;
}

/* ---- warm-up ----------------------------------------------------------------------------- */

/* ---- the partial-rewrite probe ------------------------------------------------------------ */

/* Each worker calls once on timing set 0, then with a small part of one input changed in place
 * (one element, 8 scattered ones, one row) calls again; both outputs saved. Where the
 * reference's output changed (by more than 1e-3 of its largest magnitude), the candidate's
 * must have changed too: a cache keyed on a sample of the input's content, or one that keeps
 * rows it has seen, returns its previous values there (partial_rewrite_ignored). */
typedef struct probe_out {
    kbv_tensor *t[2]; /* before, after */
    int n[2];
} probe_out;

static void probe_out_free(probe_out *o) {
    for (int v = 0; v < 2; v++) session_free_outputs(o->t[v], o->n[v]), o->t[v] = NULL, o->n[v] = 0;
}

/* Run the probe on p into *o: the reference (side 1) first, which picks the input to rewrite
 * (*input, -1: none), then the candidate (side 0), told that input; what the candidate's
 * process says of it is not read: its outputs before and after are the evidence. 0; 1 the
 * candidate failed; 2 the reference did or there is nothing to probe; -1 kbv. */
static int partial_run(timing *t, kbv_proc *p, int side, const char *kind, long long seed, int *input, probe_out *o, kbv_err *err) {
    eval_ctx *c = t->c;
    kbv_reply rep;
    proc_result pr;
    char prefix[PATH_MAX], pre[PATH_MAX + 2];
    snprintf(prefix, sizeof prefix, "%s/%s/partial_%s_", c->scratch, side ? "ref" : "cand", kind);
    json_t *cmd = json_pack("{s:s, s:s, s:I}", "op", "partial_probe", "kind", kind, "seed", (json_int_t)seed);
    if (!side) json_object_set_new(cmd, "input", json_integer(*input));
    if (gpu_alone(t, err) < 0) return -1;
    if (session_call(c, p, cmd, t->to, &rep, &pr, err)) {
        if (!side) return cand_failed(t, "the partial-rewrite probe", pr, &rep, err);
        reply_free(&rep);
        return 2;
    }
    if (side) *input = rep.input;
    reply_free(&rep);
    /* The two calls ran with the GPU alone; saving their outputs (partial_save), reading and
     * comparing them share it. */
    if (gpu_share(t, err) < 0) return -1;
    if (*input < 0) return 2; /* no floating input to rewrite: the reference kept nothing */
    if (session_call(c, p, json_pack("{s:s, s:s}", "op", "partial_save", "prefix", prefix), t->to, &rep, &pr, err)) {
        if (!side) return cand_failed(t, "the partial-rewrite probe's outputs", pr, &rep, err);
        reply_free(&rep);
        return 2;
    }
    int rc = 0;
    if (!rep.values.present || !rep.after_values.present) {
        if (side) rc = 2;
        else { /* the worker's reply left out what it was asked to save */
            result_add_error(c->r, "the partial-rewrite probe's outputs: the candidate's process saved none");
            c->failure = FAILURE_CRASH;
            rc = 1;
        }
    }
    const run_out *like = &t->kept[0].rr.strict;
    for (int v = 0; v < 2 && !rc; v++) {
        snprintf(pre, sizeof pre, "%s%c", prefix, v ? 'b' : 'a');
        out_spec spec = {.prefix = pre, .like = like->t, .nlike = like->n, .consume = 1};
        int r = session_read_outputs(v ? &rep.after_values : &rep.values, &spec, &o->t[v], &o->n[v], err);
        if (r == -3) rc = -1;
        else if (r < 0) {
            if (side) rc = 2;
            else {
                result_add_error(c->r, "the partial-rewrite probe's outputs: %s", err->msg);
                c->failure = FAILURE_CRASH;
                rc = 1;
            }
        }
    }
    reply_free(&rep);
    return rc;
}

static int stage_partial_probe(timing *t, kbv_err *err) {
    eval_ctx *c = t->c;
    static const char *const kinds[] = {"one", "scattered", "row"};
    eval_progress(c, "%s", "timing: partial-rewrite probe");
    for (int k = 0; k < 3 && !verdict_has_hack(c->r); k++) {
        long long seed = (long long)(kbv_mix64(c->r->seed ^ (0x9A27ULL + (uint64_t)k)) & 0xffffffffffffULL);
        probe_out po[2] = {{{NULL, NULL}, {0, 0}}, {{NULL, NULL}, {0, 0}}};
        int rc = 0, input = -1;
        for (int side = 1; side >= 0 && !rc; side--) rc = partial_run(t, side ? t->ref : t->cand, side, kinds[k], seed, &input, &po[side], err);
        long long changed = 0, stale = 0;
        for (int q = 0; !rc && q < po[1].n[0] && q < po[1].n[1] && q < po[0].n[0] && q < po[0].n[1]; q++) {
            const kbv_tensor *ra = &po[1].t[0][q], *rb = &po[1].t[1][q], *ca = &po[0].t[0][q], *cb = &po[0].t[1][q];
            int64_t n = kbv_tensor_numel(ra);
            if (kbv_tensor_numel(rb) != n || kbv_tensor_numel(ca) != n || kbv_tensor_numel(cb) != n || !kbv_dtype_is_float(ra->dtype)) continue;
            double big = 0;
            for (int64_t i = 0; i < n; i++) {
                double x = fabs(kbv_tensor_get(ra, i));
                if (isfinite(x) && x > big) big = x;
            }
            double tau = 1e-3 * big;
            for (int64_t i = 0; i < n; i++) {
                double dr = kbv_tensor_get(rb, i) - kbv_tensor_get(ra, i), dc = kbv_tensor_get(cb, i) - kbv_tensor_get(ca, i);
                if (!(fabs(dr) > tau)) continue; /* also skips NaN */
                changed++;
                if (fabs(dc) <= tau / 100) stale++;
            }
        }
        probe_out_free(&po[0]), probe_out_free(&po[1]);
        if (rc == 2) continue; /* nothing to probe, or the reference failed: no figure */
        if (rc) return rc;
        if (changed > 0 && stale * 2 > changed)
            result_add_finding(c->r, FIND_PARTIAL_REWRITE_IGNORED,
                               json_pack("{s:s, s:I, s:I}", "rewrite", kinds[k], "changed", (json_int_t)changed, "unchanged", (json_int_t)stale),
                               "with %s of an input changed in place (%s), the reference's output changed in %lld element(s) and the "
                               "candidate's stayed as it was in %lld of them: its result does not follow its input",
                               k == 0 ? "one element" : k == 1 ? "8 scattered elements" : "one row", kinds[k], changed, stale);
    }
    return gpu_alone(t, err) < 0 ? -1 : 0;
}

static int stage_warmup(timing *t, kbv_err *err) {
    eval_ctx *c = t->c;
    kbv_perf *pf = &c->r->perf;
    kbv_reply rep;
    proc_result pr;
    t->arms[t->narms++] = ARM_CAND, t->arms[t->narms++] = ARM_REF;
    if (t->cuda) t->arms[t->narms++] = ARM_STRICT;
    if (c->o->compile_baseline) t->arms[t->narms++] = ARM_COMPILE;
    eval_progress(c, "%s", "timing: warm-up");
    double warm_max_ms = 0;
    for (int a = 0; a < t->narms; a++) {
        double w = t->cuda ? (a == 0 ? 0.3 : 0.2) : 0.05;
        int arm = t->arms[a];
        if (session_call(t->c, t->procs[arm], bench_cmd(arm, w, 0, -1), arm == ARM_COMPILE ? c->o->load_timeout_s : t->to, &rep, &pr, err)) {
            if (arm == ARM_CAND) return cand_failed(t, "timing warm-up", pr, &rep, err);
            if (arm == ARM_COMPILE) {
                snprintf(pf->note, sizeof pf->note, "torch.compile baseline failed: %.200s", why_failed(&rep, pr, err));
                reply_free(&rep);
                t->narms--;
                if (pr != PROC_OK) return 2;
                continue;
            }
            snprintf(pf->note, sizeof pf->note, "the reference failed in timing: %.200s", why_failed(&rep, pr, err));
            reply_free(&rep);
            return 2;
        }
        pf->held[arm == ARM_CAND] = (int)rep.held;
        if (rep.has_warmup_last && rep.warmup_last_ms > warm_max_ms) warm_max_ms = rep.warmup_last_ms;
        reply_free(&rep);
    }
    /* A fixed cost of running first after the other worker (cold code, mappings) is about
     * 0.1 us: worth an extra untimed call per sample only for short calls. */
    pf->primed = t->cuda && (c->o->prime == 1 || (c->o->prime < 0 && warm_max_ms < 2.0));
    return 0;
}

/* ---- the rounds --------------------------------------------------------------------------- */

/* Re-check a timed output against the oracle of the set it was computed on: 1 passed, 0 not
 * (why), -1 when kbv itself failed to read it (err). */
static int recheck(timing *t, kbv_reply *rep, const char *prefix, char *why, size_t whylen, kbv_err *err) {
    int set = rep->has_set ? (int)rep->set : -1; /* 0, 1: the timing sets; 2 + k: check set k */
    ref_runs *rr = set >= 0 && set < t->nkept                             ? &t->kept[set].rr
                   : set >= BENCH_SETS_ && set < BENCH_SETS_ + t->nchecks ? &t->checks[set - BENCH_SETS_].rr
                                                                          : NULL;
    if (!rr) return snprintf(why, whylen, "timed output names no input set"), 0;
    kbv_tensor *out = NULL;
    int n = 0, ok = 1;
    out_spec spec = {.prefix = prefix, .like = rr->strict.t, .nlike = rr->strict.n, .consume = 1};
    int rc = session_read_outputs(&rep->values, &spec, &out, &n, err);
    if (rc == -3) { /* kbv had no memory for it: kbv's failure, not the candidate's */
        session_free_outputs(out, n);
        return -1;
    }
    if (rc < 0) {
        snprintf(why, whylen, "%s", err->msg);
        ok = 0;
    } else if (n != rr->oracle.n) {
        snprintf(why, whylen, "the timed call returned %d outputs, expected %d", n, rr->oracle.n);
        ok = 0;
    }
    for (int k = 0; ok && k < n; k++) {
        judge_calib cal;
        judge_result jr;
        cases_judge_output(t->c, rr, k, &out[k], &cal, &jr);
        if (!jr.passed) {
            snprintf(why, whylen, "set %d, output %d: %s", set, k, jr.reason);
            ok = 0;
        }
    }
    session_free_outputs(out, n);
    return ok;
}

/* The outputs of the candidate's last timed call, asked for after the call returned (the
 * worker keeps them until its next call; nothing in the call said whether they would be) and
 * checked: a mismatch is a hack finding. 0, 1 when the candidate failed (c->failure), -1 when
 * kbv did (err). */
static int check_timed(timing *t, const char *prefix, const char *which, int round, int index, kbv_err *err) {
    kbv_perf *pf = &t->c->r->perf;
    kbv_reply rep;
    proc_result pr;
    json_t *cmd = json_pack("{s:s, s:s}", "op", "bench_save", "prefix", prefix);
    if (index >= 0) json_object_set_new(cmd, "index", json_integer(index));
    if (gpu_share(t, err) < 0) return json_decref(cmd), -1;
    if (session_call(t->c, t->cand, cmd, t->to, &rep, &pr, err))
        return cand_failed(t, "saving a timed call's outputs", pr, &rep, err);
    char why[300];
    pf->rechecks++;
    int ok = recheck(t, &rep, prefix, why, sizeof why, err);
    reply_free(&rep);
    if (ok >= 0 && gpu_alone(t, err) < 0) return -1;
    if (ok) return ok < 0 ? -1 : 0;
    pf->rechecks_failed++;
    if (round >= 0) result_add_finding(t->c->r, FIND_TIMED_OUTPUT_MISMATCH, NULL, "a timed call's output is wrong (round %d): %s", round, why);
    else result_add_finding(t->c->r, FIND_TIMED_OUTPUT_MISMATCH, NULL, "%s timed call's output is wrong: %s", which, why);
    return 0;
}

/* One candidate call on hidden check set k, through bench like any timed sample (the values
 * copied into a drawn slot), its outputs saved and judged against that check's oracle: a
 * mismatch is state_dependent_output, with the call's place as evidence. 0, 1 (the candidate
 * failed), -1 (kbv). */
static int check_hidden_call(timing *t, int k, const char *when, kbv_err *err) {
    eval_ctx *c = t->c;
    kbv_perf *pf = &c->r->perf;
    kbv_reply rep;
    proc_result pr;
    json_t *cmd = bench_cmd(ARM_CAND, 0, pf->primed, -1);
    json_object_set_new(cmd, "check", json_integer(k));
    if (session_call(c, t->cand, cmd, t->to, &rep, &pr, err)) return cand_failed(t, "a timed call", pr, &rep, err);
    reply_free(&rep);
    t->cand_samples++;
    char save[PATH_MAX + 32], why[300];
    snprintf(save, sizeof save, "%s/cand/check%d_", c->scratch, pf->checks.during + pf->checks.after);
    json_t *sv = json_pack("{s:s, s:s}", "op", "bench_save", "prefix", save);
    if (gpu_share(t, err) < 0) return json_decref(sv), -1;
    if (session_call(c, t->cand, sv, t->to, &rep, &pr, err)) return cand_failed(t, "saving a timed call's outputs", pr, &rep, err);
    int ok = rep.has_set && rep.set == BENCH_SETS_ + k ? recheck(t, &rep, save, why, sizeof why, err)
                                                        : (snprintf(why, sizeof why, "the saved output names another input set"), 0);
    reply_free(&rep);
    if (ok < 0 || gpu_alone(t, err) < 0) return -1;
    if (strcmp(when, "after") == 0) pf->checks.after++;
    else pf->checks.during++;
    if (ok) return 0;
    pf->checks.failed++;
    static const char *const names[] = {"normal", "uniform_shifted", "mixed_magnitude", "heavy_tailed"};
    int d = t->checks[k].dist;
    const char *dist = d >= 0 && d < 4 ? names[d] : "?";
    result_add_finding(c->r, FIND_STATE_DEPENDENT_OUTPUT,
                       json_pack("{s:I, s:s, s:s}", "call", (json_int_t)t->cand_samples, "distribution", dist, "when", when),
                       "the candidate's output was wrong on a hidden %s draw at its timed call %lld (%s the timed rounds), after its "
                       "cases had passed: %s",
                       dist, t->cand_samples, strcmp(when, "after") == 0 ? "after" : "among", why);
    return 0;
}

/* check_hidden_call with its wall time (less GPU lock waits) added to timing.hidden_checks.time_s. */
static int check_hidden(timing *t, int k, const char *when, kbv_err *err) {
    double t0 = kbv_now(), w0 = t->c->lock.waited_s;
    int rc = check_hidden_call(t, k, when, err);
    t->c->r->perf.checks.time_s += eval_busy_since(t->c, t0, w0);
    return rc;
}

static int stage_rounds(timing *t, stats_stop *stopp, kbv_err *err) {
    eval_ctx *c = t->c;
    kbv_result *r = c->r;
    kbv_perf *pf = &r->perf;
    kbv_reply rep;
    proc_result pr;
    /* With the budget left to kbv, a GPU run whose CI is still wider than 2% at 10 s (a few
     * rounds of a call of tens of ms) goes on to 30 s: the target is a CI of at most 2% for
     * calls of 100 us and more. A --time-budget given is a hard cap. */
    int auto_budget = !(c->o->time_budget_s > 0);
    stats_stop_rule rule = {.min_samples = 10,
                            .max_samples = MAX_ROUNDS,
                            .min_time_s = t->cuda ? 0.5 : 0.2,
                            .max_time_s = !auto_budget ? c->o->time_budget_s
                                          : t->cuda    ? 10
                                                       : 2,
                            .target = t->cuda ? 0.005 : 0.01,
                            .extend_time_s = auto_budget && t->cuda ? 30 : 0,
                            .extend_target = 0.01,
                            .resamples = 2000,
                            .seed = r->seed ^ 0xA1}; /* perf_ratio's, below */
    uint64_t rng = kbv_mix64(r->seed ^ 0x7137), check_rng = kbv_mix64(r->seed ^ 0xC4EC);
    char save[PATH_MAX + 32];
    /* The budget counts the rounds, not the re-checks of timed outputs against the oracle
     * (seconds each for outputs of hundreds of MiB): t_rounds moves forward by their time. */
    double t_rounds = kbv_now();
    stats_stop stop = STATS_CONTINUE;
    long long nround = 0;
    eval_progress(c, "%s", "timing: interleaved rounds");
    /* The headline stops on its own rule; detect_value_cache's rounds go on (up to twice the
     * budget) until it has 5 of each kind, so that a slow machine does not leave it blind, and
     * once its gap shows, to 10 of each (up to four times the budget), over which it must hold. */
    int nseen = 0, nnew = 0, need = VALUE_CACHE_ROUNDS;
    double vc_cap = 2 * rule.max_time_s;
    while (stop == STATS_CONTINUE || (t->fresh_ok && (nseen < need || nnew < need) && !verdict_has_hack(r) && kbv_now() - t_rounds < vc_cap)) {
        int order[ARM_COUNT];
        for (int a = 0; a < t->narms; a++) order[a] = t->arms[a];
        for (int a = t->narms - 1; a > 0; a--) { /* Fisher-Yates */
            rng = kbv_mix64(rng);
            int j = (int)(rng % (uint64_t)(a + 1)), x = order[a];
            order[a] = order[j], order[j] = x;
        }
        /* Two rounds in six run the candidate and the reference on a hidden case's inputs
         * instead of the rotation, for detect_value_cache only: one on that case's own values
         * (the same in every such round: values the call has seen), one on values drawn like
         * them that no call has seen. A cache keyed on the inputs' content is fast on the first
         * and slow on the second; an honest kernel runs both alike (same distribution). */
        int phase = (int)(nround % 6);
        int kind = t->fresh_ok && phase == 2 ? 1 : t->fresh_ok && phase == 5 ? 2 : 0; /* 0 headline, 1 seen, 2 new */
        if (stop != STATS_CONTINUE) kind = nseen <= nnew ? 1 : 2;                     /* the headline is done */
        long long fresh = kind == 1 ? 0 : kind == 2 ? nround : -1;
        int fresh_all = kind > 0; /* every arm ran on the hidden case's values */
        /* Whether the candidate's call of this round is checked is drawn after it returned,
         * from kbv's secret, one headline round in 8, each on its own: a check says nothing
         * about the next call (a pair would have told the candidate its next call is checked). */
        int check = 0;
        if (kind == 0) {
            check_rng = kbv_mix64(check_rng);
            check = check_rng % 8 == 0;
        }
        /* One headline round in CHECK_ONE_IN, drawn from kbv's secret, runs only the
         * candidate, on a hidden check set, and judges it: the same command and slots as a
         * timed sample, values no call has seen. */
        if (kind == 0 && t->nchecks > 0 && stop == STATS_CONTINUE) {
            t->check_rng = kbv_mix64(t->check_rng);
            if (t->check_rng % CHECK_ONE_IN == 0) {
                double t_check = kbv_now();
                int ck = check_hidden(t, (int)((t->check_rng >> 32) % (uint64_t)t->nchecks), "during", err);
                t_rounds += kbv_now() - t_check;
                nround++;
                if (ck) {
                    *stopp = stop;
                    return ck;
                }
                if (verdict_has_hack(r)) break;
                continue;
            }
        }
        double dms[ARM_COUNT] = {0};
        nround++;
        for (int q = 0; q < t->narms; q++) {
            int a = order[q];
            if (kind && a != ARM_CAND && a != ARM_REF) continue;
            snprintf(save, sizeof save, "%s/cand/timed%d_", c->scratch, t->n);
            double t_call = kbv_now();
            if (session_call(t->c, t->procs[a], bench_cmd(a, 0, pf->primed, fresh), t->to, &rep, &pr, err)) {
                *stopp = stop;
                if (a == ARM_CAND) return cand_failed(t, "a timed call", pr, &rep, err);
                snprintf(pf->note, sizeof pf->note, "the %s failed in timing: %.200s", kArmWhat[a], why_failed(&rep, pr, err));
                reply_free(&rep);
                return 2;
            }
            double v = rep.nms > 0 ? rep.ms[0] : 0;
            if (a == ARM_CAND) t->cand_samples++;
            /* A time is bounded by kbv's own clock around the command that measured it. */
            double rt_ms = (kbv_now() - t_call) * 1e3;
            if (a == ARM_CAND && v > rt_ms + 1.0 && !result_has_flag(r, FIND_TIMING_INCONSISTENT))
                result_add_finding(r, FIND_TIMING_INCONSISTENT, NULL, "the worker reported %.3f ms for a call whose command took %.3f ms by kbv's clock", v, rt_ms);
            if (kind) dms[a] = v;
            else t->ms[a][t->n] = v;
            if (fresh >= 0 && !rep.fresh) fresh_all = 0;
            if (rep.fresh_failed) t->fresh_ok = 0; /* no more such rounds */
            pf->throttled += (int)rep.throttled;
            pf->cushion_expired += (int)rep.cushion_expired;
            reply_free(&rep);
            if (a == ARM_CAND && check) {
                double t_check = kbv_now();
                int ck = check_timed(t, save, NULL, t->n, -1, err);
                if (ck) {
                    *stopp = stop;
                    return ck;
                }
                t_rounds += kbv_now() - t_check;
            }
        }
        if (kind) {
            if (fresh_all && dms[ARM_REF] > 0 && dms[ARM_CAND] > 0 && t->nd < MAX_ROUNDS) {
                t->dref[t->nd] = dms[ARM_REF], t->dcand[t->nd] = dms[ARM_CAND], t->dnew[t->nd] = kind == 2, t->nd++;
                nseen += kind == 1, nnew += kind == 2;
                double sp[2];
                int m[2]; /* asked only once it can show: 5 of each, and not yet confirming */
                if (need == VALUE_CACHE_ROUNDS && nseen >= need && nnew >= need &&
                    value_cache_gap(t->dref, t->dcand, t->dnew, t->nd, VALUE_CACHE_ROUNDS, sp, m))
                    need = VALUE_CACHE_CONFIRM_ROUNDS, vc_cap = 4 * rule.max_time_s;
            }
            if (verdict_has_hack(r)) break;
            double el = kbv_now() - t_rounds;
            if (stop == STATS_CONTINUE && el >= rule.max_time_s) stop = stats_should_stop(&rule, t->ratio, (size_t)t->n, el, &pf->noise);
            continue;
        }
        int n = t->n;
        t->ratio[n] = t->ms[ARM_REF][n] > 0 && t->ms[ARM_CAND][n] > 0 ? t->ms[ARM_REF][n] / t->ms[ARM_CAND][n] : 0;
        if (t->ratio[n] > 0) t->n++;
        if (verdict_has_hack(r)) break;
        double el = kbv_now() - t_rounds;
        if (t->n < 50 || t->n % 8 == 0) stop = stats_should_stop(&rule, t->ratio, (size_t)t->n, el, &pf->noise);
        else if (el >= stats_time_cap(&rule)) stop = STATS_STOP_MAX_TIME;
    }
    *stopp = stop;
    /* The last two timed outputs are checked too: consecutive samples hold the two value sets,
     * so an output kept from an earlier call cannot match both, however few rounds ran. */
    for (int last = 0; last < 2 && !verdict_has_hack(r); last++) {
        snprintf(save, sizeof save, "%s/cand/timed_last%d_", c->scratch, last);
        if (session_call(t->c, t->cand, bench_cmd(ARM_CAND, 0, pf->primed, -1), t->to, &rep, &pr, err))
            return cand_failed(t, "a timed call", pr, &rep, err);
        reply_free(&rep);
        int ck = check_timed(t, save, "the last", -1, -1, err);
        if (ck) return ck;
    }
    return 0;
}

/* ---- summary -------------------------------------------------------------------------------- */

static void stage_summary(timing *t, stats_stop stop) {
    eval_ctx *c = t->c;
    kbv_result *r = c->r;
    kbv_perf *pf = &r->perf;
    int n = t->n;
    pf->rounds = n;
    snprintf(pf->stop, sizeof pf->stop, "%s",
             stop == STATS_STOP_CONVERGED     ? "converged"
             : stop == STATS_STOP_MAX_SAMPLES ? "max_samples"
             : stop == STATS_STOP_MAX_TIME    ? "max_time"
                                              : "stopped");
    /* Rounds without the headline pair were overwritten by the next: ms[*][0..n) are paired. */
    perf_times(t->ms[ARM_CAND], n, &pf->cand);
    perf_times(t->ms[ARM_REF], n, &pf->ref);
    perf_ratio(t->ms[ARM_REF], t->ms[ARM_CAND], n, r->seed ^ 0xA1, &pf->speedup);
    if (t->cuda) {
        perf_times(t->ms[ARM_STRICT], n, &pf->ref_strict);
        perf_ratio(t->ms[ARM_STRICT], t->ms[ARM_CAND], n, r->seed ^ 0xA2, &pf->speedup_strict);
    }
    for (int a = 0; a < t->narms; a++)
        if (t->arms[a] == ARM_COMPILE) {
            perf_times(t->ms[ARM_COMPILE], n, &pf->ref_compile);
            perf_ratio(t->ms[ARM_COMPILE], t->ms[ARM_CAND], n, r->seed ^ 0xA3, &pf->speedup_compile);
        }
    pf->measured = pf->speedup.measured;
    if (t->cuda && pf->measured) detect_short_call(c, PROCESS_OFFSET_NS);
    detect_value_cache(c, t->dref, t->dcand, t->dnew, t->nd);
    if (c->o->keep_samples) {
        json_decref(r->samples);
        r->samples = json_object();
        static const char *const keys[ARM_COUNT] = {
            [ARM_CAND] = "candidate", [ARM_REF] = "reference", [ARM_STRICT] = "reference_strict", [ARM_COMPILE] = "reference_compile"};
        for (int a = 0; a < t->narms; a++) {
            json_t *v = json_array();
            for (int i = 0; i < n; i++) json_array_append_new(v, json_real(t->ms[t->arms[a]][i]));
            json_object_set_new(r->samples, keys[t->arms[a]], v);
        }
    }
    detect_roofline(c, &t->kept[0], t->peak_gbs);
}

/* ---- kbv's own clock ---------------------------------------------------------------------- */

/* One batch on worker p: `cmds` bench_launch commands of `calls` calls each (arm "model", or
 * kbv's empty kernel), then bench_sync, timed with kbv's clock. At command `at` the worker
 * first waits for the device inside the timed window (bench_sync), then, outside it, the
 * candidate's outputs of call `idx` of that command are saved and checked (check: the
 * candidate's batch). The same `at` in both arms of a pair, so each pays the same pause.
 * 0 with *ms the wall time per call; 1 the candidate failed; 2 the reference did; -1 kbv. */
static int wall_batch(timing *t, kbv_proc *p, int arm, int empty, int cmds, int calls, int at, int idx, double *ms, double *cpu_ms,
                      kbv_err *err) {
    eval_ctx *c = t->c;
    kbv_perf *pf = &c->r->perf;
    kbv_reply rep;
    proc_result pr;
    char save[PATH_MAX + 32];
    double t0 = kbv_now(), paused = 0, cpu0 = proc_busy_seconds(p), cpu_paused = 0;
    for (int j = 0; j <= cmds; j++) {
        for (int sync = 0; sync < 2; sync++) {
            if (sync ? j != at && j != cmds : j == cmds) continue;
            json_t *cmd = sync ? json_pack("{s:s}", "op", "bench_sync")
                               : json_pack("{s:s, s:s, s:i, s:b}", "op", "bench_launch", "arm", empty ? "empty" : "model", "calls", calls, "tf32", 1);
            if (session_call(c, p, cmd, t->to, &rep, &pr, err)) {
                if (arm == ARM_CAND) return cand_failed(t, "a batched call", pr, &rep, err);
                snprintf(pf->note, sizeof pf->note, "the reference failed in a batch timed by kbv's clock: %.200s", why_failed(&rep, pr, err));
                reply_free(&rep);
                return 2;
            }
            reply_free(&rep);
        }
        if (j == at && arm == ARM_CAND) { /* outside the timed window */
            double tp = kbv_now(), cp = proc_busy_seconds(p);
            snprintf(save, sizeof save, "%s/cand/batch%d_", c->scratch, pf->wall.batches);
            int ck = check_timed(t, save, "a batched", -1, idx, err);
            if (ck) return ck;
            paused += kbv_now() - tp;
            double cq = proc_busy_seconds(p);
            if (cp >= 0 && cq >= 0) cpu_paused += cq - cp;
        }
    }
    *ms = (kbv_now() - t0 - paused) * 1e3 / ((double)cmds * calls);
    double cpu1 = proc_busy_seconds(p);
    *cpu_ms = cpu0 >= 0 && cpu1 >= cpu0 ? (cpu1 - cpu0 - cpu_paused) * 1e3 / ((double)cmds * calls) : -1;
    return 0;
}

/* kbv's own clock: both arms run batches of calls back to back, synchronised only at the end
 * of each batch, timed by kbv around the commands, interleaved pair by pair, and kbv's empty
 * kernel the same way in the reference's worker (the per-call cost of a command and a
 * launch: IPC, Python, the launch). The event-timed speedup must agree with the one this
 * clock sees, allowing for that overhead: (o + t_ref) / (o + t_cand) (perf_wall_predict,
 * with t_cand never above what the published speedup implies), within a factor of
 * PERF_WALL_SLACK (perf_wall_judge, perf.c). A candidate that reports times it did not take
 * (a rewritten reply, a patched timer) is faster in its reports than in kbv's clock. One call
 * in each candidate batch, drawn after its command returned, is checked against the oracle,
 * so the batch must do the work.
 * 0, 1 (the candidate failed), -1 (kbv's failure); the reference failing leaves no figure. */
static int stage_wall(timing *t, kbv_err *err) {
    eval_ctx *c = t->c;
    kbv_result *r = c->r;
    kbv_perf *pf = &r->perf;
    double t_ref = pf->ref.median, t_cand = pf->cand.median;
    if (!pf->measured || t_ref <= 0 || t_cand <= 0 || verdict_has_hack(r)) return 0;
    eval_progress(c, "%s", "timing: batches on kbv's own clock");
    /* Calls per command: at least 0.2 ms of the reference's work, their outputs together within
     * the memory the worker keeps for placements. Commands per batch: about 30 ms of it. */
    double out_bytes = 0;
    const run_out *o = &t->kept[0].rr.strict;
    for (int k = 0; k < o->n; k++) out_bytes += (double)o->t[k].nbytes;
    double mem = t->cuda ? (double)(256LL << 20) : (double)(32LL << 20);
    int calls = (int)(0.2 / t_ref) + 1;
    if (out_bytes > 0 && calls > mem / out_bytes) calls = (int)(mem / out_bytes);
    if (calls > 64) calls = 64;
    if (calls < 1) calls = 1;
    /* One command of each arm, untimed in the result, sizes the batches by the slower arm's
     * wall time per call (a candidate that prints megabytes per call is slow on kbv's clock,
     * not in its events); past 10 s the stage stops after its second pair. */
    double w[3][4], cpu[3][4], w0 = 0, t_stage = kbv_now();
    for (int side = 0; side < 2; side++) {
        int rc = wall_batch(t, side ? t->ref : t->cand, side ? ARM_REF : ARM_CAND, 0, 1, calls, -1, 0, &w[side][0], &cpu[side][0], err);
        if (rc == 2) return 0;
        if (rc) return rc;
        if (w[side][0] > w0) w0 = w[side][0];
    }
    if (w0 < t_ref) w0 = t_ref;
    int cmds = (int)(30.0 / (w0 * calls)) + 1;
    if (cmds > 100) cmds = 100;
    int batches = w0 * calls * cmds > 200 ? 2 : 4;
    pf->wall.calls = calls, pf->wall.commands = cmds;
    uint64_t rng = kbv_mix64(r->seed ^ 0x3A11C10C);
    for (int b = 0; b < batches && !(b >= 2 && kbv_now() - t_stage > 10); b++) {
        rng = kbv_mix64(rng);
        int at = (int)(rng % (uint64_t)cmds), idx = (int)((rng >> 20) % (uint64_t)calls), first_ref = (int)((rng >> 40) & 1);
        for (int q = 0; q < 3; q++) {
            int side = q == 2 ? 2 : q ^ first_ref; /* 0 candidate, 1 reference, 2 the empty kernel */
            int rc = wall_batch(t, side ? t->ref : t->cand, side ? ARM_REF : ARM_CAND, side == 2, cmds, calls, at, idx, &w[side][b], &cpu[side][b], err);
            if (rc == 2) return 0;
            if (rc) return rc;
            if (verdict_has_hack(r)) return 0;
        }
        pf->wall.batches++;
    }
    int nb = pf->wall.batches;
    double wc = stats_median(w[0], (size_t)nb), wr = stats_median(w[1], (size_t)nb), we = stats_median(w[2], (size_t)nb);
    /* On the CPU the empty command runs nothing: its time is the command's own cost. */
    pf->wall.measured = 1;
    pf->wall.cand_ms = wc, pf->wall.ref_ms = wr, pf->wall.overhead_ms = we;
    pf->wall.speedup = wc > 0 ? wr / wc : 0;
    pf->wall.predicted = perf_wall_predict(we, t_ref, t_cand, pf->speedup.value);
    pf->wall.consistency = pf->wall.predicted > 0 ? pf->wall.speedup / pf->wall.predicted : 0;
    /* The candidate worker's busy time per call (its threads running or ready to run), from the
     * kernel's accounting: how much of its wall time per call it spent on the CPU (Python,
     * launches; on a loaded machine, also waiting for a core) rather than for the device. */
    int ncpu = 0;
    double cpus[4];
    for (int b = 0; b < nb; b++)
        if (cpu[0][b] >= 0) cpus[ncpu++] = cpu[0][b];
    pf->wall.cand_cpu_ms = ncpu == nb && nb > 0 ? stats_median(cpus, (size_t)ncpu) : -1;
    pf->wall.host_share = pf->wall.cand_cpu_ms >= 0 && wc > 0 ? pf->wall.cand_cpu_ms / wc : -1;
    /* On the CPU the work itself is the worker's CPU time: host-bound says nothing there. */
    double f;
    /* The claim a hack needs is the event speedup's CI lower end: one noise alone makes (a
     * loaded machine, a short budget) has a wide CI and is capped, never a hack. */
    double claim = pf->speedup.lo > 0 && pf->speedup.lo < pf->speedup.value ? pf->speedup.lo : pf->speedup.value;
    perf_wall_rule rule = perf_wall_judge(claim, pf->speedup.value, pf->wall.speedup, pf->wall.predicted, t->cuda ? pf->wall.host_share : -1, &f);
    if (rule == PERF_WALL_OK) return 0;
    /* Inconsistent. Where kbv's clock sees no speedup at all, the candidate's worker mostly
     * waited and the claim is confident, the reported one is not the candidate's: a hack.
     * Otherwise -- kbv's clock sees a speedup, but less than half of what the reports predict,
     * or the claim is too noisy for a hack -- the reports may be honest (a candidate whose
     * calls cost the CPU more than the events see: work before the start event, launches
     * hidden by the cushion) or forged: the speedups are capped at PERF_WALL_SLACK times what
     * kbv's clock sees (perf_wall_judge), an info finding says so, and the result keeps its
     * verdict. Where it sees none but the worker was busy on the CPU (host-bound), the
     * speedups are capped at kbv's clock itself. */
    json_t *ev = json_pack("{s:f, s:f, s:f, s:f, s:o}", "wall_speedup", pf->wall.speedup, "predicted", pf->wall.predicted, "event_speedup",
                           pf->speedup.value, "overhead_ms", we, "host_share", pf->wall.host_share >= 0 ? json_real(pf->wall.host_share) : json_null());
    if (rule == PERF_WALL_HACK) {
        result_add_finding(r, FIND_TIMING_INCONSISTENT, ev,
                           "kbv's clock sees %.2fx where the reported times and the measured overhead predict %.2fx (events: %.2fx): "
                           "%.4f ms per call against %.4f for the reference, overhead %.4f ms, the candidate's worker running or "
                           "ready to run on the CPU for %.0f%% of it",
                           pf->wall.speedup, pf->wall.predicted, pf->speedup.value, wc, wr, we,
                           pf->wall.host_share >= 0 ? 100 * pf->wall.host_share : 0.0);
        return 0;
    }
    pf->wall.cap = f;
    perf_ratio_scale(&pf->speedup, f), perf_ratio_scale(&pf->speedup_strict, f), perf_ratio_scale(&pf->speedup_compile, f);
    /* The candidate's times as published agree with the capped speedups: no figure in the
     * result says more than kbv's clock supports (timing.samples keeps the reports). */
    perf_times_scale(&pf->cand, 1 / f);
    if (rule == PERF_WALL_CAP_HOST)
        result_add_finding_at(r, FIND_TIMING_INCONSISTENT, SEV_INFO, ev,
                              "kbv's clock sees %.2fx where the reported times and the measured overhead predict %.2fx, and the "
                              "candidate's worker was running or ready to run on the CPU for %.0f%% of each call (host-bound): the speedups are capped at "
                              "kbv's clock (x%.3f, events said %.2fx)",
                              pf->wall.speedup, pf->wall.predicted, 100 * pf->wall.host_share, f, pf->speedup.value / f);
    else
        result_add_finding_at(r, FIND_TIMING_INCONSISTENT, SEV_INFO, ev,
                              "kbv's clock sees %.2fx where the reported times and the measured overhead predict %.2fx: the speedups "
                              "are capped at what kbv's clock supports (x%.3f, events said %.2fx)",
                              pf->wall.speedup, pf->wall.predicted, f, pf->speedup.value / f);
    return 0;
}

/* ---- graph replay and the timer's floor --------------------------------------------------- */

/* kbv's clock around the graph-replay commands (wc, wr: each round's command, ms, timed by kbv
 * around it): the replay times are the candidate worker's reports like any other, and a graph
 * figure is no more trusted than an eager one. Both arms' commands run the same worker code
 * (rotate the inputs, flush, cushion, the untimed replay where primed, the timed one, a device
 * synchronize, the reply), so a command costs its overhead o plus k replays (k = 2 primed, else
 * 1). o comes from the reference's own commands (kbv's code alone): its median command time
 * less k reference replays. perf_wall_predict and perf_wall_judge then judge the reported graph
 * speedup against kbv's clock as stage_wall judges the eager one, with no claim strong enough
 * for a hack (the eager figures decide that): a disagreement caps speedup_graph at twice what
 * kbv's clock sees, and the candidate's graph times with it, with timing_inconsistent as info. */
static void graph_wall(timing *t, const double *wc, const double *wr, int n) {
    kbv_perf *pf = &t->c->r->perf;
    double mc = stats_median(wc, (size_t)n), mr = stats_median(wr, (size_t)n);
    double k = pf->primed ? 2 : 1, tr = pf->ref_graph.median, tc = pf->cand_graph.median;
    if (!(mc > 0 && mr > 0 && tr > 0 && tc > 0)) return;
    double o = mr - k * tr;
    if (o < 0) o = 0;
    pf->graph_wall.measured = 1;
    pf->graph_wall.cand_ms = mc, pf->graph_wall.ref_ms = mr, pf->graph_wall.overhead_ms = o;
    pf->graph_wall.speedup = mr / mc;
    pf->graph_wall.predicted = perf_wall_predict(o, k * tr, k * tc, pf->speedup_graph.value);
    double f;
    if (perf_wall_judge(0, pf->speedup_graph.value, pf->graph_wall.speedup, pf->graph_wall.predicted, -1, &f) == PERF_WALL_OK) return;
    pf->graph_wall.cap = f;
    double said = pf->speedup_graph.value;
    perf_ratio_scale(&pf->speedup_graph, f);
    perf_times_scale(&pf->cand_graph, 1 / f);
    result_add_finding_at(t->c->r, FIND_TIMING_INCONSISTENT, SEV_INFO,
                          json_pack("{s:s, s:f, s:f, s:f, s:f}", "arm", "graph", "wall_speedup", pf->graph_wall.speedup, "predicted",
                                    pf->graph_wall.predicted, "graph_speedup", said, "overhead_ms", o),
                          "graph replay: kbv's clock around the replay commands sees %.2fx where the reported replay times predict %.2fx: "
                          "speedup_graph is capped at what kbv's clock supports (x%.3f, replays said %.2fx)",
                          pf->graph_wall.speedup, pf->graph_wall.predicted, f, said);
}

static int stage_graphs(timing *t, kbv_err *err) {
    eval_ctx *c = t->c;
    kbv_perf *pf = &c->r->perf;
    kbv_reply rep;
    proc_result pr;
    int rc = 0;
    /* Graph replay: device time with launch overhead gone, where the call can be captured. */
    if (!verdict_has_hack(c->r)) {
        eval_progress(c, "%s", "timing: CUDA graph replay");
        enum { GRAPH_ROUNDS = 30 };
        double g[2][GRAPH_ROUNDS], gw[2][GRAPH_ROUNDS];
        int ok = 1;
        for (int i = 0; i < GRAPH_ROUNDS && ok; i++)
            for (int side = 0; side < 2 && ok; side++) {
                kbv_proc *p = side ? t->ref : t->cand;
                json_t *cmd = json_pack("{s:s, s:s, s:i, s:b, s:b}", "op", "bench", "arm", "graph", "n", 1, "tf32", 1, "prime", pf->primed);
                double t0 = kbv_now();
                int failed = session_call(t->c, p, cmd, t->to, &rep, &pr, err);
                gw[side][i] = (kbv_now() - t0) * 1e3;
                if (failed) {
                    snprintf(pf->graph_note, sizeof pf->graph_note, "%s: %.160s", side ? "reference" : "candidate", why_failed(&rep, pr, err));
                    if (!side && pr != PROC_OK) rc = cand_failed(t, "graph replay", pr, &rep, err);
                    reply_free(&rep);
                    ok = 0;
                    break;
                }
                g[side][i] = rep.nms > 0 ? rep.ms[0] : 0;
                pf->graphs[!side] = (int)rep.graphs;
                reply_free(&rep);
            }
        if (ok) {
            /* The first replay of each follows its capture (the worker replays each graph
             * once untimed to upload it, but the capture leaves other state cold): drop it. */
            perf_times(g[0] + 1, GRAPH_ROUNDS - 1, &pf->cand_graph);
            perf_times(g[1] + 1, GRAPH_ROUNDS - 1, &pf->ref_graph);
            perf_ratio(g[1] + 1, g[0] + 1, GRAPH_ROUNDS - 1, c->r->seed ^ 0xA4, &pf->speedup_graph);
            if (pf->speedup_graph.measured) graph_wall(t, gw[0] + 1, gw[1] + 1, GRAPH_ROUNDS - 1);
            detect_roofline_graph(c, &t->kept[0], t->peak_gbs);
        }
    }
    /* The timer's floor: kbv's empty kernel timed the same way (flush, cushion, event pair),
     * in the reference's worker. A call this short is at the limit of what kbv can resolve;
     * beside the audit's empty_kernel_ns it gives the timer's overhead (BENCHMARKS.md). */
    enum { EMPTY_SAMPLES = 30 };
    double e[EMPTY_SAMPLES];
    int ne = 0;
    if (session_call(t->c, t->ref, json_pack("{s:s, s:s, s:i}", "op", "bench", "arm", "empty", "n", EMPTY_SAMPLES), t->to, &rep, &pr, err) == 0) {
        for (int i = 0; i < rep.nms; i++)
            if (ne < EMPTY_SAMPLES && rep.ms[i] > 0) e[ne++] = rep.ms[i];
        perf_times(e, ne, &pf->empty);
    }
    reply_free(&rep);
    return rc;
}

static void free_checks(timing *t) {
    for (int k = 0; k < t->nchecks; k++) ref_runs_free(&t->checks[k].rr);
    t->nchecks = 0;
}

int timing_checks(eval_ctx *c, kbv_proc *ref, kept_case *checks, int *nchecks, kbv_err *err) {
    kbv_perf *pf = &c->r->perf;
    *nchecks = 0;
    eval_progress(c, "%s", "timing: hidden check cases");
    for (int k = 0; k < TIMING_CHECKS; k++) {
        double t_check = kbv_now(), w_check = c->lock.waited_s;
        int rc = cases_reference_check(c, ref, k, &checks[*nchecks], err);
        pf->checks.time_s += eval_busy_since(c, t_check, w_check);
        if (rc == 0) (*nchecks)++;
        else if (rc != 2) {
            for (int j = 0; j < *nchecks; j++) ref_runs_free(&checks[j].rr);
            *nchecks = 0;
            if (rc == 1) snprintf(pf->note, sizeof pf->note, "the reference failed on a hidden check draw");
            return rc < 0 ? -1 : 1;
        }
    }
    return 0;
}

int timing_run(eval_ctx *c, kbv_proc *ref, kbv_proc *cand, kept_case *kept, int nkept, kept_case *checks, int nchecks, kbv_err *err) {
    kbv_result *r = c->r;
    kbv_perf *pf = &r->perf;
    timing t = {.c = c,
                .ref = ref,
                .cand = cand,
                .procs = {cand, ref, ref, ref},
                .kept = kept,
                .nkept = nkept,
                .cuda = strcmp(r->device, "cuda") == 0,
                .to = c->o->timeout_s,
                .fresh_ok = 1,
                /* hashed (kbv's CPU: 4 GiB for a 1 GiB float32 output) before the GPU is this
                 * evaluation's alone, so that no other evaluation waits for it */
                .kept_differ = kept_differ(kept, nkept)};
    /* The hidden check cases (timing_checks), now the timing's to free. */
    for (int k = 0; k < nchecks && k < TIMING_CHECKS; k++) t.checks[t.nchecks++] = checks[k];
    if (kbv_gpulock_set(&c->lock, 2, err) < 0) return free_checks(&t), -1; /* nothing else on the GPU while timing */
    double t_start = kbv_now();
    snprintf(pf->clock, sizeof pf->clock, "%s", t.cuda ? "cuda_events" : "cpu_monotonic");
    if (nkept == 0) {
        snprintf(pf->note, sizeof pf->note, "no judged case to time on");
        return free_checks(&t), 0;
    }
    t.check_rng = kbv_mix64(r->seed ^ 0xC0FFEE);
    eval_progress(c, "%s", "timing: setting up the input sets");
    int s = stage_setup(&t, err);
    if (s) return free_checks(&t), s == 1; /* 2: the reference failed, perf.note says how */
    double t_audit = kbv_now();
    if (t.cuda) {
        s = stage_audit(&t, err);
        if (s) return free_checks(&t), s == 1;
        r->phase_s[PHASE_AUDIT] = kbv_now() - t_audit;
        if (verdict_has_hack(r)) {
            snprintf(pf->note, sizeof pf->note, "not timed: the audit found work outside the timed window");
            return free_checks(&t), 0;
        }
    }
    /* Memoization probe: same addresses, new values (without a version bump) -> the output
     * must change wherever the reference's does. */
    if (stage_memo_probe(&t, err)) return free_checks(&t), 1;
    if (!verdict_has_hack(r) && t.nkept > 0) {
        double t_partial = kbv_now(), w_partial = c->lock.waited_s;
        s = stage_partial_probe(&t, err);
        pf->partial_s = eval_busy_since(c, t_partial, w_partial);
        if (s) return free_checks(&t), s == 1 ? 1 : -1;
    }
    if (verdict_has_hack(r)) {
        snprintf(pf->note, sizeof pf->note, "not timed: the candidate caches its outputs");
        return free_checks(&t), 0;
    }
    s = stage_warmup(&t, err);
    if (s) return free_checks(&t), s == 1;
    int rc = 0;
    for (int a = 0; a < ARM_COUNT; a++) t.ms[a] = calloc(MAX_ROUNDS, sizeof(double));
    t.ratio = calloc(MAX_ROUNDS, sizeof(double));
    t.dref = calloc(MAX_ROUNDS, sizeof(double)), t.dcand = calloc(MAX_ROUNDS, sizeof(double));
    t.dnew = calloc(MAX_ROUNDS, 1);
    if (!t.ratio || !t.dref || !t.dcand || !t.dnew || !t.ms[0] || !t.ms[1] || !t.ms[2] || !t.ms[3]) {
        rc = kbv_seterr(err, "out of memory");
        goto out;
    }
    stats_stop stop = STATS_CONTINUE;
    s = stage_rounds(&t, &stop, err);
    if (s) {
        rc = s == 1 ? 1 : s < 0 ? -1 : 0; /* 2: the reference failed, perf.note says how */
        goto out;
    }
    stage_summary(&t, stop);
    double t_wall = kbv_now();
    rc = stage_wall(&t, err);
    pf->wall.time_s = kbv_now() - t_wall;
    if (rc) goto out;
    if (t.cuda) rc = stage_graphs(&t, err);
    /* The final battery: each hidden check once more, after every timed call. */
    for (int k = 0; !rc && k < t.nchecks && !verdict_has_hack(r); k++) rc = check_hidden(&t, k, "after", err);
out:
    free_checks(&t);
    for (int a = 0; a < ARM_COUNT; a++) free(t.ms[a]);
    free(t.ratio), free(t.dref), free(t.dcand), free(t.dnew);
    pf->time_s = kbv_now() - t_start;
    return rc;
}
