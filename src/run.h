/* run.h -- `kbv run`: many evaluations into a results database (docs/results.md).
 *
 * Sources: a manifest (JSON Lines, or CSV/TSV with a header) naming problem, candidate and
 * optionally model, sample and level; relative paths resolve against the manifest's folder.
 * Every evaluation is stored in one transaction as soon as it ends; --resume continues the
 * latest run with the same settings and skips what it stored; --shard I/N takes a
 * deterministic part of the manifest (by each entry's key, so the parts do not depend on
 * the order of the lines).
 */
#ifndef KBV_RUN_H
#define KBV_RUN_H

#include "eval.h"
#include "gpus.h"
#include "util.h"

typedef struct run_item {
    char problem[4096], candidate[4096];
    char model[128];
    int sample, level; /* -1 when not given */
    int line;          /* in the manifest, for messages */
} run_item;

/* Read a manifest. Errors name the file and line. */
int manifest_load(const char *path, run_item **items, int *n, kbv_err *err);
/* The built-in suite for a device ("cpu", "cuda", "auto" or NULL: auto), relative to the
 * repository root: problems/default-cpu.jsonl or problems/default-cuda.jsonl. */
void run_default_suite(const char *device, char *out, size_t n);
/* The same from len bytes in memory (not modified, need not end in NUL): path names the
 * manifest in messages and picks the format by its extension (.jsonl/.json/.ndjson JSON
 * Lines, .tsv TSV, anything else CSV unless the first entry starts with '{'); relative
 * paths resolve against dir. On success *items (caller frees) holds *n >= 1 entries. */
int manifest_parse(const char *data, size_t len, const char *path, const char *dir, run_item **items, int *n, kbv_err *err);
/* KernelBench run folders: RUNS/<model>/level_L_problem_P_sample_S_kernel.py (or the files
 * directly in RUNS, model = its name), each matched to KB/levelL/P_*.py. */
int manifest_from_runs(const char *kb, const char *runs, run_item **items, int *n, kbv_err *err);
/* The entries as a JSON Lines manifest into out (paths as resolved, model, and sample and level
 * where given), which manifest_parse reads back as the same entries. 0, or -1 (err: no memory,
 * or an entry that is not UTF-8 text). */
int manifest_write_jsonl(const run_item *items, int n, kbv_buf *out, kbv_err *err);

typedef struct run_opts {
    const char *manifest; /* or: */
    const char *kernelbench, *runs;
    const char *db; /* default kbv.db */
    eval_opts eval; /* per-evaluation settings (seed: the run's) */
    int resume;
    int no_reuse;         /* --no-reference-reuse: every evaluation runs its own reference side */
    int no_admission;     /* --no-admission: start evaluations whether or not their scratch and memory fit (admit.h) */
    int shard_i, shard_n; /* 0/1: everything */
    int quiet;
    /* Parallel slots: each evaluation runs in a child kbv (`--child I:RUN`), `jobs` of them
     * on each GPU of gpus (as --gpus chose them, gpus_select: each GPU's lock is its id's, its
     * children's CUDA_VISIBLE_DEVICES its cvd, its UUID where kbv knows it) or on the visible
     * one(s); jobs 0: 8 (or half the cores) on a GPU, 1 on the CPU. Evaluations sharing a GPU
     * time under its lock; one starts only when its scratch and memory fit (admit.h) unless
     * no_admission. */
    const kbv_gpu *gpus;
    int ngpus, jobs;
    /* --compile-jobs: candidates' workers that only load the next entries' candidates, ahead
     * of their evaluations, so that the compile (load_inline) runs on the CPU while earlier
     * evaluations use the GPU and the evaluation finds its build done in the compile cache
     * (docs/results.md, "Compiling ahead"). 0: none; below 0 (not given): on a GPU the cores
     * the slots leave, at most one per slot, on the CPU none. */
    int compile_jobs;
    int argc; /* the command line, to start the children with */
    char **argv;
    int child_entry; /* >= 0: this process is a child running one entry of run child_run */
    long long child_run;
} run_opts;

/* Largest manifest read (bytes). */
#define RUN_MANIFEST_MAX (256 << 20)
/* run_main's failures (err set), which main.c turns into exit codes. */
enum { RUN_FAILED = -1, RUN_BAD_SOURCE = -2, RUN_BAD_DB = -3, RUN_INTERRUPTED = -4 };
/* Returns 0 when every evaluation was stored (whatever its verdict); RUN_BAD_SOURCE when the
 * manifest or run folders are not usable (nothing evaluated), RUN_BAD_DB when the database
 * is not (not kbv's, corrupt, read-only, locked), RUN_FAILED when kbv could not go on,
 * RUN_INTERRUPTED when SIGINT or SIGTERM stopped it (what it stored is kept and reported). */
int run_main(const run_opts *o, kbv_err *err);
/* The evaluation key (problem hash, candidate hash, model, sample, protocol). */
void run_key(const char *psha, const char *csha, const char *model, int sample, const char *protocol, char *out, size_t n);
/* Whether a key falls in shard i of n. */
int run_in_shard(const char *key, int i, int n);

#endif
