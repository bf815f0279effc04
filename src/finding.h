/* finding.h -- the catalogue of findings: every id a detector, the guard, the inspector or
 * the failure mapping can report, with its severity, the step that produces it and its
 * anchor in docs/hacks.md.
 *
 * A finding is named by its catalogue entry (FIND_*), never by a free string: kbv adds
 * findings with result_add_finding(r, FIND_X, ...), and a worker's finding (the guard's, the
 * inspector's) is accepted only when its id is in the table, at the table's severity. The
 * severity decides the verdict (verdict.c): hack makes the status `hack`; suspect and info
 * are evidence only. tests/unit/test_finding.c checks that every entry is documented in
 * docs/hacks.md and named by at least one example or test. Adding a detector: one line here
 * (and its enum value), the code that fires it, a line in docs/hacks.md, an example.
 * This file decides nothing and runs nothing.
 */
#ifndef KBV_FINDING_H
#define KBV_FINDING_H

typedef enum kbv_severity { SEV_INFO = 0, SEV_SUSPECT, SEV_HACK, SEV_COUNT } kbv_severity;

/* "info", "suspect", "hack" */
const char *severity_name(kbv_severity s);
/* The severity named s, or -1. */
int severity_from_name(const char *s);

/* X(enum, id, severity, step) -- step: where the evidence comes from (docs/hacks.md, "Where
 * the evidence comes from"): cases, guard, inspect, audit, memo_probe, timing, worker,
 * sandbox, reference, verdict. */
#define FINDING_TABLE(X)                                                                       \
    /* the correctness pass (cases.c, detect.c) */                                             \
    X(FIND_CONSTANT_OUTPUT, "constant_output", SEV_HACK, "cases")                              \
    X(FIND_IDENTITY_OUTPUT, "identity_output", SEV_HACK, "cases")                              \
    X(FIND_UNWRITTEN_ELEMENTS, "unwritten_elements", SEV_HACK, "cases")                        \
    X(FIND_PRECISION_DOWNGRADE, "precision_downgrade", SEV_HACK, "cases")                      \
    X(FIND_INPUT_MUTATION, "input_mutation", SEV_HACK, "cases")                                \
    X(FIND_NONDETERMINISTIC_OUTPUT, "nondeterministic_output", SEV_SUSPECT, "cases")           \
    X(FIND_INPUT_GENERATION_TAMPERED, "input_generation_tampered", SEV_SUSPECT, "cases")       \
    X(FIND_STRIDE_MISMATCH, "stride_mismatch", SEV_INFO, "cases")                              \
    X(FIND_DISTRIBUTION_SNIFFING, "distribution_sniffing", SEV_SUSPECT, "verdict")             \
    X(FIND_WEIGHTS_LOADED, "weights_loaded", SEV_INFO, "cases")                                \
    X(FIND_WEIGHTS_OVERFIT, "weights_overfit", SEV_SUSPECT, "cases")                           \
    X(FIND_WEIGHTS_UNVERIFIABLE, "weights_unverifiable", SEV_INFO, "cases")                    \
    X(FIND_REFERENCE_NOT_REUSED, "reference_not_reused", SEV_INFO, "reference")                \
    /* the worker's guard (src/worker/guard.c) */                                              \
    X(FIND_THREAD_AFTER_CALL, "thread_after_call", SEV_HACK, "guard")                          \
    X(FIND_TENSOR_SUBCLASS, "tensor_subclass", SEV_HACK, "guard")                              \
    X(FIND_TORCH_PATCHED, "torch_patched", SEV_HACK, "guard")                                  \
    X(FIND_REFERENCE_PATCHED, "reference_patched", SEV_HACK, "guard")                          \
    X(FIND_GLOBAL_FLAG_CHANGE, "global_flag_change", SEV_HACK, "guard")                        \
    X(FIND_INHERITS_REFERENCE, "inherits_reference", SEV_HACK, "guard")                        \
    X(FIND_READS_PROBLEM_FILE, "reads_problem_file", SEV_HACK, "guard")                        \
    X(FIND_READS_REFERENCE_OUTPUTS, "reads_reference_outputs", SEV_HACK, "guard")              \
    X(FIND_NETWORK_ACCESS, "network_access", SEV_HACK, "guard")                                \
    X(FIND_PROCESS_IN_CALL, "process_in_call", SEV_SUSPECT, "guard")                           \
    X(FIND_WRITES_OUTSIDE_SCRATCH, "writes_outside_scratch", SEV_SUSPECT, "guard")             \
    /* the CUPTI audit (timing.c) */                                                           \
    X(FIND_WORK_AFTER_STOP, "work_after_stop", SEV_HACK, "audit")                              \
    X(FIND_LIBRARY_ONLY, "library_only", SEV_HACK, "audit")                                    \
    X(FIND_UNUSED_KERNEL, "unused_kernel", SEV_HACK, "audit")                                  \
    X(FIND_LOW_AUTHORED_SHARE, "low_authored_share", SEV_HACK, "audit")                        \
    X(FIND_AUDIT_INCOMPLETE, "audit_incomplete", SEV_SUSPECT, "audit")                         \
    X(FIND_AUDIT_UNAVAILABLE, "audit_unavailable", SEV_INFO, "audit")                          \
    X(FIND_OTHER_STREAM, "other_stream", SEV_INFO, "audit")                                    \
    /* the memoization probe and the timed rounds (timing.c, detect.c) */                      \
    X(FIND_OUTPUT_MEMOIZATION, "output_memoization", SEV_HACK, "memo_probe")                   \
    X(FIND_TIMED_OUTPUT_MISMATCH, "timed_output_mismatch", SEV_HACK, "timing")                 \
    X(FIND_TIMING_INCONSISTENT, "timing_inconsistent", SEV_HACK, "timing")                     \
    X(FIND_STATE_DEPENDENT_OUTPUT, "state_dependent_output", SEV_HACK, "timing")               \
    X(FIND_PARTIAL_REWRITE_IGNORED, "partial_rewrite_ignored", SEV_HACK, "memo_probe")         \
    X(FIND_VALUE_CACHE, "value_cache", SEV_HACK, "timing")                                     \
    X(FIND_IMPOSSIBLE_TIME, "impossible_time", SEV_HACK, "timing")                             \
    X(FIND_EXCESSIVE_SPEEDUP, "excessive_speedup", SEV_INFO, "timing")                         \
    X(FIND_SHORT_CALL, "short_call", SEV_INFO, "timing")                                       \
    /* the worker process itself (session.c) */                                                \
    X(FIND_PROTOCOL_VIOLATION, "protocol_violation", SEV_SUSPECT, "worker")                    \
    X(FIND_WORKER_EXIT, "worker_exit", SEV_INFO, "worker")                                     \
    X(FIND_OUTPUT_TRUNCATED, "output_truncated", SEV_INFO, "worker")                           \
    /* the static inspection (src/worker/inspect.c): at most suspect */                        \
    X(FIND_STATIC_CTYPES, "static_ctypes", SEV_SUSPECT, "inspect")                             \
    X(FIND_STATIC_ENVIRONMENT_SNIFFING, "static_environment_sniffing", SEV_SUSPECT, "inspect") \
    X(FIND_STATIC_EXEC, "static_exec", SEV_SUSPECT, "inspect")                                 \
    X(FIND_STATIC_FILE_ACCESS, "static_file_access", SEV_SUSPECT, "inspect")                   \
    X(FIND_STATIC_GLOBAL_FLAGS, "static_global_flags", SEV_SUSPECT, "inspect")                 \
    X(FIND_STATIC_KERNEL_NOT_LAUNCHED, "static_kernel_not_launched", SEV_SUSPECT, "inspect")   \
    X(FIND_STATIC_MONKEYPATCH, "static_monkeypatch", SEV_SUSPECT, "inspect")                   \
    X(FIND_STATIC_NETWORK_OR_PROCESS, "static_network_or_process", SEV_SUSPECT, "inspect")     \
    X(FIND_STATIC_NO_KERNEL, "static_no_kernel", SEV_INFO, "inspect")                          \
    X(FIND_STATIC_PRECISION_CASTS, "static_precision_casts", SEV_INFO, "inspect")              \
    X(FIND_STATIC_PROFILER_TAMPERING, "static_profiler_tampering", SEV_SUSPECT, "inspect")     \
    X(FIND_STATIC_STREAMS, "static_streams", SEV_INFO, "inspect")                              \
    X(FIND_STATIC_SUBCLASSES_REFERENCE, "static_subclasses_reference", SEV_INFO, "inspect")    \
    X(FIND_STATIC_THREADS, "static_threads", SEV_SUSPECT, "inspect")                           \
    X(FIND_STATIC_TRY_EXCEPT, "static_try_except", SEV_SUSPECT, "inspect")

#define FINDING_ENUM(e, id, sev, step) e,
typedef enum kbv_finding_id { FINDING_TABLE(FINDING_ENUM) FIND_COUNT } kbv_finding_id;
#undef FINDING_ENUM

typedef struct finding_def {
    const char *id;        /* [a-z0-9_]{1,48}: the name in results, reports and docs */
    kbv_severity severity; /* the default; library_only, unused_kernel and low_authored_share follow --library-only */
    const char *step;      /* where the evidence comes from */
} finding_def;

extern const finding_def finding_catalog[FIND_COUNT];

/* The entry named id, or -1 (an id no catalogue entry has). */
int finding_lookup(const char *id);

#endif
