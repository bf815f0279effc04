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
/* A summary of times made k times longer (a cap on the speedups over them, 1/cap). */
void perf_times_scale(kbv_times *t, double k);
/* A measured speedup and its CI times k (a cap); an unmeasured one is left as it is. */
void perf_ratio_scale(kbv_ratio *q, double k);
/* The speedup num/den: per-round ratios (rounds where either is missing, <= 0, are left out),
 * their median and a percentile-bootstrap 95% CI (2000 resamples, reproducible from seed). */
void perf_ratio(const double *num, const double *den, int n, uint64_t seed, kbv_ratio *out);

/* The library policy's threshold (docs/hacks.md, "Library policy"): a call whose authored
 * share is below it, with at least one authored kernel, is low_authored_share. */
#define PERF_AUTHORED_SHARE_MIN 0.1
/* The authored share of one call's GPU time (the CUPTI audit): authored_ns / (authored_ns +
 * library_ns), in [0, 1]; -1 when there is no kernel time to share (or a figure is negative). */
double perf_authored_share(long long authored_ns, long long library_ns);

/* kbv's own clock (timing.c stage_wall, docs/timing.md): what the batched wall-time speedup
 * says of the event-timed one. predicted is perf_wall_predict's (below); host_share is the
 * candidate worker's CPU time per call (kbv reads it from /proc) over its wall time per call.
 * event_speedup is the claim judged (timing.c passes the lower end of the event speedup's 95%
 * CI). Consistent (within PERF_WALL_SLACK of
 * predicted): PERF_WALL_OK. Otherwise, where kbv's clock sees no speedup and the candidate's
 * worker was busy on the CPU for at least PERF_WALL_HOST_SHARE of each call (host-bound: a
 * candidate whose Python or launches cost more than its kernels, more so on a loaded machine,
 * which the events' cushion hides): PERF_WALL_CAP_HOST, capped at kbv's clock with no slack.
 * Where it sees none, the worker mostly waited (the GPU was busy for as long as the
 * reference's) and the claim is above 1.25: PERF_WALL_HACK. Otherwise (kbv's clock sees a
 * speedup, or the claim is 1.25 or less, which noise alone makes): PERF_WALL_CAP, capped at
 * PERF_WALL_SLACK times kbv's clock. A cap: the speedups times *cap = (slack x) wall_speedup
 * over the larger of predicted and event_value (the point speedup the caps multiply), so the
 * capped event_value is at most (slack times) wall_speedup: no claim, confident or not,
 * stays above what kbv's clock sees. */
#define PERF_WALL_SLACK 2.0
#define PERF_WALL_HOST_SHARE 0.5
/* What kbv's clock should see, from the event figures: (o + t_ref) / (o + t_cand), o the empty
 * kernel's time per call, t_cand the smaller of the candidate's event median and t_ref / value
 * (value: the published event speedup, the median of per-round ratios). A forger whose medians
 * land honest while its per-round ratios do not is judged by what it publishes. 0 when a figure
 * is missing. */
double perf_wall_predict(double overhead, double t_ref, double t_cand, double value);
typedef enum { PERF_WALL_OK, PERF_WALL_CAP, PERF_WALL_CAP_HOST, PERF_WALL_HACK } perf_wall_rule;
perf_wall_rule perf_wall_judge(double event_speedup, double event_value, double wall_speedup, double predicted, double host_share, double *cap);

#endif
