/* test_detect.c -- value_cache_gap (detect.c), detect_value_cache's rule: a content cache (fast
 * on values it has seen, slow on new ones) shows the gap; an honest kernel, fast or slow alike on
 * both kinds, does not; a burst of noise over four of five seen rounds shows it at five rounds of
 * each and no longer once five more clean rounds of each are in (the confirmation timing.c runs);
 * fewer than the rounds asked for, or rounds with no time, give no gap. */
#include <string.h>

#include "check.h"
#include "evalctx.h"

enum { N = 64 };
static double ref[N], cand[N];
static unsigned char fresh[N];
static int n;

/* One round: kind 0 on seen values, 1 on new ones; the reference's and the candidate's ms. */
static void round_(int kind, double ref_ms, double cand_ms) {
    ref[n] = ref_ms, cand[n] = cand_ms, fresh[n] = (unsigned char)kind, n++;
}

static int gap(int min, double sp[2], int m[2]) { return value_cache_gap(ref, cand, fresh, n, min, sp, m); }

int main(void) {
    double sp[2];
    int m[2];

    /* A content cache: 60x on seen values, 0.8x on new ones, interleaved as timing runs them. */
    n = 0;
    for (int i = 0; i < 5; i++) round_(0, 6.0 + 0.1 * i, 0.1), round_(1, 0.8, 1.0 + 0.01 * i);
    CHECK(gap(VALUE_CACHE_ROUNDS, sp, m) == 1);
    CHECK(m[0] == 5 && m[1] == 5);
    CHECK_NEAR(sp[0], 62.0, 1e-9);
    CHECK_NEAR(sp[1], 0.8 / 1.02, 1e-9);
    /* and it stays one through the confirmation's ten of each */
    for (int i = 0; i < 5; i++) round_(0, 6.0, 0.1), round_(1, 0.8, 1.0);
    CHECK(gap(VALUE_CACHE_ROUNDS, sp, m) == 1);
    CHECK(m[0] == 10 && m[1] == 10);

    /* Fewer rounds than asked for: no gap, but the medians are there. */
    n = 0;
    for (int i = 0; i < 4; i++) round_(0, 6.0, 0.1), round_(1, 0.8, 1.0);
    CHECK(gap(VALUE_CACHE_ROUNDS, sp, m) == 0);
    CHECK(m[0] == 4 && m[1] == 4);
    CHECK_NEAR(sp[0], 60.0, 1e-9);
    CHECK(gap(4, sp, m) == 1);

    /* An honest kernel: the same speed on both kinds, up to noise. */
    n = 0;
    for (int i = 0; i < 10; i++) round_(i % 2, 1.0, 0.5 + 0.02 * (i % 3));
    CHECK(gap(VALUE_CACHE_ROUNDS, sp, m) == 0);
    CHECK(m[0] == 5 && m[1] == 5);

    /* Data-dependent speed is no gap either: both kinds come from the same distribution. */
    n = 0;
    for (int i = 0; i < 10; i++) round_(i % 2, 1.0, i % 4 < 2 ? 0.3 : 0.9);
    CHECK(gap(VALUE_CACHE_ROUNDS, sp, m) == 0);

    /* A burst of noise: the reference slowed in four of the five seen rounds (the CPU clock's
     * false positive of hacks.md). It shows the gap at five of each... */
    n = 0;
    for (int i = 0; i < 5; i++) round_(0, i < 4 ? 2.0 : 1.0, 1.0), round_(1, 1.0, 1.0);
    CHECK(gap(VALUE_CACHE_ROUNDS, sp, m) == 1);
    /* ...and not over ten of each, the five more clean. */
    for (int i = 0; i < 5; i++) round_(0, 1.0, 1.0), round_(1, 1.0, 1.0);
    CHECK(gap(VALUE_CACHE_ROUNDS, sp, m) == 0);
    CHECK(m[0] == 10 && m[1] == 10);
    CHECK_NEAR(sp[0], 1.0, 1e-9);

    /* Rounds without a time on either arm are left out. */
    n = 0;
    for (int i = 0; i < 5; i++) round_(0, 6.0, 0.1), round_(1, 0.8, 1.0);
    round_(1, 0, 1.0), round_(1, 5.0, 0), round_(0, -1, 1.0);
    CHECK(gap(VALUE_CACHE_ROUNDS, sp, m) == 1);
    CHECK(m[0] == 5 && m[1] == 5);

    /* No rounds at all. */
    n = 0;
    CHECK(gap(VALUE_CACHE_ROUNDS, sp, m) == 0);
    CHECK(m[0] == 0 && m[1] == 0 && sp[0] == 0 && sp[1] == 0);

    CHECK_DONE("test_detect");
}
