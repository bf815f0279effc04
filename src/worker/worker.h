/* worker.h -- kbv-worker's state and the helpers its command files share (main.c: loading,
 * inputs, forward, the standard check; bench.c: timing, graph replay, audit). */
#ifndef KBV_WORKER_H
#define KBV_WORKER_H

#include "../gpu/timer.h"
#include "dl.h"
#include "py.h"

#include <jansson.h>

#define BENCH_SETS 2
#define BENCH_SLOTS 32 /* at most this many copies of the timing inputs (placements) */
#define BENCH_GRAPHS 8 /* at most this many captured graphs, one per input slot */

typedef struct worker {
    int cuda;            /* device is cuda:0 */
    dl_ctx dl;
    PyObject *problem;   /* the problem module */
    PyObject *candidate; /* the candidate module, if loaded */
    PyObject *model;     /* the built model */
    PyObject *oracle;    /* a float64 deep copy of the model, made on first use */
    PyObject *inputs;    /* the current case's inputs (a tuple), made by gen_inputs */
    PyObject *nominal;   /* get_inputs() under nominal_seed, kept: it can take seconds */
    unsigned long long nominal_seed;
    char problem_path[4096]; /* as loaded */
    int audit;           /* the CUPTI audit runs (CUDA builds with CUPTI) */
    /* timing (bench.c) */
    gpu_timer *timer;
    PyObject *stream;    /* torch.cuda.ExternalStream over the timer's stream */
    PyObject *vals[BENCH_SETS];  /* the timing input sets' values (tuples) */
    PyObject *slots[BENCH_SLOTS]; /* the tuples the calls get: nslots sets of addresses */
    int slot_vals[BENCH_SLOTS];   /* which values each slot holds now */
    int nvals, nslots;
    json_t *fresh_spec;          /* bench_setup's "fresh" input specs: new values for a sample are */
    long long fresh_seed;        /* drawn from them under another tag (bench's "fresh") */
    int fresh_gen;               /* some input is generated, so fresh values differ */
    unsigned long long count;    /* samples so far: picks values (and, hashed, the slot) */
    PyObject *held[BENCH_SLOTS];  /* earlier calls' outputs, kept so the next one lands elsewhere */
    int nheld;                    /* how many (0: none; -1: not decided yet) */
    PyObject *compiled;  /* torch.compile(model), made on first use */
    PyObject *graphs[BENCH_GRAPHS]; /* (graph, outputs) captured over slot k, made on first use */
    int ngraphs;
    unsigned char *cpu_flush;    /* CPU mode: a buffer larger than the last-level cache */
    size_t cpu_flush_bytes;
} worker;

json_t *fail_python(const char *kind, const char *context);
PyObject *output_seq(worker *w, PyObject *out, char *why, size_t whylen);
json_t *save_values(worker *w, PyObject *seq, const char *prefix, const char *kind, const char *what);
int set_tf32(worker *w, int on);
/* torch.cuda.empty_cache(): 0, or -1 with the Python error pending. */
int empty_cache(worker *w);
int seed_torch(worker *w, unsigned long long seed);
PyObject *nominal_inputs(worker *w, unsigned long long seed);
PyObject *to_device(worker *w, PyObject *v);
PyObject *construct(worker *w, int cand, unsigned long long seed, int *at_init);
json_t *make_inputs(worker *w, const json_t *specs, long long seed, PyObject **out);
/* A 64-bit fingerprint of a tensor's bytes, computed where they live. */
int fingerprint(worker *w, PyObject *t, uint64_t *fp, kbv_err *err);
/* Fingerprints of a sequence's tensors as hex strings (null for other values); NULL on error. */
json_t *seq_prints(worker *w, PyObject *seq, kbv_err *err);

/* bench.c */
json_t *cmd_bench_setup(worker *w, const json_t *cmd);
json_t *cmd_bench(worker *w, const json_t *cmd);
json_t *cmd_audit(worker *w, const json_t *cmd);
json_t *cmd_memo_probe(worker *w, const json_t *cmd);
/* inspect.c */
json_t *cmd_inspect(worker *w, const json_t *cmd);
/* KernelBench's timing of one model on inputs (standard protocol): mean of trials, ms. */
json_t *standard_time(worker *w, PyObject *model, PyObject *args, int warmup, int trials, double *mean_ms);
/* Device memory a model holds: footprint before construction (call with *before) and after. */
void memory_mark(worker *w, long long *cupti, long long *torch_bytes);

#endif
