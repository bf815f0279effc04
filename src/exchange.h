/* exchange.h -- `kbv import` and `kbv export`: results exchanged with KernelBench's tooling
 * (docs/results.md, "Exchange with KernelBench").
 *
 * Three file formats, all eval_results.json:
 *   kernelbench         KernelBench's current one: {"P": [{sample_id, compiled, correctness,
 *                       metadata, runtime, runtime_stats}, ...]}
 *   kernelbench_legacy  KernelBench's older one: {"P": {sample_id, ...}} (one sample)
 *   kbv_paper           the KernelBench-Verified paper harness's: {"P_S": {..., peak_memory,
 *                       memory_stats}}, with eval_results_hidden.json of the same shape
 * An imported file is data from elsewhere: its size, its entries' count and every field's type
 * and range are checked before anything is written, and a bad one is a one-line error (main.c
 * exits 2) that leaves no database behind and nothing changed in one. An imported evaluation
 * is no kbv verdict: it is stored with the status "imported", in a run of its own whose
 * settings name the file, with the imported verdict under the protocol the file came from
 * (KernelBench's: the standard protocol's std_* columns and result.standard; the paper's:
 * result.paper). This file measures nothing and judges nothing: the paper's gating by its
 * hidden file and its leaderboard's re-threshold (--fp32-tolerance) are the leaderboard's rules
 * applied to the files' own verdicts, and the hidden file export writes is kbv's stored paper
 * verdict in the harness's words.
 */
#ifndef KBV_EXCHANGE_H
#define KBV_EXCHANGE_H

#include <jansson.h>

#include "util.h"

typedef enum exchange_format { EXCHANGE_KERNELBENCH, EXCHANGE_KERNELBENCH_LEGACY, EXCHANGE_KBV_PAPER } exchange_format;

/* "kernelbench", "kernelbench_legacy", "kbv_paper" */
const char *exchange_format_name(exchange_format f);

#define EXCHANGE_FILE_MAX    (64 << 20) /* largest file imported, bytes (a KernelBench run of 250 problems x 5 samples: a few MB) */
#define EXCHANGE_ENTRIES_MAX 200000     /* most samples in one file */
#define EXCHANGE_ENTRY_MAX   (1 << 20)  /* largest entry, bytes of compact JSON (a traceback in its metadata included) */
#define EXCHANGE_ID_MAX      999999     /* largest problem or sample id */

/* Which format root (a parsed file) is: all values lists (kernelbench), all objects under
 * numeric keys (kernelbench_legacy) or under "P_S" keys (kbv_paper). 0, or -1 with err
 * naming the first key or value that fits none, or mixes them. */
int exchange_detect(const json_t *root, exchange_format *fmt, kbv_err *err);

/* A decimal id in [lo, hi]: digits only (no sign, space or leading '+'), at most 6 of them.
 * The value, or -1. */
int exchange_parse_id(const char *s, int lo, int hi);
/* The paper harness's key "P_S" (split at its last '_'): 0, or -1. */
int exchange_parse_key(const char *key, int *pid, int *sid);
/* The problem id of a KernelBench-style problem file, path ".../P_Name.py": P, or -1. */
int exchange_problem_id(const char *path);

/* One sample of an imported file, as kbv reads it. */
typedef struct exchange_entry {
    int pid, sid;          /* problem id (1-based, KernelBench's) and sample id */
    int compiled, correct; /* the file's own verdict (correct only when compiled) */
    double runtime_ms;     /* the file's runtime (a mean of its trials, ms); < 0: not measured */
    double peak_bytes;     /* peak_memory (the paper's), bytes; < 0: not measured */
    const char *status;    /* that verdict in kbv's names: verified, incorrect, compile_error,
                              * runtime_error or timeout (static) */
    const json_t *entry;   /* the entry itself (borrowed from the parsed file) */
} exchange_entry;

/* Check one entry's fields (sample_id an integer equal to sid where sid >= 0; compiled and
 * correctness booleans; runtime and peak_memory numbers or null; metadata, runtime_stats and
 * memory_stats objects when present; at most EXCHANGE_ENTRY_MAX bytes) and read them into
 * out. where names the entry in messages. 0, or -1 with err set. */
int exchange_entry_read(const json_t *e, int pid, int sid, const char *where, exchange_entry *out, kbv_err *err);

/* Every sample of root (of format fmt) into *out (caller frees; borrowed entries), sorted by
 * problem then sample id; a (problem, sample) given twice is an error. */
int exchange_entries(const json_t *root, exchange_format fmt, exchange_entry **out, int *n, kbv_err *err);

/* KernelBench's baseline_time file {"levelL": {"P_Name.py": {"mean": ms, "peak_memory": bytes}
 * or null}}: the entry of problem pid in level (file name `name` when known, else the one
 * whose name starts with "P_"). 1 with *mean_ms (<= 0: none) and *peak_bytes (< 0: none),
 * 0 when the file has no entry for it, -1 when the file is malformed there (err set). */
int exchange_baseline(const json_t *baseline, int level, int pid, const char *name, double *mean_ms, double *peak_bytes, kbv_err *err);

/* `kbv import`. */
typedef struct exchange_import_opts {
    const char *source;        /* eval_results.json, or the run folder holding it */
    const char *hidden;        /* the paper's eval_results_hidden.json, or NULL */
    double fp32_tolerance;     /* > 0: the paper leaderboard's re-threshold of hidden failures
                                * that failed only the standard trials (--fp32-tolerance,
                                * needs hidden); 0: off, the hidden file's verdict stands */
    const char *baseline;      /* KernelBench's baseline_time JSON (for the paper's file: the TF32 one), or NULL */
    const char *baseline_fp32; /* the paper's fp32 baseline_time JSON (its file only), or NULL */
    const char *kernelbench;   /* a KernelBench checkout naming the problems (DIR/levelL/P_*.py), or NULL */
    const char *model;
    int level;
    const char *db;
} exchange_import_opts;

/* import's and export's failures, which main.c turns into exit codes: a bad input file or
 * option (2), a results database that cannot be used (5); -1 anything else (4). */
enum { EXCHANGE_FAILED = -1, EXCHANGE_BAD_INPUT = -2, EXCHANGE_BAD_DB = -3 };

/* Store every sample of o->source into o->db in one transaction. *added: evaluations stored;
 * *kept: those the same import (the same files and options) had stored already. 0, or one of
 * the codes above. */
int exchange_import(const exchange_import_opts *o, const char **format, int *added, int *kept, kbv_err *err);

/* `kbv export`. */
typedef struct exchange_export_opts {
    const char *db;
    const char *out;      /* a file, or "-" for stdout */
    const char *format;   /* "kernelbench" or "kbv-paper" */
    const char *protocol; /* "verified" (default), "standard" or "paper" */
    const char *model;    /* only this model's evaluations, or NULL */
    int level;            /* only this level's, or -1 */
    const char *hidden;   /* also the paper harness's eval_results_hidden.json here (format kbv-paper,
                           * protocol paper only), or NULL; out then gets the standard trials'
                           * verdict, as the harness's eval_results.json has it */
} exchange_export_opts;

/* The paper harness's label of kbv's paper variant k (0-based, kbv_paper_scales order: x1,
 * x3, x0.01, x-1): "config_<k+1>". The harness numbers the configs a problem kept in order,
 * so its labels agree with kbv's wherever no variant was dropped before them. */
#define EXCHANGE_CONFIG_FMT "config_%d"

/* Write the latest evaluation of every key that has o->protocol (and the model and level
 * asked for) as o->format, and with o->hidden the hidden file beside it. *written: samples
 * written; *hidden_written: hidden entries written; *skipped: evaluations without that
 * protocol. Two evaluations of one (problem id, sample) are an error (--model, --level pick
 * one run's). 0, or one of the codes above. */
int exchange_export(const exchange_export_opts *o, int *written, int *hidden_written, int *skipped, kbv_err *err);

#endif
