/* result.h -- the outcome of one evaluation, and its JSON and text forms.
 *
 * A kbv_result is filled by eval.c and only formatted here: result_to_json() is the CLI
 * contract of `kbv eval --json` (docs/cli.md), result_print() the readable summary.
 */
#ifndef KBV_RESULT_H
#define KBV_RESULT_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

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
    KBV_STATUS_COUNT
} kbv_status;

const char *kbv_status_name(kbv_status s);

typedef struct kbv_case {
    char distribution[32]; /* "nominal" in issue #2 */
    uint64_t seed;         /* torch seed under which get_inputs() made the inputs */
    int evaluated;         /* 0 when the candidate never produced outputs for it */
    int passed;
    double max_abs_err, max_rel_err;
    double atol, rtol;     /* the loosest tolerance applied to its outputs */
    char detail[320];      /* why it failed; empty if passed */
} kbv_case;

typedef struct kbv_flag {
    char id[64];
    char severity[16]; /* "hack", "suspect" or "info" */
    char message[512];
} kbv_flag;

typedef struct kbv_file_id {
    char path[4096];
    char name[256];   /* file stem */
    char sha256[65];  /* of the file's bytes; empty if unreadable */
} kbv_file_id;

typedef struct kbv_result {
    kbv_status status;
    kbv_file_id problem, candidate;
    char device[16];
    uint64_t seed;          /* the run seed every other seed derives from */
    uint64_t build_seed;    /* torch seed before get_init_inputs() and the constructors */
    kbv_case *cases;
    int ncases;
    kbv_flag *flags;
    int nflags;
    kbv_buf errors;         /* what went wrong, with tracebacks */
    char *candidate_stdout, *candidate_stderr; /* captured, capped; NULL if none */
    char *reference_stderr;
    char python[64], torch[64], gpu[128];
    double wall_s;          /* whole evaluation, seconds */
} kbv_result;

void result_init(kbv_result *r);
void result_free(kbv_result *r);
kbv_case *result_add_case(kbv_result *r);
void result_add_flag(kbv_result *r, const char *id, const char *severity, const char *fmt, ...) KBV_PRINTF(4, 5);
void result_add_error(kbv_result *r, const char *fmt, ...) KBV_PRINTF(2, 3);

json_t *result_to_json(const kbv_result *r);
void result_print(const kbv_result *r, FILE *f);

#endif
