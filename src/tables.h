/* tables.h -- the published KernelBench-Verified paper's tables from a set of evaluations:
 * best-of-N per (model, problem), Speedup / Correctness / Fast@1 / Mem Eff / Mem Eff% per model
 * (pooled and per level) under the paper's protocol, kbv's verified protocol and KernelBench's
 * standard one, and the paper's four-condition decomposition (docs/results.md, "The paper's
 * tables"). Pure: evaluations in, a JSON object out, and that object rendered as text. It
 * reads no database (report.c does) and measures nothing.
 */
#ifndef KBV_TABLES_H
#define KBV_TABLES_H

#include <jansson.h>
#include <stdio.h>

#include "util.h"

enum { TABLES_PAPER, TABLES_VERIFIED, TABLES_STANDARD, TABLES_NPROTO };
extern const char *const tables_proto_names[TABLES_NPROTO]; /* "paper", "verified", "standard" */

/* One evaluation under one protocol. */
typedef struct tables_arm {
    int present;                          /* the evaluation ran this protocol */
    int correct;                          /* ...and it called the kernel correct */
    double speedup;                       /* TF32 baseline / kernel time; <= 0: not timed */
    double speedup_fp32;                  /* fp32 baseline / kernel time; <= 0: none (the paper's only) */
    long long peak_kernel, peak_baseline; /* peak memory, bytes; <= 0: not measured */
} tables_arm;

/* One evaluation as the tables see it. */
typedef struct tables_eval {
    char model[128];
    char problem[160];   /* the problem's identity within its level: its file's SHA-256 (its name where none) */
    char name[128];      /* the problem's file stem, shown */
    char candidate[128]; /* the candidate's file stem (the evidence of a degenerate problem) */
    int level, sample;   /* -1: unknown */
    int latest;          /* the latest evaluation of its key: only these are counted; the others
                          * only testify that their problem is degenerate */
    tables_arm arm[TABLES_NPROTO];
    int std_correct;   /* paper: correct on the standard tests (its standard_correct) */
    int hidden_failed; /* paper: hidden_correct is false (a hidden variant failed) */
    int degenerate;    /* kbv found the problem's output constant (.degenerate.constant) */
    int degenerate_has_value;
    double degenerate_value;    /* that constant, where a number */
    long long degenerate_cases; /* over how many cases; -1 unknown */
} tables_eval;

/* Fill e's protocol arms, paper fields and degenerate mark from an evaluation's result JSON
 * (the stored `result`, or an object with its fields status, protocol, speedup,
 * speedup_strict, memory, standard, paper and degenerate); the identity fields (model,
 * problem, level, sample, latest) are left as they are. */
void tables_eval_from_result(tables_eval *e, const json_t *result);

/* The tables of n evaluations (docs/results.md): a new JSON object, NULL without memory. */
json_t *tables_build(const tables_eval *ev, int n);

/* Render tables_build's object as "table", "md" or "csv". */
int tables_write(const json_t *t, const char *format, FILE *f, kbv_err *err);

#endif
