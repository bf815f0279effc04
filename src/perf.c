/* perf.c -- timing summaries and the authored share of a call's GPU time (see perf.h). */
#include "perf.h"

#include <stdlib.h>
#include <string.h>

#include "stats.h"

void perf_times(const double *ms, int n, kbv_times *out) {
    memset(out, 0, sizeof *out);
    double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    if (!x) return;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (ms[i] > 0) x[m++] = ms[i];
    if (m > 0) {
        out->n = m;
        out->median = stats_median(x, (size_t)m);
        out->q1 = stats_quantile(x, (size_t)m, 0.25);
        out->q3 = stats_quantile(x, (size_t)m, 0.75);
        out->mean = stats_mean(x, (size_t)m);
    }
    free(x);
}

void perf_times_scale(kbv_times *t, double k) { t->median *= k, t->q1 *= k, t->q3 *= k, t->mean *= k; }

void perf_ratio_scale(kbv_ratio *q, double k) {
    if (q->measured) q->value *= k, q->lo *= k, q->hi *= k;
}

void perf_ratio(const double *num, const double *den, int n, uint64_t seed, kbv_ratio *out) {
    memset(out, 0, sizeof *out);
    double *q = malloc((size_t)(n > 0 ? n : 1) * sizeof *q);
    if (!q) return;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (num[i] > 0 && den[i] > 0) q[m++] = num[i] / den[i];
    if (m > 0 && stats_bootstrap_median_ci(q, (size_t)m, 2000, 0.95, seed, &out->lo, &out->hi) == 0) {
        out->measured = 1;
        out->value = stats_median(q, (size_t)m);
    }
    free(q);
}

double perf_authored_share(long long authored_ns, long long library_ns) {
    if (authored_ns < 0 || library_ns < 0 || authored_ns + library_ns <= 0) return -1;
    return (double)authored_ns / (double)(authored_ns + library_ns);
}

double perf_wall_predict(double overhead, double t_ref, double t_cand, double value) {
    if (!(t_ref > 0 && t_cand > 0) || overhead < 0) return 0;
    if (value > 0 && t_ref / value < t_cand) t_cand = t_ref / value;
    return (overhead + t_ref) / (overhead + t_cand);
}

perf_wall_rule perf_wall_judge(double event_speedup, double event_value, double wall_speedup, double predicted, double host_share, double *cap) {
    *cap = 1;
    if (!(predicted > 0 && wall_speedup * PERF_WALL_SLACK < predicted)) return PERF_WALL_OK;
    /* The capped value is at most (twice, with slack) what kbv's clock sees: the consistency
     * alone would leave event_value / predicted times that, which the overhead in predicted
     * makes large for a forged tiny time. */
    double over = event_value > predicted ? event_value : predicted;
    if (wall_speedup < 1 && host_share >= PERF_WALL_HOST_SHARE) {
        *cap = wall_speedup / over;
        return PERF_WALL_CAP_HOST;
    }
    /* A hack needs a confident claim; a noisy one (a loaded machine, a short budget, or
     * reports made noisy on purpose) is capped all the same, never left as reported. */
    if (wall_speedup < 1 && event_speedup > 1.25) return PERF_WALL_HACK;
    *cap = PERF_WALL_SLACK * wall_speedup / over;
    return PERF_WALL_CAP;
}
