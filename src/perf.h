/* perf.h -- summaries of timing samples (issue #4), and the audit's authored share (#21).
 * Pure functions: no I/O, no clocks; timing.c drives the workers.
 */
#ifndef KBV_PERF_H
#define KBV_PERF_H

#include <jansson.h>
#include <stdint.h>

#include "result.h"

/* Median, quartiles and mean of the positive samples (ms; a missing sample is 0); none gives
 * an empty kbv_times (n == 0). */
void perf_times(const double *ms, int n, kbv_times *out);
/* The speedup num/den: per-round ratios (rounds where either is missing, <= 0, are left out),
 * their median and a percentile-bootstrap 95% CI (2000 resamples, reproducible from seed). */
void perf_ratio(const double *num, const double *den, int n, uint64_t seed, kbv_ratio *out);

/* The library policy's threshold (docs/hacks.md, "Library policy"): a call whose authored
 * share is below it, with at least one authored kernel, is low_authored_share. */
#define PERF_AUTHORED_SHARE_MIN 0.1
/* The authored share of one call's GPU time (the CUPTI audit): authored_ns / (authored_ns +
 * library_ns), in [0, 1]; -1 when there is no kernel time to share (or a figure is negative). */
double perf_authored_share(long long authored_ns, long long library_ns);

#endif
