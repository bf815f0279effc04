/* eval.h -- one evaluation: a problem and a candidate, judged in two worker processes.
 *
 * The reference worker loads the problem, builds Model, makes each case's inputs with the
 * problem's get_inputs() under a case seed, runs forward, and writes its outputs; kbv reads
 * them into memory and deletes the files before the candidate worker starts. The candidate
 * worker (a fresh process) loads the problem (for get_init_inputs and KernelBench's shared
 * namespace) and the candidate, builds ModelNew and runs the same inputs; kbv compares.
 * Input generation is confined to eval_make_cases() so issue #3's C generator replaces it
 * there only.
 */
#ifndef KBV_EVAL_H
#define KBV_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "result.h"
#include "util.h"

typedef struct eval_opts {
    const char *problem;       /* problem file (KernelBench format) */
    const char *candidate;     /* candidate file (defines ModelNew) */
    const char *device;        /* "cpu", "cuda" or "auto" */
    int have_seed;
    uint64_t seed;             /* run seed; drawn at random when !have_seed */
    double timeout_s;          /* limit for each worker step but loading, seconds */
    double load_timeout_s;     /* limit for loading (and compiling) the candidate, seconds */
    double start_timeout_s;    /* limit for a worker to start (import torch), seconds */
    int ncases;                /* nominal cases */
    const char *worker;        /* path of kbv-worker */
    const char *scratch_base;  /* where scratch folders go (NULL: $TMPDIR or /tmp) */
    const char *cache_dir;     /* compile cache (TORCH_EXTENSIONS_DIR); NULL: default */
    size_t capture_cap;        /* bytes of each output stream kept */
    int keep_scratch;
    int verbose;               /* progress on stderr */
} eval_opts;

void eval_opts_default(eval_opts *o);
/* Fills r with a verdict (any status, problem_error included); -1 only when kbv itself
 * cannot run (no worker binary, no scratch folder, no GPU for --device cuda). */
int eval_run(const eval_opts *o, kbv_result *r, kbv_err *err);

#endif
