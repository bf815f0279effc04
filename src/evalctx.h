/* evalctx.h -- what the parts of one evaluation share (not a public interface: eval.h is).
 *
 * One evaluation (eval.c runs its phases) is cut by the data that flows through it:
 *   session.c   the worker processes: start, one step (command -> decoded reply), outputs
 *               read from their files, and the mapping of a worker's failure to a failure kind
 *   plan.c      the input plan (how each input of a hidden case is made), built once
 *   cases.c     the cases: the reference's runs, the candidate's two runs, judging each case
 *   detect.c    the detectors that read outputs, timings and the audit
 *   refcache.c  the reference side kept for a problem's later candidates (kbv run)
 *   timing.c    the timed comparison, in stages
 *   standard.c  KernelBench's own protocol, in one process
 *   paper.c     KernelBench-Verified's protocol as published, in one process
 *   verdict.c   the status, from the failure, the cases and the findings (nowhere else)
 * Every worker reply reaches these files decoded (reply.h); none of them reads reply JSON.
 */
#ifndef KBV_EVALCTX_H
#define KBV_EVALCTX_H

#include <limits.h>
#include <stdint.h>

#include "eval.h"
#include "judge.h"
#include "proc.h"
#include "reply.h"
#include "tensor.h"
#include "verdict.h"

#define SEED_MASK 0x7fffffffffffffffULL /* torch seeds are taken as signed 64-bit here */

/* ---- the input plan (plan.c) ---------------------------------------------------------- */

/* How one input of a hidden case is made. */
typedef struct plan_input {
    int gen;             /* 1: drawn by kbv's generator; 0: taken from get_inputs() */
    const char *why;     /* gen 0: why (a static string) */
    char probe_kind[16]; /* what the probe saw: "tensor", "scalar" */
    char dtype[16];
    int ndim;
    int64_t shape[8];
    int kind;                 /* PLAN_BOOL, PLAN_INT or PLAN_FLOAT */
    double p;                 /* bool: the share of true */
    long long ilo, ihi;       /* integers: the range */
    double lo, hi;            /* floats: the nominal range */
    int first_domain;         /* floats: the first domain to try (declarations narrow it) */
    char zero_mask[PATH_MAX]; /* floats: exact zeros to keep (a .kbt file), or empty */
    int symmetric;
} plan_input;

enum { PLAN_BOOL, PLAN_INT, PLAN_FLOAT };

typedef struct eval_plan {
    int n;
    plan_input *in;
} eval_plan;

/* From the probe's findings and the problem's declarations. 0, or -1 (out of memory). */
int plan_make(eval_plan *pl, const kbv_reply *probe, const kbv_reply *decl);
void plan_free(eval_plan *pl);
json_t *plan_to_json(const eval_plan *pl);
/* The gen_inputs specs of case ci (distribution code dist, domain step dom 0..3). */
json_t *plan_case_specs(const eval_plan *pl, uint64_t run_seed, int ci, int dist, int dom);
/* The narrowest domain the case's generated inputs were drawn in. */
int plan_effective_domain(const eval_plan *pl, int dom);
int plan_has_gen(const eval_plan *pl);

/* ---- outputs of one run (session.c) ----------------------------------------------------- */

typedef struct run_out {
    kbv_tensor *t;
    int n;
    int oversize;  /* session_run: an output file was larger than its bound (not read) */
    int kbv_side;  /* session_run: kbv itself could not read it (memory): not the worker's fault */
    kbv_reply rep; /* the worker's decoded reply (values, aliases, inputs_after, facts) */
} run_out;

void run_free(run_out *r);
int run_copy_outputs(run_out *dst, const run_out *src); /* tensors, and the reply's facts */
int run_out_count(const run_out *o);
int run_out_facts(const run_out *o, int k, judge_facts *f);

/* The reference's runs of one case. */
typedef struct ref_calib {
    judge_calib cal;
    int done;
    uint64_t oracle_fp; /* the oracle output's fingerprint (gen_fingerprint_host), once fp_done */
    int fp_done;
} ref_calib;
typedef struct ref_runs {
    run_out oracle, tf32, strict;
    reply_prints prints; /* the reference's input fingerprints */
    int mutates_inputs;  /* the reference itself changes its inputs */
    /* judge_calibrate's figures per output, computed once (cases_judge_output): a case's
     * outputs are judged against the same calibration by its second run and by every re-check
     * of a timed output on its inputs; and the oracle's fingerprints. For a large output both
     * are computed while the candidate's worker runs the case (cases.c, reference_passes). */
    ref_calib *calib;
    int ncalib;
} ref_runs;

void ref_runs_free(ref_runs *rr);

/* A judged case whose reference outputs are kept for the timed-output re-checks. */
typedef struct kept_case {
    ref_runs rr;
    int ci, dist, dom;
    uint64_t seed;
} kept_case;

/* ---- the evaluation's state -------------------------------------------------------------- */

#define EVAL_MAX_SEEN       8
#define EVAL_MAX_SEEN_CASES 64

typedef struct eval_ctx {
    const eval_opts *o;
    kbv_result *r;
    kbv_failure failure; /* what failed, if anything (verdict.h); the status derives from it */
    char scratch[PATH_MAX];
    char **env;
    int nenv;
    eval_plan plan; /* per input: how to make it (from the probe and the declarations) */
    struct {        /* what the probe found, per input (the roofline's bytes) */
        reply_probe_input *inputs;
        int ninputs;
    } probe;
    int oracle_fallback; /* 1 once float64 failed: the strict fp32 run is the oracle */
    int nominal_nonfinite, nominal_degenerate;
    int oracle_retry;      /* float64 failed on a hidden case: decide after the fp32 run */
    int redrawn;           /* the reference runs on redrawn weights (cases.c's weight cases): an input
                            * it rejects makes the case invalid, as on hidden inputs */
    char invalid_why[200]; /* why cases_reference() returned 2 */
    /* the first hidden case the candidate passed: the timing's never-seen values are drawn
     * like its inputs, under other tags (detect_value_cache) */
    int fresh_ci, fresh_dist, fresh_dom;
    uint64_t fresh_seed;
    /* per output: every judged case's candidate and oracle fingerprints (constant_output) */
    int seen[EVAL_MAX_SEEN];
    uint64_t seen_cand[EVAL_MAX_SEEN][EVAL_MAX_SEEN_CASES], seen_ref[EVAL_MAX_SEEN][EVAL_MAX_SEEN_CASES];
    /* the candidate's kernel names, from the static inspection at load time (the audit) */
    char (*kernels)[256];
    int nkernels;
    kbv_gpulock lock; /* the GPU shared with other evaluations (off unless --jobs shares it) */
    /* The reference side of every case, shared by a run's evaluations of one problem
     * (o->ref_cache; refcache.c and docs/results.md). */
    struct {
        char dir[PATH_MAX + 72]; /* the problem's folder: <ref_cache>/<sha256 of the problem> */
        char tmp[PATH_MAX + 96]; /* this evaluation's folder while it records, renamed to dir */
        json_t *loaded;          /* a finished folder's index (kbv's own file): cases are taken from it */
        json_t *cases;           /* records made here, by case index */
        long long bytes;         /* output bytes kept so far */
        long long cap;           /* what it may keep (refcache_problem_cap) */
        const char *keep;        /* tmp while the reference's outputs are read, else NULL */
        int dropped;             /* this evaluation gave up keeping the problem (refcache_record) */
    } cache;
} eval_ctx;

void eval_progress(const eval_ctx *c, const char *fmt, const char *arg);
/* Seconds since t0 less the GPU lock's waits since then (waited0: c->lock.waited_s at t0):
 * what a step cost this evaluation, not its queueing behind other evaluations' timings. */
static inline double eval_busy_since(const eval_ctx *c, double t0, double waited0) {
    double d = kbv_now() - t0 - (c->lock.waited_s - waited0);
    return d > 0 ? d : 0;
}

/* ---- worker sessions (session.c) ---------------------------------------------------------- */

/* Start a worker in role ("reference", "candidate", "standard", "inspect") and read its hello
 * (the reference's fills python/torch/gpu). 0, or -1 (err set; the worker is gone). */
int session_start(eval_ctx *c, kbv_proc *p, const char *role, const char *device, kbv_err *err);
/* Send cmd (stolen), decode the reply of its op into *rep. Returns the proc_result: a reply
 * that fails decoding is PROC_PROTOCOL. *rep is filled (and must be freed) only for PROC_OK.
 * The guard's findings become the result's; the step's time goes into the step profile. */
proc_result session_step(eval_ctx *c, kbv_proc *p, json_t *cmd, double timeout, kbv_reply *rep, kbv_err *err);
/* A step that must succeed: 0 with *rep (ok), or 1 with *pr saying how it failed and, for a
 * failure reply, *rep holding it (freed by the caller either way). */
int session_call(eval_ctx *c, kbv_proc *p, json_t *cmd, double timeout, kbv_reply *rep, proc_result *pr, kbv_err *err);
/* How the outputs of a step are read. kbv names every file itself: output j of a step whose
 * command carried prefix P is P<j>.kbt, a descriptor naming any other path is a protocol
 * error, and kbv opens, reads and unlinks only the name it made (no path from a reply). Each
 * file is opened without following links or blocking and must be a regular file with one link
 * (kbv_tensor_load_capped). Its data may hold at most like[j]'s bytes (the reference's output
 * j: a candidate's output of another size is wrong anyway; past nlike, nothing), or max_bytes
 * without like. */
typedef struct out_spec {
    const char *prefix;     /* NULL: the files are kbv's own (the reference cache) */
    const kbv_tensor *like; /* may be NULL */
    int nlike;
    long long max_bytes;   /* without like; < 0: no cap */
    const char *keep;      /* non-NULL: hard-link each file into this folder first (refcache.c) */
    int consume;           /* delete each file once read */
    long long *kept_bytes; /* with keep: bytes kept, added up */
} out_spec;

/* A step that produces outputs: read them into out (its reply in out->rep); like/nlike bound
 * the files (out_spec). PROC_ERROR when they could not be read (out->oversize: one was larger
 * than its bound, which a caller may judge as a wrong output). */
proc_result session_run(eval_ctx *c, kbv_proc *p, json_t *cmd, double timeout, const kbv_tensor *like, int nlike, run_out *out, kbv_reply *fail,
                        kbv_err *err);
/* Read the outputs a reply describes. 0, -1 on an error, -2 when a file is over its bound, -3
 * when kbv had no memory for one (kbv's own failure). */
int session_read_outputs(reply_values *values, const out_spec *spec, kbv_tensor **outs, int *n, kbv_err *err);
/* Whether kbv's own resources ran out (the scratch file system nearly full): 1 with why. A
 * worker's failure then is kbv's (FAILURE_KBV: not a verdict, `kbv run --resume` runs it
 * again), never the candidate's or the problem's. */
int session_exhausted(const eval_ctx *c, char *why, size_t n);
/* The bytes a candidate's worker may hold beneath its folder (docs/security.md): --max-scratch,
 * else 4 GiB plus 16 times the inputs' bytes as the reference's probe found them, else (no
 * probe: the standard protocol alone) 16 GiB. 0: no budget. */
long long session_scratch_budget(const eval_ctx *c);
/* The bound on a worker's file without a reference to compare with: --max-memory, or 64 GiB. */
long long session_max_file_bytes(const eval_ctx *c);
void session_free_outputs(kbv_tensor *outs, int n);
/* Start, load the problem and, for a candidate, inspect and load it. 0, 1 when a step failed
 * (*pr and *fail say how), -1 when the worker did not start (err). */
int session_load(eval_ctx *c, kbv_proc *p, const char *role, int candidate, kbv_reply *load, proc_result *pr, kbv_reply *fail, kbv_err *err);
/* Build the reference's Model or the candidate's class. 0, or 1 (*pr, *fail). */
int session_build(eval_ctx *c, kbv_proc *p, int candidate, proc_result *pr, kbv_reply *fail, kbv_err *err);
/* Stop the candidate's worker (killed when failed) and keep what it printed. */
void session_finish_candidate(eval_ctx *c, kbv_proc *cand, int failed);
/* The reference failed: the problem cannot be evaluated (errors added). */
kbv_failure session_problem_failure(eval_ctx *c, kbv_proc *p, const char *what, proc_result pr, const kbv_reply *rep, kbv_err *err);
/* The candidate failed: errors and flags added; returns the failure kind (eval.c's table). */
kbv_failure session_candidate_failure(eval_ctx *c, kbv_proc *p, const char *what, proc_result pr, const kbv_reply *rep, kbv_err *err);
const char *session_reply_msg(const kbv_reply *rep);
void session_free_env(eval_ctx *c);
/* The compile cache's base: --cache-dir, else beneath XDG_CACHE_HOME or HOME (1: shared by
 * evaluations); else beneath the evaluation's scratch (0; scratch NULL: a path that is none). */
int session_cache_base(const eval_opts *o, const char *scratch, char *out, size_t n);
/* A candidate's folder beneath the compile cache's base: one per candidate's bytes (sha). */
void session_cache_folder(const char *base, const char *sha, char *out, size_t n);
/* An evaluation's scratch folders, as the sandbox names them: inputs, ref, cand, std. */
int session_scratch_folders(const char *scratch, kbv_err *err);

/* ---- the cases (cases.c) -------------------------------------------------------------------- */

/* Every case: reference, candidate, judgement; the first two passed cases go to kept. Returns
 * 0 (c->failure says whether something failed), -1 when kbv failed. */
int cases_run(eval_ctx *c, kbv_proc *ref, kbv_proc *cand, kept_case *kept, int *nkept, kbv_err *err);
/* A hidden check case for the timing phase: the reference's runs on a fresh draw of hidden
 * distribution 1 + k % 4. 0, 2 (no valid domain), 1 (the problem failed), -1 (kbv). */
int cases_reference_check(eval_ctx *c, kbv_proc *ref, int k, kept_case *out, kbv_err *err);
/* Judge output k of a candidate's run against case rr's oracle. */
void cases_judge_output(const eval_ctx *c, ref_runs *rr, int k, const kbv_tensor *t, judge_calib *cal, judge_result *jr);
/* A case kept for re-checks (the timing's input sets and hidden checks), made smaller: each
 * float output's calibration computed now, then the TF32 and strict runs' data of that output
 * freed (their dtypes, shapes and sizes stay: outputs read later are bounded by them). A float
 * output is judged from the oracle and its calibration alone (judge_calibrated reads the two
 * runs' values only for integer and bool outputs, which keep them), so every later judgement
 * is the same to the bit; a float32 case then holds its float64 oracle, half of what it held.
 * Nothing is freed for an output whose calibration has no memory to stay in. */
void cases_compact_kept(ref_runs *rr);

/* ---- the reference cache (refcache.c) ------------------------------------------------------ */

void refcache_open(eval_ctx *c);
void refcache_record(eval_ctx *c, int ci, const kbv_case *kc, int dom, const ref_runs *rr);
int refcache_take(eval_ctx *c, int ci, kbv_case *kc, ref_runs *rr, int *dom, kbv_err *err);
void refcache_publish(eval_ctx *c);
void refcache_close(eval_ctx *c);
/* Its sizing rules (docs/results.md), bytes: a problem's cap from its file system's free space;
 * whether the run's folder has room for a new problem; whether a problem keeps on. */
long long refcache_problem_cap(long long avail);
int refcache_room(long long held, long long avail);
int refcache_keeps(long long bytes, int records, int total, long long cap);

/* ---- detectors (detect.c) ------------------------------------------------------------------- */

/* A failed case: name what the outputs show (cfp/ofp: the candidate's and oracle's output
 * fingerprints). */
void detect_semantic(eval_ctx *c, const kbv_case *kc, const ref_runs *rr, const run_out *c1, const run_out *c2, const reply_prints *cand_prints,
                     const uint64_t *cfp, const uint64_t *ofp);
/* The CUPTI audit's findings (cand: the candidate's audit). */
void detect_audit(eval_ctx *c, const kbv_reply *audit, int cand);
/* detect_value_cache's rule on n rounds (ref, cand: each arm's ms; fresh: 1 for a round on new
 * values): 1 when at least `min` rounds of each kind show the gap it flags, 0 otherwise; the
 * medians (where both kinds have a round) and the rounds of each kind in sp[2] and m[2]. */
enum { VALUE_CACHE_ROUNDS = 5, VALUE_CACHE_CONFIRM_ROUNDS = 10 };
int value_cache_gap(const double *ref, const double *cand, const unsigned char *fresh, int n, int min, double sp[2], int m[2]);
void detect_value_cache(eval_ctx *c, const double *ref, const double *cand, const unsigned char *fresh, int n);
/* impossible_time where the candidate's median (detect_roofline; also excessive_speedup) or
 * its graph replays' median (detect_roofline_graph) is below the device's memory floor. */
void detect_roofline(eval_ctx *c, const kept_case *k, double peak_gbs);
void detect_roofline_graph(eval_ctx *c, const kept_case *k, double peak_gbs);
void detect_short_call(eval_ctx *c, double offset_ns);

/* ---- timing (timing.c), the standard protocol (standard.c), the paper's (paper.c) --------- */

/* Time a verified candidate against the reference (both workers alive). Returns 0 (perf
 * filled, or perf.note says why not), 1 when the candidate failed (c->failure set), -1 when
 * kbv failed. */
/* Hidden check cases for the timing (docs/timing.md, "Hidden checks"): the reference's runs on
 * a fresh draw of each hidden distribution, taken from the run's kept reference side where
 * an earlier evaluation of the problem recorded them (cases_reference_check). Fills checks
 * (TIMING_CHECKS at most, *nchecks of them). 0; 1 the reference failed on one (perf.note
 * says so, nothing to free); -1 kbv. */
enum { TIMING_CHECKS = 4 };
int timing_checks(eval_ctx *c, kbv_proc *ref, kept_case *checks, int *nchecks, kbv_err *err);
/* The timed rounds and every timing stage, with the GPU this evaluation's alone (c->lock; it
 * stays held until the evaluation releases it); takes the checks of timing_checks (and frees
 * them). */
int timing_run(eval_ctx *c, kbv_proc *ref, kbv_proc *cand, kept_case *kept, int nkept, kept_case *checks, int nchecks, kbv_err *err);
/* KernelBench's protocol, in one process: fills r->standard (and, when it is the only
 * protocol, the cases and c->failure). */
void standard_run(eval_ctx *c, int only, kbv_err *err);
/* Trial t's outputs of a one-process protocol (standard, paper): files PREFIX<t>_ref_<j>.kbt
 * and _new_, the candidate's bounded by the reference's. *pass 0 with why where they cannot be
 * read or their counts differ. 0; -1 the reference's could not be read, -2 the candidate's
 * (both *pass 0; the reference's are then in *ro); -3 when kbv had no memory or descriptor to
 * read them (kbv's failure; nothing left to free). */
int standard_read_trial(eval_ctx *c, reply_trial *tr, const char *prefix, int t, kbv_tensor **ro, int *rn, kbv_tensor **no, int *nn, int *pass,
                        char *why, size_t whylen, kbv_err *err);
/* KernelBench-Verified's protocol as published, in one process: fills r->paper (and, when it
 * is the only protocol, the cases and c->failure). */
void paper_run(eval_ctx *c, int only, kbv_err *err);
/* The paper's atol = rtol for an output of dtype dt: 1e-2 for float16 and bfloat16, else 1e-3. */
double paper_tolerance(kbv_dtype dt);
/* Every element of t is finite (integer and bool tensors always are). */
int paper_finite(const kbv_tensor *t);
/* The paper's verdict from pp's trials and variants (trials_passed, variants[].evaluated and
 * passed, variants_run) and the cases they were judged as (trials "nominal", the x1 variant
 * "nominal", the others "scaled"): standard_correct, hidden_correct, correct and status. */
void paper_verdict(kbv_paper *pp, const kbv_case *cases, int ncases);

#endif
