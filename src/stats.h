/* stats.h -- the statistics kbv reports: medians, quantiles, bootstrap confidence
 * intervals, and the noise-based stopping rule for timing (issue #4).
 *
 * Pure functions over arrays of doubles; no I/O, no clocks. Resampling uses a SplitMix64
 * stream seeded by the caller, so a result is reproducible from its seed.
 */
#ifndef KBV_STATS_H
#define KBV_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Quantile q in [0,1] of n values (R's type 7: linear between order statistics). The input
 * is not changed. Returns NAN for n == 0. */
double stats_quantile(const double *x, size_t n, double q);
double stats_median(const double *x, size_t n);
double stats_mean(const double *x, size_t n);
/* Sample standard deviation over the mean (0 when n < 2 or the mean is 0). */
double stats_rel_stddev(const double *x, size_t n);

/* Percentile bootstrap CI of the median: B resamples with replacement, the (1-level)/2 and
 * (1+level)/2 quantiles of their medians. Returns 0, or -1 when n == 0 or out of memory. */
int stats_bootstrap_median_ci(const double *x, size_t n, int B, double level, uint64_t seed, double *lo, double *hi);
/* The same for the geometric mean (the mean of logs, exponentiated); x must be positive. */
int stats_bootstrap_geomean_ci(const double *x, size_t n, int B, double level, uint64_t seed, double *lo, double *hi);

/* When to stop sampling: after min_samples and min_time_s, once the relative half-width of
 * the median's 95% CI is below target; in any case at max_samples, and at max_time_s -- unless
 * extend_time_s is above max_time_s and the half-width is still above extend_target: then
 * sampling goes on until it is, or until extend_time_s (so that a few long samples do not stop
 * at a CI too wide to publish). */
typedef struct stats_stop_rule {
    size_t min_samples, max_samples;
    double min_time_s, max_time_s; /* measured time spent in samples, seconds */
    double target;                 /* relative half-width, e.g. 0.005 */
    double extend_time_s;          /* 0: max_time_s is a hard cap */
    double extend_target;          /* relative half-width that max_time_s may not stop above */
    int resamples;                 /* bootstrap resamples up to 400 samples (0: 200 always) ... */
    uint64_t seed;                 /* ... and their seed: as the reported CI's, so that the rule
                                    * judges the very interval the result will show */
} stats_stop_rule;

typedef enum stats_stop { STATS_CONTINUE = 0, STATS_STOP_CONVERGED, STATS_STOP_MAX_SAMPLES, STATS_STOP_MAX_TIME } stats_stop;

/* The time at which the rule stops whatever the CI: extend_time_s when it extends, else max_time_s. */
double stats_time_cap(const stats_stop_rule *rule);

stats_stop stats_should_stop(const stats_stop_rule *rule, const double *samples, size_t n, double elapsed_s, double *noise);

#endif
