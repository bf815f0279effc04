/* stats.c -- medians, quantiles, bootstrap CIs and the stopping rule (see stats.h). */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile_sorted(const double *s, size_t n, double q) {
    if (n == 0) return NAN;
    if (q <= 0) return s[0];
    if (q >= 1) return s[n - 1];
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)floor(h);
    double frac = h - (double)lo;
    return lo + 1 < n ? s[lo] + frac * (s[lo + 1] - s[lo]) : s[lo];
}

double stats_quantile(const double *x, size_t n, double q) {
    if (n == 0) return NAN;
    double *s = malloc(n * sizeof *s);
    if (!s) return NAN;
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    double v = quantile_sorted(s, n, q);
    free(s);
    return v;
}

double stats_median(const double *x, size_t n) { return stats_quantile(x, n, 0.5); }

double stats_mean(const double *x, size_t n) {
    if (n == 0) return NAN;
    double s = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s / (double)n;
}

double stats_rel_stddev(const double *x, size_t n) {
    if (n < 2) return 0;
    double m = stats_mean(x, n), ss = 0;
    for (size_t i = 0; i < n; i++) ss += (x[i] - m) * (x[i] - m);
    return m != 0 ? sqrt(ss / (double)(n - 1)) / fabs(m) : 0;
}

/* Uniform index in [0, n) from a SplitMix64 stream. */
static size_t draw(uint64_t *state, size_t n) {
    *state += 0x9e3779b97f4a7c15ULL;
    uint64_t z = kbv_mix64(*state);
    return (size_t)(((unsigned __int128)z * n) >> 64);
}

static int bootstrap(const double *x, size_t n, int B, double level, uint64_t seed, int geo, double *lo, double *hi) {
    if (n == 0 || B < 1) return -1;
    double *stat = malloc((size_t)B * sizeof *stat), *res = malloc(n * sizeof *res);
    if (!stat || !res) {
        free(stat), free(res);
        return -1;
    }
    uint64_t st = seed;
    for (int b = 0; b < B; b++) {
        if (geo) {
            double acc = 0;
            for (size_t i = 0; i < n; i++) acc += log(x[draw(&st, n)]);
            stat[b] = exp(acc / (double)n);
        } else {
            for (size_t i = 0; i < n; i++) res[i] = x[draw(&st, n)];
            qsort(res, n, sizeof *res, cmp_double);
            stat[b] = quantile_sorted(res, n, 0.5);
        }
    }
    qsort(stat, (size_t)B, sizeof *stat, cmp_double);
    *lo = quantile_sorted(stat, (size_t)B, (1 - level) / 2);
    *hi = quantile_sorted(stat, (size_t)B, (1 + level) / 2);
    free(stat), free(res);
    return 0;
}

int stats_bootstrap_median_ci(const double *x, size_t n, int B, double level, uint64_t seed, double *lo, double *hi) {
    return bootstrap(x, n, B, level, seed, 0, lo, hi);
}

int stats_bootstrap_geomean_ci(const double *x, size_t n, int B, double level, uint64_t seed, double *lo, double *hi) {
    for (size_t i = 0; i < n; i++)
        if (!(x[i] > 0)) return -1;
    return bootstrap(x, n, B, level, seed, 1, lo, hi);
}

double stats_time_cap(const stats_stop_rule *r) { return r->extend_time_s > r->max_time_s ? r->extend_time_s : r->max_time_s; }

stats_stop stats_should_stop(const stats_stop_rule *r, const double *x, size_t n, double elapsed, double *noise) {
    *noise = INFINITY;
    if (n >= r->max_samples) return STATS_STOP_MAX_SAMPLES;
    int extend = r->extend_time_s > r->max_time_s;
    if (elapsed >= stats_time_cap(r)) return STATS_STOP_MAX_TIME;
    /* past max_time_s here only when extending: too few samples yet to judge the CI */
    if (n < r->min_samples || n < 2 || elapsed < r->min_time_s) return STATS_CONTINUE;
    double lo, hi, med = stats_median(x, n);
    int same = r->resamples > 0 && n <= 400;
    if (stats_bootstrap_median_ci(x, n, same ? r->resamples : 200, 0.95, same ? r->seed : 0x5eed ^ n, &lo, &hi) < 0 || med == 0)
        return elapsed >= r->max_time_s ? STATS_STOP_MAX_TIME : STATS_CONTINUE;
    *noise = (hi - lo) / 2 / fabs(med);
    if (*noise <= r->target) return STATS_STOP_CONVERGED;
    if (elapsed >= r->max_time_s && (!extend || *noise <= r->extend_target)) return STATS_STOP_MAX_TIME;
    return STATS_CONTINUE;
}
