/* result.h -- the outcome of one evaluation, and its JSON and text forms.
 *
 * A kbv_result is filled by an evaluation (eval.c and the parts evalctx.h lists) and only formatted here: result_to_json() is the CLI
 * contract of `kbv eval --json` (docs/cli.md), result_print() the readable summary.
 */
#ifndef KBV_RESULT_H
#define KBV_RESULT_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "finding.h"
#include "util.h"

typedef enum kbv_status {
    KBV_VERIFIED = 0,
    KBV_INCORRECT,
    KBV_OVERFIT,
    KBV_HACK,
    KBV_COMPILE_ERROR,
    KBV_RUNTIME_ERROR,
    KBV_TIMEOUT,
    KBV_CRASH,
    KBV_PROBLEM_ERROR, /* the reference itself could not be evaluated: no candidate verdict */
    KBV_PROBLEM_OK,    /* kbv check: the reference runs on every case it could make */
    KBV_STATUS_COUNT
} kbv_status;

const char *kbv_status_name(kbv_status s);

typedef struct kbv_case {
    char distribution[32]; /* nominal, normal, uniform_shifted, mixed_magnitude, heavy_tailed; a
                            * weight case's: weights_ and its inputs' (weights_nominal) */
    int weights;           /* a weight case: the reference's floating state redrawn (cases.c) */
    char domain[32];       /* raw, abs, nominal_range, nominal (a fresh get_inputs() draw) */
    uint64_t seed;         /* the case's seed (torch seed for get_inputs(); Philox key source) */
    int skipped;           /* no domain gave a valid reference output: not counted */
    char skip_reason[200];
    char fallback_reason[240]; /* a hidden case in a narrower domain: why the one before failed */
    int evaluated;             /* 0 when the candidate never produced outputs for it */
    int passed;
    double max_abs_err, max_rel_err;                   /* candidate vs oracle, worst output */
    double norm_rel_err;                               /* ||c - o|| / ||o||, worst output */
    double baseline_norm_rel_err, strict_norm_rel_err; /* PyTorch's own (TF32 / fp32) */
    double tol_norm;                                   /* the normwise bound applied (worst output) */
    double atol, rtol;                                 /* the standard protocol's trials: KernelBench's tolerance */
    int klass;                                         /* judge_class of the worst output; -1 when not judged */
    char detail[320];                                  /* why it failed; empty if passed */
    /* wall seconds: the reference's runs (every domain tried, the files written), the
     * candidate's two runs, kbv's judging; 0 where that part did not run */
    double t_reference_s, t_candidate_s, t_judge_s;
} kbv_case;

/* Milliseconds of one arm's samples. */
typedef struct kbv_times {
    int n;
    double median, q1, q3, mean;
} kbv_times;

/* A speedup: the median of per-round reference/candidate ratios and its bootstrap 95% CI. */
typedef struct kbv_ratio {
    int measured;
    double value, lo, hi;
} kbv_ratio;

enum {
    PHASE_REFERENCE,
    PHASE_CANDIDATE_LOAD,
    PHASE_CASES,
    PHASE_AUDIT,
    PHASE_TIMING,
    PHASE_STANDARD,
    PHASE_PAPER,
    PHASE_GPU_WAIT,
    PHASE_ADMISSION_WAIT,
    PHASE_COUNT
};
extern const char *const kbv_phase_names[PHASE_COUNT];

/* kbv's own clock (timing.c, stage_wall): batches of calls timed around the commands. */
typedef struct kbv_wall {
    int measured, calls, commands, batches; /* calls per command, commands per batch, batches per arm */
    double cand_ms, ref_ms, overhead_ms;    /* wall time per call; kbv's empty kernel's */
    double speedup, predicted, consistency; /* ref/cand; from the event medians and the overhead; their ratio */
    double cap;                             /* the factor the speedups were capped by (0: none) */
    double cand_cpu_ms;                     /* the candidate worker's threads' run + run-queue time per call (-1: unknown) */
    double host_share;                      /* cand_cpu_ms / cand_ms (-1: unknown) */
    double time_s;
} kbv_wall;

/* kbv's clock around the graph-replay commands (timing.c, graph_wall): medians of the commands'
 * wall times, ms; the overhead is the reference's command time beyond its replays. */
typedef struct kbv_graph_wall {
    int measured;
    double cand_ms, ref_ms, overhead_ms, speedup, predicted;
    double cap; /* the factor speedup_graph was capped by (0: none) */
} kbv_graph_wall;

typedef struct kbv_perf {
    int measured;   /* the timed rounds ran */
    char note[300]; /* why timing did not run, or what limited it */
    char clock[16]; /* "cuda_events" or "cpu_monotonic" */
    kbv_times cand, ref, ref_strict, ref_compile, cand_graph, ref_graph;
    kbv_times empty;   /* kbv's empty kernel through the same timer: its floor (GPU) */
    kbv_ratio speedup; /* vs the reference as the baseline runs it (TF32 on) */
    kbv_ratio speedup_strict, speedup_compile, speedup_graph;
    int rounds;
    char stop[24]; /* converged, max_samples, max_time */
    double noise;  /* relative half-width of the speedup's CI when it stopped */
    int throttled, cushion_expired, rechecks, rechecks_failed;
    int primed; /* each GPU sample followed an untimed call (--prime) */
    /* Placements each worker's samples were spread over ([0] reference, [1] candidate):
     * copies of the timing inputs, outputs held back, captured graphs (src/worker/bench.c). */
    int slots[2], held[2], graphs[2];
    double process_offset;              /* GPU: the per-process offset over the shorter median (0: not measured) */
    double partial_s;                   /* the partial-rewrite probe's wall time (0: not run) */
    int fresh_rounds;                   /* detect_value_cache's rounds on values no call had seen */
    double speedup_fresh, speedup_seen; /* median ratio on those rounds and on its seen-values rounds */
    char graph_note[200];               /* why there is no graph-replay figure */
    kbv_wall wall;                      /* kbv's own clock */
    kbv_graph_wall graph_wall;          /* kbv's clock around the graph replays */
    struct {
        int during, after, failed; /* hidden check calls among the rounds, after them; wrong */
        double time_s;             /* their reference cases and candidate calls, kbv's clock */
    } checks;
    double time_s;                      /* wall time of the timing phase */
} kbv_perf;

/* Device memory, bytes; -1 where not measured. */
typedef struct kbv_memory {
    long long peak_cand, peak_ref;             /* CUPTI: peak over the call minus the footprint before it */
    long long torch_peak_cand, torch_peak_ref; /* torch: max_memory_allocated over the call minus before */
    long long pers_cand, pers_ref;             /* CUPTI: footprint after construction minus before */
    long long torch_pers_cand, torch_pers_ref;
} kbv_memory;

typedef struct kbv_standard {
    int ran;           /* the standard protocol was run */
    int correct;       /* KernelBench would call the candidate correct */
    kbv_status status; /* its verdict in kbv's names */
    double tolerance;  /* atol = rtol used */
    int trials, trials_passed;
    double max_abs_err;
    char detail[400];
    int timed; /* KernelBench's timing ran: mean of the trials, TF32 off */
    int time_trials;
    double time_ref_ms, time_cand_ms;
} kbv_standard;

/* The paper protocol's input variants (KernelBench-Verified's hidden distributions D1-D4):
 * a fresh get_inputs() draw with its floating tensors multiplied by these. */
#define KBV_PAPER_VARIANTS 4
extern const double kbv_paper_scales[KBV_PAPER_VARIANTS];

typedef struct kbv_paper_variant {
    double scale;
    int evaluated;    /* the candidate ran on it and kbv judged it */
    int passed;       /* evaluated and within the tolerance */
    int skipped;      /* dropped: the reference raised, or gave a non-finite output */
    char detail[300]; /* why it failed or was skipped, or why it did not run; empty if passed */
} kbv_paper_variant;

/* KernelBench-Verified's protocol as published (src/paper.c, docs/correctness.md). */
typedef struct kbv_paper {
    int ran;
    int correct;          /* the trials and every kept variant passed */
    kbv_status status;    /* its verdict in kbv's names */
    double tolerance;     /* atol = rtol: 1e-3 (fp32), 1e-2 (fp16/bf16) */
    int trials, trials_passed;
    int standard_correct; /* the trials alone */
    int variants_run;     /* the variants were checked (only after the trials passed) */
    int hidden_correct;   /* every kept variant passed */
    kbv_paper_variant variants[KBV_PAPER_VARIANTS];
    int judged; /* some output was compared: max_abs_err means something */
    double max_abs_err;
    char detail[400];
    int timed; /* its timing ran (correct only): mean of CUDA events, no L2 flush */
    int warmup, time_trials;
    double time_cand_ms, time_tf32_ms, time_fp32_ms; /* the candidate; the reference under 'high' and 'highest' */
    long long peak_cand, peak_ref;                   /* torch.cuda.max_memory_allocated over one call; -1: not measured */
} kbv_paper;

/* A finding (a "flag" in the JSON): a catalogue entry's result (finding.h, docs/hacks.md). */
typedef struct kbv_flag {
    kbv_finding_id fid;
    char id[64];           /* the catalogue's name of fid */
    kbv_severity severity; /* hack (decides the verdict: verdict.c), suspect or info */
    char message[512];
    json_t *evidence; /* what was seen, or NULL */
} kbv_flag;

typedef struct kbv_file_id {
    char path[4096];
    char name[256];  /* file stem */
    char sha256[65]; /* of the file's bytes; empty if unreadable */
} kbv_file_id;

typedef struct kbv_result {
    kbv_status status;
    kbv_file_id problem, candidate;
    char device[16];
    uint64_t seed;       /* the run seed every other seed derives from */
    uint64_t build_seed; /* torch seed before get_init_inputs() and the constructors */
    kbv_case *cases;
    int ncases;
    kbv_flag *flags;
    int nflags;
    kbv_buf errors;                            /* what went wrong, with tracebacks */
    char *candidate_stdout, *candidate_stderr; /* captured, capped; NULL if none */
    char *reference_stderr;
    char python[64], torch[64], gpu[128];
    char gpu_id[96];      /* the GPU it ran on: "GPU-<uuid>", or CUDA_VISIBLE_DEVICES's entry kbv cannot map (gpus.h); "" on the CPU */
    char protocol[16];    /* verified, standard, paper, both or all */
    int klass;            /* accuracy class (judge_class), -1 if not judged */
    char oracle[160];     /* "float64", or the fallback and why */
    json_t *inputs;       /* the input plan: what the probe found and how each is made */
    int weights_matched;  /* the candidate's state_dict has the reference's names and shapes */
    int weights_loaded;   /* ...but other values, so the reference's were loaded into it */
    int reference_reused; /* the cases' reference side came from an earlier evaluation in the run */
    struct {              /* the reference's output over the cases (#22, docs/results.md "Degenerate problems") */
        int cases;        /* valid cases seen with their outputs' values; -1: values not seen (no verdict) */
        int varies;       /* some element of some case differs from the first one */
        double value;     /* the first element of the first valid case */
    } degenerate;
    /* the weight cases (cases.c; docs/correctness.md, "Weight cases") */
    struct {
        long long redrawn; /* reference state entries given new values */
        long long kept;    /* floating entries kept as built (integers, masks, NaN/Inf) */
        int cases;         /* weight cases judged */
        double time_s;     /* wall seconds of the redraws, the fresh builds, the weight cases and the restore */
        char skipped[240]; /* why there are none; empty when they ran */
        char print[17];    /* fingerprint of the redrawn state as kbv read it (16 hex digits), or empty */
    } redraw;
    kbv_standard standard;
    kbv_paper paper;
    kbv_perf perf;
    kbv_memory memory;
    json_t *audit_cand, *audit_ref; /* the CUPTI audit of one call each (worker replies) */
    json_t *samples;                /* --keep-samples: each arm's per-round times, ms */
    /* Where the wall time went, seconds (-1: the phase did not run): the reference worker up to
     * its probe; the candidate worker's start, load and construction (its compile); the cases;
     * the CUPTI audit; the timed rounds and graph replay; the standard protocol. Then waits:
     * for the GPU's lock (inside the phases above), and for admission under `kbv run --jobs`
     * (before wall_s began; admit.h). */
    double phase_s[PHASE_COUNT];
    /* The same wall time by worker command: {"reference.forward": {"n", "s", "compute_s",
     * "save_s", "load_s"}, ...} (NULL if none ran); docs/formats.md. */
    json_t *steps;
    json_t *inspect; /* static inspection of the candidate's source (kbv inspect) */
    json_t *sandbox; /* how the candidate's worker was confined (sandbox_describe) */
    double wall_s;   /* whole evaluation, seconds */
    /* CPU seconds (user + system) the evaluation used, from the kernel's accounting: kbv's own
     * process, and the workers with every descendant they waited for (compilers included);
     * -1: not measured */
    double cpu_kbv_s, cpu_workers_s;
} kbv_result;

void result_init(kbv_result *r);
void result_free(kbv_result *r);
kbv_case *result_add_case(kbv_result *r);
/* Add finding id at its catalogue severity, with evidence (stolen; may be NULL). A finding
 * already present is not added again; its evidence is dropped. */
void result_add_finding(kbv_result *r, kbv_finding_id id, json_t *evidence, const char *fmt, ...) KBV_PRINTF(4, 5);
/* The same at severity sev (a policy that overrides the catalogue's: --library-only). */
void result_add_finding_at(kbv_result *r, kbv_finding_id id, kbv_severity sev, json_t *evidence, const char *fmt, ...) KBV_PRINTF(5, 6);
int result_has_flag(const kbv_result *r, kbv_finding_id id);
void result_add_error(kbv_result *r, const char *fmt, ...) KBV_PRINTF(2, 3);

json_t *result_to_json(const kbv_result *r);
void result_print(const kbv_result *r, FILE *f);

#endif
