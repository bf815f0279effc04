/* reply.h -- the one boundary for what a worker says: every reply decoded into a typed
 * struct, every field validated here.
 *
 * A worker's reply is a claim by the process that runs the candidate (docs/security.md).
 * reply_decode() takes the parsed line of the command `op` and fills a kbv_reply: the
 * common part (ok, the failure's kind/message/traceback, the guard's findings, the worker's
 * own split of its time) and the part of that command. Each field is checked for its type,
 * its range, its size and (ids, fingerprints, dtypes) its character set; strings are capped;
 * arrays are bounded. A reply that fails a check is a protocol error: the caller treats it
 * as the worker breaking the protocol (a candidate's `crash` with `protocol_violation`, a
 * reference's `problem_error`). Fields kbv does not know are ignored (docs/protocol.md lists
 * the known ones; tests/unit/test_reply.c checks the list against the document).
 *
 * Output-only data that kbv stores without reading (the audit's per-kernel table, the
 * inspector's report, the probe's findings) is kept as JSON that this file rebuilds from the
 * validated fields: nothing the worker wrote reaches a result unchecked. The rest of kbv
 * reads replies only through these structs. This file sends nothing and judges nothing.
 */
#ifndef KBV_REPLY_H
#define KBV_REPLY_H

#include <jansson.h>
#include <limits.h>
#include <stdint.h>

#include "finding.h"
#include "util.h"

#define REPLY_MAX_VALUES  4096  /* outputs, inputs, state entries */
#define REPLY_MAX_GUARD   64    /* guard findings in one reply */
#define REPLY_MAX_TRIALS  64    /* the standard protocol's trials in one reply */
#define REPLY_MAX_SAMPLES 65536 /* times in one bench reply */

/* An output (or state entry) descriptor: a tensor in a .kbt file, or a number. */
typedef struct reply_value {
    int is_tensor;
    char path[PATH_MAX]; /* tensor: where the worker saved it */
    char name[256];      /* save_state: the state_dict key; else empty */
    double value;        /* scalar: its value (0 for None and booleans, as JSON numbers go) */
    json_t *scalar;      /* scalar: the value as sent (null, bool, int or real), for re-encoding */
} reply_value;

typedef struct reply_values {
    int present; /* the reply had the array */
    int n;
    reply_value *v;
} reply_values;

/* Per-input fingerprints of a sequence: 16 hex digits each, or none for a non-tensor. */
typedef struct reply_prints {
    int present;
    int n;
    uint64_t *fp;
    unsigned char *has; /* 0: null (not a tensor) */
} reply_prints;

/* A finding the worker's guard reports (src/worker/guard.c); its severity is the catalogue's. */
typedef struct reply_guard {
    kbv_finding_id id;
    char step[16];
    char detail[512];
} reply_guard;

/* A worker's own account of a step's time: a "..._s" field. */
typedef struct reply_time {
    char key[24];
    double s;
} reply_time;

/* One output's validity facts, as the worker computed them where the output lives (kbv check). */
typedef struct reply_fact {
    int nonfinite, constant;
    double value;
} reply_fact;

/* One input as the probe found it (src/probe.h), and the plan's inputs. */
typedef struct reply_probe_input {
    int is_tensor;
    int consistent, fixed, nonfinite, symmetric;
    char dtype[16];
    int ndim;
    int64_t shape[8];
    long long zeros, probes; /* positions zero in every probe; tensors probed */
    int has_min, has_max, has_true_fraction;
    double min, max, true_fraction;
    char zero_mask[PATH_MAX]; /* a .kbt file of the zero pattern; empty if none */
} reply_probe_input;

/* An input's declared constraints (the problem's KBV_INPUTS; docs/correctness.md). */
typedef struct reply_decl {
    int present;
    int fixed, symmetric, positive;
    int has_range, has_int_range;
    double range[2], int_range[2];
} reply_decl;

typedef struct reply_kernel_ref {
    char name[256];
    long long ns_after_stop;
} reply_kernel_ref;

typedef struct reply_trial {
    long long seed;
    reply_values ref, cand;
} reply_trial;

typedef struct kbv_reply {
    char op[24];
    int ok;
    char nonce[17]; /* the command's nonce, echoed (16 hex digits) */
    /* a failure (ok false) */
    char kind[24];
    char message[2048];
    char *traceback; /* may be NULL */
    reply_guard *guard;
    int nguard;
    reply_time times[8];
    int ntimes;
    /* hello */
    struct {
        char python[64], torch[64], gpu[128], device[16];
        long long pid;
    } hello;
    /* load_problem: per input index (0..ndecl-1), its declaration */
    reply_decl *decl;
    int ndecl;
    json_t *constraints; /* the declarations as JSON, rebuilt (for the result) */
    /* inspect */
    struct {
        int nfindings;
        struct {
            kbv_finding_id id;
            long long line;
            char detail[512];
        } * findings;
        int nkernels; /* kernel names the source defines: __global__ then @triton.jit */
        char (*kernels)[256];
        json_t *doc; /* the report, rebuilt (result "inspect", kbv inspect) */
    } inspect;
    /* build */
    int has_persistent, has_torch_persistent;
    long long persistent_bytes, torch_persistent_bytes;
    /* probe */
    reply_probe_input *inputs;
    int ninputs;
    json_t *probe_doc; /* the probe's findings, rebuilt (result "inputs.probe") */
    /* gen_inputs: fingerprints; forward: inputs_after; memo_probe: before/after */
    reply_prints prints, after, before;
    /* forward, bench (save_prefix) */
    reply_values values;
    int has_count;
    long long count; /* forward with save false: outputs kept in the worker */
    reply_fact *facts;
    int nfacts;
    int naliases;
    int (*aliases)[2]; /* [output, input] pairs sharing memory */
    /* save_state */
    reply_values state;
    /* partial_probe: the outputs before (in values) and after the rewrite, the input rewritten */
    reply_values after_values;
    long long input;
    /* load_state */
    int matched, loaded;
    long long differing;
    /* redraw_weights (its state in state): entries given new values; floating ones kept */
    long long redrawn, kept;
    /* standard */
    reply_trial *trials;
    int ntrials;
    int has_time;
    double time_ref_ms, time_cand_ms;
    long long time_trials;
    /* bench_setup */
    int fresh; /* bench_setup: fresh values can be drawn; bench: the sample ran on them */
    int has_peak_gbs;
    double peak_gbs;
    long long slots;
    /* bench */
    double *ms;
    int nms;
    long long throttled, cushion_expired, held, graphs, set;
    int has_set, fresh_failed, has_warmup_last;
    double warmup_last_ms;
    /* audit */
    struct {
        int markers;
        long long dropped, kernels_per_call, authored_kernels, after_stop, other_stream, peak_bytes;
        long long authored_ns, library_ns; /* GPU time of the call's kernels the candidate defines, of the others */
        int has_torch_peak;
        long long torch_peak_bytes;
        reply_kernel_ref first_after_stop; /* name empty when none */
        json_t *doc;                       /* the whole audit, rebuilt (result "audit") */
    } audit;
} kbv_reply;

/* Decode msg, the reply to command op (one of proto_commands). Returns 0, or -1 with err
 * saying which field broke which rule (*r is then freed and zeroed). Never keeps msg. */
int reply_decode(const char *op, const json_t *msg, kbv_reply *r, kbv_err *err);
/* The hello a worker sends unasked on start. */
int reply_decode_hello(const json_t *msg, kbv_reply *r, kbv_err *err);
void reply_free(kbv_reply *r);

/* Descriptors as JSON again (kbv's own files: the reference cache's index; load_state). */
json_t *reply_values_to_json(const reply_values *v);
int reply_values_from_json(const json_t *a, reply_values *v, kbv_err *err);
void reply_values_free(reply_values *v);
int reply_values_copy(reply_values *dst, const reply_values *src);

json_t *reply_prints_to_json(const reply_prints *p);
int reply_prints_from_json(const json_t *a, reply_prints *p, kbv_err *err);
void reply_prints_free(reply_prints *p);
int reply_prints_equal(const reply_prints *a, const reply_prints *b);

/* The reply fields the decoder knows for op (NULL-terminated; common ones under op "*"), for
 * the documentation test. */
const char *const *reply_fields(const char *op);

#endif
