/* audit.h -- kbv-worker's CUPTI audit: every kernel a call launched and every device
 * allocation it made (docs/timing.md, "Audit").
 *
 * audit_start() runs before torch is imported: it registers CUPTI's activity buffers and
 * records device allocations (MEMORY2) for the whole life of the worker, so the memory
 * footprint is known at any moment. Kernel tracing is on only between audit_begin() and
 * audit_end(), which bracket one call with marker kernels on the timer's stream; it stays
 * out of the timed samples (tracing costs about 1 us per launch).
 * Footprint = live non-pool device allocations + the latest size of every stream-ordered
 * pool (pool suballocations are not physical memory).
 * Built without CUPTI, audit_available() is 0 and the others fail.
 */
#ifndef KBV_GPU_AUDIT_H
#define KBV_GPU_AUDIT_H

#include <stdint.h>

#include "../util.h"

typedef struct audit_kernel {
    char name[256];      /* demangled where possible */
    uint32_t stream;     /* CUPTI stream id */
    uint64_t start, end; /* ns, CUPTI's clock */
    int graph;           /* launched from a CUDA graph */
} audit_kernel;

typedef struct audit_report {
    audit_kernel *k; /* the kernels recorded in the window, markers excluded */
    int nk;
    int markers;         /* both marker kernels were recorded (else the trace is not trustworthy) */
    uint32_t own_stream; /* the timer stream's CUPTI id (from the begin marker) */
    uint64_t begin_ns;   /* end of the begin marker */
    uint64_t empty_ns;   /* the begin marker's own duration: an empty kernel's device time */
    uint64_t stop_ns;    /* start of the end marker: the call's stop */
    uint64_t dropped;    /* records CUPTI dropped since audit_start */
    long long mem_base;  /* device footprint when the window opened, bytes */
    long long mem_peak;  /* highest footprint inside the window, bytes */
    int allocations;     /* device allocations inside the window */
} audit_report;

int audit_available(void);
int audit_start(kbv_err *err);
/* Device-wide synchronize, then the footprint now. */
int audit_footprint(long long *bytes, kbv_err *err);
int audit_begin(uintptr_t stream, kbv_err *err);
int audit_end(uintptr_t stream, audit_report *r, kbv_err *err);
void audit_report_free(audit_report *r);

#endif
