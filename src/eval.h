/* eval.h -- one evaluation: a problem and a candidate, judged in two worker processes.
 *
 * Verified protocol (docs/correctness.md): the reference worker probes get_inputs(), then
 * for every case makes the inputs (nominal: get_inputs() under the case seed; hidden: kbv's
 * generator) and runs the float64 oracle, the TF32 baseline and the strict fp32 run; the
 * candidate worker, a separate process that never sees those outputs, makes the same inputs
 * itself and runs the candidate twice under different poison. kbv judges every output in C.
 * Then, for a verified candidate, the timing (docs/timing.md): both workers stay alive, a
 * CUPTI audit of one call each, then rounds in random order of the candidate, the reference
 * with TF32 (the headline baseline), the strict reference and optionally torch.compile; the
 * speedup is the median of per-round ratios with a bootstrap CI; timed outputs are re-checked.
 * Standard protocol: KernelBench's own check and timing, in one process, in a third worker.
 * Paper protocol: KernelBench-Verified's as published (its 5 trials at 1e-3, four scaled input
 * variants, the mean of CUDA events against TF32 and fp32 baselines), likewise in one process.
 */
#ifndef KBV_EVAL_H
#define KBV_EVAL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "result.h"
#include "util.h"

typedef struct eval_opts {
    const char *problem;   /* problem file (KernelBench format) */
    const char *candidate; /* candidate file (its kind selects the worker's loader: src/worker/loader.h) */
    const char *device;    /* "cpu", "cuda" or "auto" */
    int have_seed;            /* 1: seed given; 2: given in a seed file (kbv run --seed-file), never printed */
    uint64_t seed;            /* run seed; drawn at random when !have_seed */
    double timeout_s;         /* limit for each worker step but loading, seconds */
    double load_timeout_s;    /* limit for loading (and compiling) the candidate, seconds */
    double start_timeout_s;   /* limit for a worker to start (import torch), seconds */
    int ncases;               /* seeds per distribution (nominal and each hidden one) */
    int protocol;             /* EVAL_VERIFIED, EVAL_STANDARD, EVAL_PAPER, EVAL_BOTH or EVAL_ALL */
    double standard_tol;      /* KernelBench's atol = rtol; <= 0: 1e-4 (fp32), 1e-2 (fp16/bf16) */
    const char *worker;       /* path of kbv-worker */
    const char *scratch_base; /* where scratch folders go (NULL: $TMPDIR or /tmp) */
    const char *cache_dir;    /* compile cache (TORCH_EXTENSIONS_DIR); NULL: default */
    int build_fast;           /* load_inline's C++ with kbv's precompiled torch header (docs/build.md) */
    int pycache_mode;         /* kbv's bytecode tree for the workers' Python: 0 auto (where the installed
                               * packages have none), 1 always, -1 never (--pycache; docs/build.md) */
    char pycache[PATH_MAX];   /* that tree, given to workers that Landlock keeps from writing it; "": none */
    size_t capture_cap;       /* bytes of each output stream kept */
    int keep_scratch;
    int verbose;                /* progress on stderr */
    int timing;                 /* time verified candidates (default 1; --no-timing) */
    double time_budget_s;       /* cap on the timed rounds, seconds; 0: 10 on a GPU, 2 on the CPU */
    int compile_baseline;       /* also time torch.compile(reference) */
    int prime;                  /* untimed call before each GPU sample: 1 always, 0 never, -1 auto (calls under 2 ms) */
    int keep_samples;           /* keep every timed round's times in the result (timing.samples) */
    int standard_trials;        /* timing trials of the standard and paper protocols (0: none) */
    int sandbox;                /* confine workers (default 1; --no-sandbox), docs/security.md */
    long long max_memory_bytes; /* a worker's data memory (RLIMIT_DATA) and memory cgroup's limit; 0: unlimited */
    long long max_scratch_bytes; /* what a candidate's worker may hold beneath its folder (--max-scratch);
                                  * -1: session_scratch_budget's default, 0: no budget */
    const char *db_path;        /* the results database, unreadable to candidates (kbv run) */
    const char *library_only;   /* severity of library_only / unused_kernel / low_authored_share: hack (default), suspect or info */
    const char *gpu_lock;       /* file of the GPU's readers-writer lock (KBV_GPU_LOCK; NULL: none), util.h */
    const char *ref_cache;      /* kbv run: the run's folder of reference sides kept per problem (KBV_REF_CACHE;
                                * NULL: every evaluation runs its own), docs/results.md */
    /* kbv run --ref-cache-max: the most a problem keeps there, bytes (-1: refcache_problem_cap's) */
    long long ref_cache_max_bytes;
} eval_opts;

/* Bits: which protocols run (in this order). EVAL_BOTH is verified and standard; EVAL_ALL adds
 * the paper's (KernelBench-Verified as published, src/paper.c). */
enum { EVAL_VERIFIED = 1, EVAL_STANDARD = 2, EVAL_BOTH = 3, EVAL_PAPER = 4, EVAL_ALL = 7 };

/* The protocol's name as --protocol spells it and the result stores it: verified, standard,
 * paper, both or all ("verified" for a combination without a name). */
const char *eval_protocol_name(int protocol);

void eval_opts_default(eval_opts *o);
/* The device a setting means: "auto" is "cuda" where an NVIDIA driver is present, else "cpu". */
const char *eval_device(const char *device);
/* Fills r with a verdict (any status, problem_error included); -1 only when kbv itself
 * cannot run (no worker binary, no scratch folder, no GPU for --device cuda). */
int eval_run(const eval_opts *o, kbv_result *r, kbv_err *err);
/* `kbv inspect`: the static inspection of a candidate file, in a worker (the file is parsed,
 * never run). *out gets the inspector's JSON. Returns 0, or -1 (err set). */
int eval_inspect(const eval_opts *o, const char *path, json_t **out, kbv_err *err);

/* Build (or find up to date) kbv's precompiled torch headers beneath the shared compile cache,
 * by `kbv-worker --build-pch`, before any candidate runs (--build fast; docs/build.md). */
int session_prepare_pch(const eval_opts *o, kbv_err *err);
/* Run kbv-worker --build-pycache beneath the shared compile cache (o->pycache_mode) and set
 * o->pycache to the tree it made or found ("" where none is wanted or it could not be built:
 * a note on stderr, never an error: the workers then compile their modules as ever). */
void session_prepare_pycache(eval_opts *o);
/* The same, started in the background (kbv run on a GPU): its pid in *pid, running `nicer`
 * nicer than kbv in a process group of its own (kill(-pid) stops it whole); 0 or -1 (err
 * set). session_pch_status: 0 where its wait status st says it built them, else -1 (err set). */
int session_spawn_pch(const eval_opts *o, int nicer, pid_t *pid, kbv_err *err);
int session_pch_status(const eval_opts *o, int st, kbv_err *err);

#endif
