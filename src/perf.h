/* perf.h -- summaries of timing samples (issue #4).
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

#endif
