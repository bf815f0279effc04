/* test_stats.c -- stats.c against known answers: R's type-7 quantiles, bootstrap coverage
 * and reproducibility, and each way the stopping rule can end. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "stats.h"
#include "util.h"

int main(void) {
    double a[] = {7, 1, 3, 5, 9};
    CHECK(stats_median(a, 5) == 5);
    double b[] = {4, 1, 3, 2};
    CHECK(stats_median(b, 4) == 2.5);
    /* R: quantile(c(1,2,3,4), c(.25,.75), type = 7) -> 1.75 3.25 */
    CHECK_NEAR(stats_quantile(b, 4, 0.25), 1.75, 1e-12);
    CHECK_NEAR(stats_quantile(b, 4, 0.75), 3.25, 1e-12);
    /* R: quantile(c(1,3,5,7,9), 0.1, type = 7) -> 1.8 */
    CHECK_NEAR(stats_quantile(a, 5, 0.1), 1.8, 1e-12);
    CHECK(stats_quantile(a, 5, 0) == 1 && stats_quantile(a, 5, 1) == 9);
    CHECK(isnan(stats_median(a, 0)));
    CHECK(a[0] == 7); /* input untouched */
    double c[] = {2, 4, 4, 4, 5, 5, 7, 9};
    CHECK_NEAR(stats_mean(c, 8), 5, 1e-12);
    CHECK_NEAR(stats_rel_stddev(c, 8), sqrt(32.0 / 7) / 5, 1e-12);

    /* Bootstrap: a sample from U(0.9, 1.1) of 400; the CI brackets the sample median, is
     * narrow, and the same seed gives the same interval. */
    enum { N = 400 };
    double x[N];
    uint64_t s = 1;
    for (int i = 0; i < N; i++) s = kbv_mix64(s), x[i] = 0.9 + 0.2 * (double)(s >> 11) / 9007199254740992.0;
    double lo, hi, lo2, hi2, med = stats_median(x, N);
    CHECK(stats_bootstrap_median_ci(x, N, 1000, 0.95, 42, &lo, &hi) == 0);
    CHECK(lo < med && med < hi && hi - lo < 0.04 && hi - lo > 0.005);
    CHECK(stats_bootstrap_median_ci(x, N, 1000, 0.95, 42, &lo2, &hi2) == 0 && lo2 == lo && hi2 == hi);
    /* Coverage: over 200 samples from the same distribution (true median 1.0), a 95% CI
     * misses the truth rarely. */
    int covered = 0;
    for (int rep = 0; rep < 200; rep++) {
        for (int i = 0; i < 101; i++) s = kbv_mix64(s), x[i] = 0.9 + 0.2 * (double)(s >> 11) / 9007199254740992.0;
        stats_bootstrap_median_ci(x, 101, 300, 0.95, (uint64_t)rep, &lo, &hi);
        covered += lo <= 1.0 && 1.0 <= hi;
    }
    CHECK(covered >= 180 && covered <= 200);
    /* Geometric mean CI of {1, 4}-ish data brackets 2. */
    double g[] = {1, 4, 1, 4, 1, 4, 1, 4, 2, 2};
    CHECK(stats_bootstrap_geomean_ci(g, 10, 500, 0.95, 7, &lo, &hi) == 0 && lo < 2 && hi > 2);
    double bad[] = {1, 0};
    CHECK(stats_bootstrap_geomean_ci(bad, 2, 10, 0.95, 7, &lo, &hi) == -1);

    /* The stopping rule. */
    stats_stop_rule r = {.min_samples = 10, .max_samples = 1000, .min_time_s = 0.5, .max_time_s = 10, .target = 0.005};
    double t[1000], noise;
    for (int i = 0; i < 1000; i++) s = kbv_mix64(s), t[i] = 1.0 + 0.001 * (double)(s >> 11) / 9007199254740992.0;
    CHECK(stats_should_stop(&r, t, 5, 1.0, &noise) == STATS_CONTINUE);  /* too few samples */
    CHECK(stats_should_stop(&r, t, 50, 0.1, &noise) == STATS_CONTINUE); /* too little time */
    CHECK(stats_should_stop(&r, t, 50, 1.0, &noise) == STATS_STOP_CONVERGED && noise < 0.005);
    for (int i = 0; i < 1000; i++) s = kbv_mix64(s), t[i] = 1.0 + 2.0 * (double)(s >> 11) / 9007199254740992.0;
    CHECK(stats_should_stop(&r, t, 50, 1.0, &noise) == STATS_CONTINUE && noise > 0.005); /* noisy */
    CHECK(stats_should_stop(&r, t, 1000, 1.0, &noise) == STATS_STOP_MAX_SAMPLES);
    CHECK(stats_should_stop(&r, t, 50, 10.0, &noise) == STATS_STOP_MAX_TIME);
    /* Extended: past max_time_s, a CI wider than extend_target goes on, to extend_time_s. */
    CHECK(stats_time_cap(&r) == 10);
    r.extend_time_s = 30, r.extend_target = 0.01;
    CHECK(stats_time_cap(&r) == 30);
    CHECK(stats_should_stop(&r, t, 50, 10.0, &noise) == STATS_CONTINUE && noise > 0.01);
    CHECK(stats_should_stop(&r, t, 5, 12.0, &noise) == STATS_CONTINUE); /* too few to judge yet */
    CHECK(stats_should_stop(&r, t, 50, 30.0, &noise) == STATS_STOP_MAX_TIME);
    CHECK(stats_should_stop(&r, t, 50, 9.0, &noise) == STATS_CONTINUE); /* before max_time_s: target */
    /* spread 0.2: at 1000 samples the half-width is under 1% but over 0.5%, so max_time stops it */
    for (int i = 0; i < 1000; i++) s = kbv_mix64(s), t[i] = 1.0 + 0.2 * (double)(s >> 11) / 9007199254740992.0;
    CHECK(stats_should_stop(&r, t, 1000 - 1, 10.0, &noise) == STATS_STOP_MAX_TIME && noise > 0.005 && noise <= 0.01);
    CHECK(stats_should_stop(&r, t, 1000 - 1, 9.0, &noise) == STATS_CONTINUE);
    /* With resamples and seed given, the rule judges the very CI the result reports. */
    r.resamples = 2000, r.seed = 0xA1;
    (void)stats_should_stop(&r, t, 48, 10.0, &noise);
    CHECK(stats_bootstrap_median_ci(t, 48, 2000, 0.95, 0xA1, &lo, &hi) == 0 && fabs(noise - (hi - lo) / 2 / stats_median(t, 48)) < 1e-15);
    CHECK_DONE("test_stats");
}
