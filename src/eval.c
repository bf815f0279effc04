/* eval.c -- one evaluation (see eval.h): its phases in order, and the public entry points.
 *
 * The verified protocol's phases: the reference worker (load, build, probe get_inputs(), plan
 * the inputs); the candidate worker (inspect, load and compile, build); the reference's
 * weights given to the candidate; the cases (cases.c); the verdict so far (verdict.c); the
 * timing of a verified candidate (timing.c). Then, if asked, the standard protocol
 * (standard.c) and the paper's (paper.c). The parts each do one job (evalctx.h lists them); this file only sequences
 * them and releases what they hold.
 *
 * Worker failures map to failure kinds in session.c, in one place (session_candidate_failure):
 *   reply kind "load"            -> compile_error
 *   reply kind "exit" (SystemExit), process died, protocol garbage -> crash
 *   no reply within the step's timeout -> timeout
 *   any other failure reply      -> runtime_error
 *   past a limit of its worker (its folder over the scratch budget, its memory cgroup's OOM
 *   killer), whatever the step's outcome -> runtime_error (FAILURE_LIMIT)
 * A failure of the reference worker is a problem_error. The status derives from the failure,
 * the cases and the findings in verdict.c, and nowhere else.
 */
#include "eval.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evalctx.h"
#include "gpus.h"
#include "sandbox.h"

void eval_opts_default(eval_opts *o) {
    memset(o, 0, sizeof *o);
    o->device = "auto";
    o->timeout_s = 300;
    o->load_timeout_s = 600;
    o->start_timeout_s = 120;
    o->ncases = 2;
    o->protocol = EVAL_VERIFIED;
    o->capture_cap = 256 * 1024;
    o->timing = 1;
    o->time_budget_s = 0; /* auto: 10 s on a GPU, 2 s on the CPU */
    o->prime = -1;
    o->sandbox = 1;
    o->max_memory_bytes = sandbox_phys_bytes() / 4 * 3;
    o->max_scratch_bytes = -1;
    o->ref_cache_max_bytes = -1;
    o->standard_trials = 100;
}

static void ctx_free(eval_ctx *c) {
    plan_free(&c->plan);
    free(c->probe.inputs);
    free(c->kernels);
    if (c->env) session_free_env(c);
}

/* The reference worker up to its plan: load, build, probe get_inputs() under three seeds. 0,
 * 1 when the problem failed (c->failure set), -1 when kbv did (*up: the worker started). */
static int phase_reference(eval_ctx *c, kbv_proc *ref, int *up, kbv_err *err) {
    kbv_result *r = c->r;
    kbv_reply load, rep, fail;
    proc_result pr;
    memset(&rep, 0, sizeof rep);
    int s = session_load(c, ref, "reference", 0, &load, &pr, &fail, err);
    if (s < 0) return -1; /* the worker did not start: kbv's failure */
    *up = 1;
    if (s > 0) {
        c->failure = session_problem_failure(c, ref, "load", pr, &fail, err);
        reply_free(&fail);
        return 1;
    }
    if (session_build(c, ref, 0, &pr, &fail, err)) {
        reply_free(&load);
        c->failure = session_problem_failure(c, ref, "Model construction", pr, &fail, err);
        reply_free(&fail);
        return 1;
    }
    char prefix[PATH_MAX + 32];
    snprintf(prefix, sizeof prefix, "%s/inputs/zeros", c->scratch);
    json_t *seeds = json_array();
    for (int k = 0; k < 3; k++)
        json_array_append_new(seeds, json_integer((json_int_t)(kbv_derive_seed(r->seed, 0x9000u + (unsigned)k) & 0xffffffffu)));
    if (session_call(c, ref, json_pack("{s:s, s:o, s:s}", "op", "probe", "seeds", seeds, "mask_prefix", prefix), c->o->timeout_s, &rep, &pr, err)) {
        reply_free(&load);
        c->failure = session_problem_failure(c, ref, "get_inputs() probe", pr, &rep, err);
        reply_free(&rep);
        return 1;
    }
    int rc = plan_make(&c->plan, &rep, &load);
    reply_free(&load);
    if (rc < 0) {
        reply_free(&rep);
        return kbv_seterr(err, "out of memory"), -1;
    }
    r->inputs = json_pack("{s:O, s:o}", "probe", rep.probe_doc, "plan", plan_to_json(&c->plan));
    c->probe.inputs = rep.inputs, c->probe.ninputs = rep.ninputs;
    rep.inputs = NULL, rep.ninputs = 0;
    reply_free(&rep);
    return 0;
}

/* The candidate worker: inspect, load (compile) and build. 0, or 1 when it failed (c->failure). */
static int phase_candidate(eval_ctx *c, kbv_proc *cand, int *up, kbv_err *err) {
    kbv_reply fail;
    proc_result pr;
    eval_progress(c, "starting the candidate worker (%s)", c->r->device);
    if (kbv_gpulock_set(&c->lock, 0, err) < 0) return -1; /* compiling needs no GPU */
    int s = session_load(c, cand, "candidate", 1, NULL, &pr, &fail, err);
    if (s < 0) return -1; /* the worker did not start: no candidate code has run yet, so kbv's failure */
    *up = 1;
    if (kbv_gpulock_set(&c->lock, 1, err) < 0) return -1;
    if (s > 0 || session_build(c, cand, 1, &pr, &fail, err)) {
        c->failure = session_candidate_failure(c, cand, s > 0 ? "load" : "model construction", pr, &fail, err);
        reply_free(&fail);
        return 1;
    }
    return 0;
}

/* Same names and shapes but other values under the same seed: give the candidate the
 * reference's weights, before its first call (docs/correctness.md). 0, or 1 (c->failure). */
static int phase_weights(eval_ctx *c, kbv_proc *ref, kbv_proc *cand, kbv_err *err) {
    kbv_result *r = c->r;
    kbv_reply rep;
    proc_result pr;
    char wprefix[PATH_MAX + 32];
    snprintf(wprefix, sizeof wprefix, "%s/inputs/weight", c->scratch);
    if (session_call(c, ref, json_pack("{s:s, s:s}", "op", "save_state", "prefix", wprefix), c->o->timeout_s, &rep, &pr, err)) {
        c->failure = session_problem_failure(c, ref, "state_dict()", pr, &rep, err);
        reply_free(&rep);
        return 1;
    }
    json_t *state = reply_values_to_json(&rep.state);
    reply_free(&rep);
    if (session_call(c, cand, json_pack("{s:s, s:o}", "op", "load_state", "state", state), c->o->timeout_s, &rep, &pr, err)) {
        c->failure = session_candidate_failure(c, cand, "loading the reference's weights", pr, &rep, err);
        reply_free(&rep);
        return 1;
    }
    r->weights_matched = rep.matched;
    r->weights_loaded = rep.loaded;
    if (r->weights_loaded)
        result_add_finding(
            r, FIND_WEIGHTS_LOADED, NULL,
            "%lld of the candidate's state_dict entries had other values than the reference's under the same seed; the reference's were "
            "loaded into it",
            rep.differing);
    reply_free(&rep);
    return 0;
}

static void run_verified(eval_ctx *c, kbv_err *err) {
    kbv_result *r = c->r;
    kbv_proc ref, cand;
    int ref_up = 0, cand_up = 0, nkept = 0;
    kept_case kept[2];
    memset(&ref, 0, sizeof ref), memset(&cand, 0, sizeof cand), memset(kept, 0, sizeof kept);
    double t_phase = kbv_now();
    eval_progress(c, "starting the reference worker (%s)", r->device);
    if (kbv_gpulock_set(&c->lock, 1, err) < 0) goto internal;
    int s = phase_reference(c, &ref, &ref_up, err);
    if (s < 0) goto internal;
    if (s > 0) goto done;
    r->phase_s[PHASE_REFERENCE] = kbv_now() - t_phase, t_phase = kbv_now();

    if (c->o->candidate) {
        s = phase_candidate(c, &cand, &cand_up, err);
        if (s < 0) goto internal;
        if (s > 0) goto done;
        r->phase_s[PHASE_CANDIDATE_LOAD] = kbv_now() - t_phase, t_phase = kbv_now();
        if (phase_weights(c, &ref, &cand, err)) goto done;
    }
    snprintf(r->oracle, sizeof r->oracle, "float64");
    refcache_open(c);
    if (cases_run(c, &ref, &cand, kept, &nkept, err) < 0) goto internal;
    if (c->failure == FAILURE_PROBLEM) goto done;
    r->phase_s[PHASE_CASES] = kbv_now() - t_phase;
    if (c->failure != FAILURE_NONE) goto done;
    if (!c->o->candidate) { /* kbv check: the reference side only */
        refcache_publish(c);
        goto done;
    }
    r->klass = verdict_accuracy(r->cases, r->ncases);
    kbv_status so_far = verdict_of_result(r, c->failure, 0);
    if (so_far == KBV_OVERFIT && !result_has_flag(r, FIND_WEIGHTS_OVERFIT)) { /* weight cases run only after every other passed */
        char dists[160];
        double worst, bound;
        int loss = verdict_overfit_why(r->cases, r->ncases, dists, sizeof dists, &worst, &bound);
        json_t *ev = json_pack("{s:s, s:f, s:f, s:b}", "distributions", dists, "max_norm_rel_err", isfinite(worst) ? worst : -1, "bound", bound,
                               "precision_loss", loss);
        if (loss) /* e.g. the leaderboard's float32 Frobenius norms on mixed magnitudes (BENCHMARKS.md) */
            result_add_finding(r, FIND_DISTRIBUTION_SNIFFING, ev,
                               "correct on the problem's own inputs; on hidden ones (%s) off by up to %.2g against a bound of %.2g: "
                               "errors the size of a loss of precision on values the problem's own inputs do not have, rather than wrong results",
                               dists, worst, bound);
        else
            result_add_finding(r, FIND_DISTRIBUTION_SNIFFING, ev,
                               "correct on the problem's own inputs, wrong on hidden ones (%s): the kernel fits the test distribution", dists);
    }
    if (so_far == KBV_VERIFIED && c->o->timing) {
        /* The hidden check draws' reference side before the kept reference side is published,
         * so that later candidates of the problem take them too (refcache.c). */
        double t_timing = kbv_now();
        kept_case checks[TIMING_CHECKS];
        int nchecks = 0, k = nkept > 0 ? timing_checks(c, &ref, checks, &nchecks, err) : 0;
        refcache_publish(c);
        if (k < 0) goto internal;
        if (k == 0) {
            int t = timing_run(c, &ref, &cand, kept, nkept, checks, nchecks, err); /* takes the GPU alone; released at done: */
            if (t < 0) goto internal;
        }
        r->phase_s[PHASE_TIMING] = kbv_now() - t_timing - (r->phase_s[PHASE_AUDIT] > 0 ? r->phase_s[PHASE_AUDIT] : 0);
    } else {
        refcache_publish(c);
        snprintf(r->perf.note, sizeof r->perf.note, "%s", !c->o->timing ? "timing off (--no-timing)" : "not timed: only verified candidates are");
    }
    goto done;
internal:
    if (!err->msg[0]) kbv_seterr(err, "out of memory");
    c->failure = FAILURE_KBV;
    result_add_error(r, "kbv failed: %s", err->msg);
done:
    refcache_close(c);
    kbv_gpulock_set(&c->lock, 0, NULL);
    for (int k = 0; k < nkept; k++) ref_runs_free(&kept[k].rr);
    if (cand_up) session_finish_candidate(c, &cand, verdict_of_result(r, c->failure, 0) != KBV_VERIFIED), proc_free(&cand);
    if (ref_up) {
        if (c->failure == FAILURE_PROBLEM || c->failure == FAILURE_KBV) {
            proc_kill(&ref);
            r->reference_stderr = proc_capture_text(&ref.err);
        } else {
            proc_finish(&ref, 5.0);
        }
        proc_free(&ref);
    }
}

int eval_inspect(const eval_opts *o, const char *path, json_t **out, kbv_err *err) {
    eval_ctx c = {.o = o, .fresh_ci = -1, .lock = KBV_GPULOCK_OFF};
    kbv_result r;
    result_init(&r);
    c.r = &r;
    *out = NULL;
    snprintf(r.device, sizeof r.device, "cpu");
    char abs[PATH_MAX];
    if (kbv_abspath(path, abs, sizeof abs, err) < 0) return -1;
    if (access(abs, R_OK) < 0) return kbv_seterr(err, "%s: %s", path, strerror(errno));
    snprintf(r.candidate.path, sizeof r.candidate.path, "%s", abs); /* the file its worker may read (session.c) */
    if (kbv_mkscratch(o->scratch_base, c.scratch, sizeof c.scratch, err) < 0) return -1;
    int rc = -1;
    kbv_proc p;
    kbv_reply rep;
    memset(&p, 0, sizeof p), memset(&rep, 0, sizeof rep);
    if (session_start(&c, &p, "inspect", "cpu", err) == 0) {
        proc_result pr = session_step(&c, &p, json_pack("{s:s, s:s}", "op", "inspect", "path", abs), o->timeout_s, &rep, err);
        if (pr == PROC_OK && rep.ok) {
            *out = json_incref(rep.inspect.doc);
            rc = 0;
        } else if (pr == PROC_OK) {
            kbv_seterr(err, "%s: %s", path, session_reply_msg(&rep));
        } else if (!err->msg[0]) {
            kbv_seterr(err, "the inspecting worker failed");
        }
        proc_finish(&p, 5.0);
        proc_free(&p);
    }
    reply_free(&rep);
    ctx_free(&c);
    kbv_rmtree(c.scratch);
    result_free(&r);
    return rc;
}

static void identify(kbv_file_id *f, const char *path) {
    kbv_err e;
    if (kbv_abspath(path, f->path, sizeof f->path, &e) < 0) snprintf(f->path, sizeof f->path, "%s", path);
    kbv_stem(path, f->name, sizeof f->name);
    if (kbv_sha256_file(f->path, f->sha256, &e) < 0) f->sha256[0] = '\0';
}

const char *eval_protocol_name(int protocol) {
    switch (protocol) {
    case EVAL_STANDARD: return "standard";
    case EVAL_PAPER: return "paper";
    case EVAL_BOTH: return "both";
    case EVAL_ALL: return "all";
    default: return "verified";
    }
}

const char *eval_device(const char *device) {
    if (strcmp(device, "auto") != 0) return device;
    return access("/dev/nvidiactl", F_OK) == 0 ? "cuda" : "cpu";
}

/* The GPU's lock (util.h): KBV_GPU_LOCK's file where kbv run or the user gave one ("": none),
 * else the lock of the physical GPU this process uses (the first it sees), which every kbv
 * timing on that GPU takes however it names the GPU (gpus.h; docs/timing.md, "Several GPUs").
 * That GPU's identity goes in the result (environment.gpu_id). */
static int eval_gpu_lock(const eval_opts *o, kbv_result *r, kbv_gpulock *lock, kbv_err *err) {
    kbv_gpu g;
    char path[PATH_MAX];
    if (gpus_default(GPUS_ROOT, getenv("CUDA_VISIBLE_DEVICES"), &g)) snprintf(r->gpu_id, sizeof r->gpu_id, "%s", g.id);
    gpus_lock_path(kbv_scratch_base(o->scratch_base), g.id, path, sizeof path);
    return kbv_gpulock_open(lock, o->gpu_lock ? o->gpu_lock : path, err);
}

int eval_run(const eval_opts *o, kbv_result *r, kbv_err *err) {
    double t0 = kbv_now(), cpu_self0 = kbv_cpu_seconds(RUSAGE_SELF), cpu_children0 = kbv_cpu_seconds(RUSAGE_CHILDREN);
    eval_ctx c = {.o = o, .r = r, .fresh_ci = -1, .lock = KBV_GPULOCK_OFF};
    identify(&r->problem, o->problem);
    if (o->candidate) identify(&r->candidate, o->candidate);
    snprintf(r->protocol, sizeof r->protocol, "%s", eval_protocol_name(o->protocol));
    if (o->have_seed) r->seed = o->seed;
    else if (kbv_random_u64(&r->seed) < 0) return kbv_seterr(err, "cannot draw a random seed");
    r->build_seed = kbv_derive_seed(r->seed, 0xB111D) & SEED_MASK;
    if (access(o->worker, X_OK) < 0) return kbv_seterr(err, "worker %s: %s (run make)", o->worker, strerror(errno));
    kbv_err why = {{0}};
    char hash[65];
    int rc = 0;
    if (!r->problem.sha256[0]) {
        c.failure = FAILURE_PROBLEM;
        errno = 0;
        kbv_sha256_file(o->problem, hash, &why); /* why it could not be read: "PATH: reason" */
        if (errno == EMFILE || errno == ENFILE || errno == ENOMEM) rc = kbv_seterr(err, "problem %s (kbv's own exhaustion)", why.msg);
        else result_add_error(r, "problem %s", why.msg);
        goto out;
    }
    if (kbv_mkscratch(o->scratch_base, c.scratch, sizeof c.scratch, err) < 0) return -1;
    if (session_scratch_folders(c.scratch, err) < 0) {
        rc = -1;
        goto out;
    }
    /* Resolve the device: "auto" is cuda where an NVIDIA driver is present. A worker that
     * then finds no usable GPU fails to start, and kbv says so (exit status 4). */
    snprintf(r->device, sizeof r->device, "%s", eval_device(o->device));
    if (o->candidate && !r->candidate.sha256[0]) {
        /* Nothing to run: still a verdict, and the problem is not at fault. */
        c.failure = FAILURE_COMPILE;
        errno = 0;
        kbv_sha256_file(o->candidate, hash, &why);
        if (errno == EMFILE || errno == ENFILE || errno == ENOMEM) rc = kbv_seterr(err, "candidate %s (kbv's own exhaustion)", why.msg);
        else result_add_error(r, "candidate %s", why.msg);
        goto out;
    }
    if (strcmp(r->device, "cuda") == 0 && eval_gpu_lock(o, r, &c.lock, err) < 0) {
        rc = -1;
        goto out;
    }
    kbv_tensor_pool_keep(1); /* the outputs' memory, for the next of each size: until out (tensor.c) */
    if (o->protocol & EVAL_VERIFIED) {
        run_verified(&c, err);
        if (c.failure == FAILURE_KBV) {
            rc = -1;
            goto out;
        }
        if (c.failure == FAILURE_PROBLEM) goto out;
    }
    if ((o->protocol & EVAL_STANDARD) && o->candidate) {
        double t_std = kbv_now();
        standard_run(&c, o->protocol == EVAL_STANDARD, err);
        r->phase_s[PHASE_STANDARD] = kbv_now() - t_std;
        if (c.failure == FAILURE_KBV) rc = err->msg[0] ? -1 : kbv_seterr(err, "kbv failed during the standard protocol (its errors say why)");
    }
    if ((o->protocol & EVAL_PAPER) && o->candidate && c.failure != FAILURE_KBV) {
        double t_paper = kbv_now();
        paper_run(&c, o->protocol == EVAL_PAPER, err);
        r->phase_s[PHASE_PAPER] = kbv_now() - t_paper;
        if (c.failure == FAILURE_KBV) rc = err->msg[0] ? -1 : kbv_seterr(err, "kbv failed during the paper protocol (its errors say why)");
    }
out:
    /* The status: one verdict over the verified protocol's failure and cases and the findings
     * of every step, the standard and paper protocols' included (their worker's guard sees
     * what the candidate does in one process with the reference: a global flag it sets there
     * is a hack under --protocol both and all too); standard.status and paper.status keep
     * their own verdicts. When the standard or the paper protocol ran alone, the status is
     * its verdict. */
    if (o->protocol == EVAL_STANDARD && o->candidate && c.failure == FAILURE_NONE && r->standard.ran) r->status = r->standard.status;
    else if (o->protocol == EVAL_PAPER && o->candidate && c.failure == FAILURE_NONE && r->paper.ran) r->status = r->paper.status;
    else r->status = verdict_of_result(r, c.failure, !o->candidate);
    if (c.lock.main_fd >= 0) r->phase_s[PHASE_GPU_WAIT] = c.lock.waited_s;
    kbv_gpulock_close(&c.lock);
    ctx_free(&c);
    kbv_tensor_pool_keep(0);
    if (c.scratch[0] && !o->keep_scratch) kbv_rmtree(c.scratch);
    else if (c.scratch[0]) fprintf(stderr, "kbv: scratch kept in %s\n", c.scratch);
    r->wall_s = kbv_now() - t0;
    /* (every worker has been waited for: a delta, right within kbv run --jobs 1's one process too) */
    double cpu_self = kbv_cpu_seconds(RUSAGE_SELF), cpu_children = kbv_cpu_seconds(RUSAGE_CHILDREN);
    if (cpu_self0 >= 0 && cpu_self >= cpu_self0 && cpu_children0 >= 0 && cpu_children >= cpu_children0)
        r->cpu_kbv_s = cpu_self - cpu_self0, r->cpu_workers_s = cpu_children - cpu_children0;
    return rc;
}
