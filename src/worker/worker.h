/* worker.h -- kbv-worker's state: one struct, shared by every file of the worker.
 *
 * This header holds data only. Each file declares its own functions in its own header, and
 * the files form layers, each using only those before it (none uses one that uses it):
 *
 *   py.c dl.c                 the interpreter; tensors through DLPack
 *   fail.c guard.c            failure replies; the guard's evidence
 *   device.c                  torch's global state, memory marks, kbv's timer and stream
 *   values.c loader*.c        values leaving the worker; the candidate's loaders
 *   inputs.c                  probe, gen_inputs, the inputs of a case
 *   model.c forward.c bench.c inspect.c    the commands on models, calls, timing, source
 *   standard.c                KernelBench's own check and timing
 *   paper.c                   KernelBench-Verified's own check (trials at 1e-3, scaled variants), timing, memory
 *   main.c                    arguments, hello, the command table and loop
 */
#ifndef KBV_WORKER_H
#define KBV_WORKER_H

#include "../gpu/timer.h"
#include "dl.h"
#include "py.h"

#include <jansson.h>

#define BENCH_SETS   2
#define BENCH_SLOTS  32 /* at most this many copies of the timing inputs (placements) */
#define BENCH_GRAPHS 8  /* at most this many captured graphs, one per input slot */
#define BENCH_BATCH  64 /* at most this many calls per bench_launch (each output kept) */
#define BENCH_CHECKS 8  /* at most this many hidden check sets (bench_setup's "checks") */

struct cand_loader;

typedef struct worker {
    int cuda; /* device is cuda:0 */
    dl_ctx dl;
    PyObject *problem;                /* the problem module */
    PyObject *candidate;              /* the candidate module, if loaded */
    const struct cand_loader *loader; /* the loader that loaded it (loader.h) */
    PyObject *model;                  /* the built model */
    PyObject *oracle;                 /* a float64 deep copy of the model, made on first use */
    PyObject *weights0;               /* redraw_weights: the model's floating state as built (CPU copies) */
    PyObject *inputs;                 /* the current case's inputs (a tuple), made by gen_inputs */
    PyObject *nominal;                /* get_inputs() under nominal_seed, kept: it can take seconds */
    unsigned long long nominal_seed;
    char problem_path[4096]; /* as loaded */
    int audit;               /* the CUPTI audit runs (CUDA builds with CUPTI) */
    /* timing (bench.c) */
    gpu_timer *timer;
    PyObject *stream;             /* torch.cuda.ExternalStream over the timer's stream */
    PyObject *vals[BENCH_SETS];   /* the timing input sets' values (tuples) */
    PyObject *checks[BENCH_CHECKS]; /* hidden check sets: values a sample can be given instead */
    int nchecks;
    PyObject *slots[BENCH_SLOTS]; /* the tuples the calls get: nslots sets of addresses */
    int slot_vals[BENCH_SLOTS];   /* which values each slot holds now */
    int nvals, nslots;
    json_t *fresh_spec;             /* bench_setup's "fresh" input specs: new values for a sample are */
    long long fresh_seed;           /* drawn from them under another tag (bench's "fresh") */
    int fresh_gen;                  /* some input is generated, so fresh values differ */
    unsigned long long count;       /* samples so far: picks values (and, hashed, the slot) */
    PyObject *held[BENCH_SLOTS];    /* earlier calls' outputs, kept so the next one lands elsewhere */
    int nheld;                      /* how many (0: none; -1: not decided yet) */
    PyObject *last_out;             /* the last timed call's outputs, until the next bench: bench_save */
    int last_set;                   /* the value set they were computed from */
    PyObject *batch_out[BENCH_BATCH]; /* bench_launch's calls' outputs, until the next bench or launch */
    int batch_set[BENCH_BATCH];       /* the value set each was computed from */
    int nbatch;
    PyObject *rewrite;              /* partial_probe's rewrite function, made on first use */
    PyObject *rewrite_keep;         /* ... and its function cloning the first call's outputs */
    PyObject *probe_out[2];         /* partial_probe's two calls' outputs, until partial_save */
    PyObject *std_models[2];        /* standard: the reference and candidate it checked, until standard_time */
    PyObject *compiled;             /* torch.compile(model), made on first use */
    PyObject *graphs[BENCH_GRAPHS]; /* (graph, outputs) captured over slot k, made on first use */
    int ngraphs;
    unsigned char *cpu_flush; /* CPU mode: a buffer larger than the last-level cache */
    size_t cpu_flush_bytes;
} worker;

#endif
