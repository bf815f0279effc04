/* test_tables.c -- tables.c against a fixture computed by hand: best-of-N with ties, failures,
 * a missing sample, a missing problem, a problem nobody solved, a degenerate problem (testified
 * by a superseded evaluation only), winners without memory; every metric of the paper, verified
 * and standard protocols, the four conditions and the per-problem shares; reading a result's
 * JSON; and the three text renderings. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "tables.h"

/* One evaluation of the fixture. pc/sp/fp/sc/hf: the paper's correct, speedup (TF32), speedup
 * (fp32), standard_correct, hidden failed; pk/pb: the paper's kernel/baseline peak bytes;
 * vp/vc/vs: verified present, correct, speedup; kk/kb: kbv's peak bytes (the verified and
 * standard arms'); stp/stc/sts: standard present, correct, speedup. */
typedef struct {
    const char *model, *prob;
    int level, sample, latest, degen;
    int pc;
    double sp, fp;
    int sc, hf;
    long long pk, pb;
    int vc;
    double vs;
    long long kk, kb;
    int stp, stc;
    double sts;
} row;

/* Problems: L1 p1a p1b p1c (p1c degenerate), L2 p2a p2b, L3 p3a. alpha runs levels 1-3 under the
 * paper and verified protocols (no standard); beta levels 1-2 under all three, and never p1b.
 * Row order puts sample 1 before sample 0 where two samples tie, so a tie must be broken by
 * the sample number, not the order. */
// clang-format off
static const row kRows[] = {
    /* model   prob  L  s lat dg pc  sp    fp  sc hf   pk    pb  vc  vs    kk   kb  stp stc sts */
    {"alpha", "p1c", 1, 0, 0, 1, 1, 4, 4, 1, 0, 10, 100, 1, 4, 10, 100, 0, 0, 0},        /* 1: superseded, says degenerate */
    {"alpha", "p1a", 1, 1, 1, 0, 1, 2, 4, 1, 0, 400, 200, 1, 3, 100, 300, 0, 0, 0},      /* 2 */
    {"alpha", "p1a", 1, 0, 1, 0, 1, 2, 4, 1, 0, 100, 200, 1, 1.5, 100, 100, 0, 0, 0},    /* 3 */
    {"alpha", "p1a", 1, 2, 1, 0, 0, 8, 16, 1, 1, -1, -1, 0, 0, -1, -1, 0, 0, 0},         /* 4: hidden failure */
    {"alpha", "p1b", 1, 0, 1, 0, 1, 0.5, 0.5, 1, 0, -1, 100, 0, 0, -1, -1, 0, 0, 0},     /* 5: no kernel memory; s1 missing */
    {"alpha", "p1b", 1, 2, 1, 0, 1, 0.25, 0.25, 1, 0, 50, 100, 0, 0, -1, -1, 0, 0, 0},   /* 6 */
    {"alpha", "p1c", 1, 0, 1, 0, 1, 4, 4, 1, 0, 10, 100, 1, 4, 10, 100, 0, 0, 0},        /* 7: degenerate problem */
    {"alpha", "p2a", 2, 0, 1, 0, 1, 4, 4, 1, 0, 100, 100, 0, 0, -1, -1, 0, 0, 0},        /* 8 */
    {"alpha", "p2a", 2, 1, 1, 0, 1, 1, 1, 1, 0, 50, 100, 0, 0, -1, -1, 0, 0, 0},         /* 9 */
    {"alpha", "p2a", 2, 2, 1, 0, 0, 8, 8, 1, 1, 1000, 100, 0, 0, -1, -1, 0, 0, 0},       /* 10: hidden failure */
    {"alpha", "p2b", 2, 0, 1, 0, 0, 0, 0, 0, 0, -1, -1, 1, 0.5, -1, -1, 0, 0, 0},        /* 11 */
    {"alpha", "p2b", 2, 1, 1, 0, 0, 0, 0, 0, 0, -1, -1, 0, 0, -1, -1, 0, 0, 0},          /* 12 */
    {"alpha", "p3a", 3, 0, 1, 0, 1, 1, 2, 1, 0, 100, 400, 0, 0, -1, -1, 0, 0, 0},        /* 13 */
    {"alpha", "p3a", 3, 1, 1, 0, 1, 0, 0, 1, 0, 800, 400, 0, 0, -1, -1, 0, 0, 0},        /* 14: correct, not timed */
    {"beta", "p1a", 1, 1, 1, 0, 0, 0, 0, 0, 0, -1, -1, 0, 0, 100, 200, 1, 1, 4},         /* 15 */
    {"beta", "p1a", 1, 0, 1, 0, 1, 0.5, 0.5, 1, 0, 300, 200, 0, 0, 300, 200, 1, 1, 4},   /* 16 */
    {"beta", "p1c", 1, 0, 1, 0, 1, 8, 8, 1, 0, 10, 100, 1, 8, 10, 100, 1, 1, 8},         /* 17: degenerate problem */
    {"beta", "p2a", 2, 0, 1, 0, 1, 2, 2, 1, 0, 100, 300, 0, 0, 100, 300, 1, 0, 0},       /* 18 */
    {"beta", "p2a", 2, 1, 1, 0, 1, 0.5, 0.5, 1, 0, 200, 100, 1, 2, 400, 100, 1, 0, 0},   /* 19 */
    {"beta", "p2b", 2, 0, 1, 0, 1, 4, 16, 1, 0, -1, -1, 0, 0, -1, -1, 1, 1, 0},          /* 20: standard correct, not timed */
};
// clang-format on
enum { NROWS = sizeof kRows / sizeof kRows[0] };

static void fill(tables_eval *e, const row *r, int i) {
    memset(e, 0, sizeof *e);
    snprintf(e->model, sizeof e->model, "%s", r->model);
    snprintf(e->problem, sizeof e->problem, "sha-%s", r->prob);
    snprintf(e->name, sizeof e->name, "%s", r->prob);
    snprintf(e->candidate, sizeof e->candidate, "cand%d", i + 1);
    e->level = r->level, e->sample = r->sample, e->latest = r->latest;
    e->arm[TABLES_PAPER] = (tables_arm){1, r->pc, r->sp, r->fp, r->pk, r->pb};
    e->std_correct = r->sc, e->hidden_failed = r->hf;
    e->arm[TABLES_VERIFIED] = (tables_arm){1, r->vc, r->vs, 0, r->kk, r->kb};
    e->arm[TABLES_STANDARD] = (tables_arm){r->stp, r->stc, r->sts, 0, r->kk, r->kb};
    if (r->degen) e->degenerate = 1, e->degenerate_has_value = 1, e->degenerate_value = 0, e->degenerate_cases = 3;
    else e->degenerate_cases = -1;
}

/* The value at a '/'-separated path; NAN where absent or not a number. */
static const json_t *at(const json_t *t, const char *path) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *s = NULL, *k = strtok_r(buf, "/", &s); k && t; k = strtok_r(NULL, "/", &s)) t = json_object_get(t, k);
    return t;
}
static double v(const json_t *t, const char *path) {
    const json_t *x = at(t, path);
    return json_is_number(x) ? json_number_value(x) : NAN;
}
static int isnull(const json_t *t, const char *path) { return json_is_null(at(t, path)); }

/* The metrics of one group: n, samples, correct, timed, speedup (NAN: null), fast_p at 0, 0.5,
 * 0.8, 1, 1.5, 2, mem_n, mem_eff, mem_efficient, mem_eff_pct, mem_raise n, raised, share. */
typedef struct {
    int n, samples, correct, timed;
    double speedup, fast[6];
    int mem_n;
    double mem_eff;
    int eff;
    int rn, raised;
} want;

static void check_group(const json_t *t, const char *base, const want *w) {
    static const char *const fp[6] = {"0", "0.5", "0.8", "1", "1.5", "2"};
    char p[256];
#define AT(s) (snprintf(p, sizeof p, "%s/%s", base, s), p)
    if (!json_is_object(at(t, base))) {
        CHECK(!"group missing");
        fprintf(stderr, "  missing: %s\n", base);
        return;
    }
    int f0 = check_failures;
    CHECK(v(t, AT("n")) == w->n);
    CHECK(v(t, AT("samples")) == w->samples);
    CHECK(v(t, AT("correct")) == w->correct);
    CHECK_NEAR(v(t, AT("correctness")), (double)w->correct / w->n, 1e-9);
    CHECK(v(t, AT("timed")) == w->timed);
    if (isnan(w->speedup)) CHECK(isnull(t, AT("speedup")));
    else CHECK_NEAR(v(t, AT("speedup")), w->speedup, 1e-9);
    for (int k = 0; k < 6; k++) {
        char q[300];
        snprintf(q, sizeof q, "%s/fast_p/%s", base, fp[k]);
        CHECK_NEAR(v(t, q), w->fast[k], 1e-9);
    }
    CHECK(v(t, AT("mem_n")) == w->mem_n);
    if (isnan(w->mem_eff)) CHECK(isnull(t, AT("mem_eff")));
    else CHECK_NEAR(v(t, AT("mem_eff")), w->mem_eff, 1e-9);
    CHECK(v(t, AT("mem_efficient")) == w->eff);
    CHECK_NEAR(v(t, AT("mem_eff_pct")), (double)w->eff / w->n, 1e-9);
    CHECK(v(t, AT("mem_raise/n")) == w->rn);
    CHECK(v(t, AT("mem_raise/raised")) == w->raised);
    if (w->rn == 0) CHECK(isnull(t, AT("mem_raise/share")));
    else CHECK_NEAR(v(t, AT("mem_raise/share")), (double)w->raised / w->rn, 1e-9);
#undef AT
    if (check_failures != f0) fprintf(stderr, "  in group %s\n", base);
}

/* The decomposition of one group: n, then speedup (NAN: null) and solved per condition. */
static void check_dec(const json_t *t, const char *base, int n, const double sp[4], const int solved[4]) {
    static const char *const cond[4] = {"fp32_standard", "fp32_hidden", "tf32_standard", "tf32_hidden"};
    char p[256];
    int f0 = check_failures;
    snprintf(p, sizeof p, "%s/n", base);
    CHECK(v(t, p) == n);
    for (int k = 0; k < 4; k++) {
        snprintf(p, sizeof p, "%s/%s/speedup", base, cond[k]);
        if (isnan(sp[k])) CHECK(isnull(t, p));
        else CHECK_NEAR(v(t, p), sp[k], 1e-9);
        snprintf(p, sizeof p, "%s/%s/solved", base, cond[k]);
        CHECK(v(t, p) == solved[k]);
    }
    if (check_failures != f0) fprintf(stderr, "  in decomposition %s\n", base);
}

/* The per-problem shares of one level: n, then tf32_affected, hidden_affected, tf32_only,
 * hidden_only, both, neither (counts; shares = count / n). */
static void check_shares(const json_t *t, const char *base, int n, const int k[6]) {
    static const char *const key[6] = {"tf32_affected", "hidden_affected", "tf32_only", "hidden_only", "both", "neither"};
    char p[256];
    int f0 = check_failures;
    snprintf(p, sizeof p, "%s/n", base);
    CHECK(v(t, p) == n);
    for (int i = 0; i < 6; i++) {
        snprintf(p, sizeof p, "%s/%s/count", base, key[i]);
        CHECK(v(t, p) == k[i]);
        snprintf(p, sizeof p, "%s/%s/share", base, key[i]);
        CHECK_NEAR(v(t, p), (double)k[i] / n, 1e-9);
    }
    if (check_failures != f0) fprintf(stderr, "  in shares %s\n", base);
}

static const json_t *best_of(const json_t *t, const char *proto, const char *model, const char *prob) {
    size_t i;
    const json_t *b;
    json_array_foreach(at(t, proto), i, b) if (strcmp(json_string_value(json_object_get(b, "model")), model) == 0 &&
                                               strcmp(json_string_value(json_object_get(b, "problem")), prob) == 0) return b;
    return NULL;
}

static char *render(const json_t *t, const char *fmt) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    kbv_err err;
    int rc = tables_write(t, fmt, f, &err);
    fclose(f);
    if (rc < 0) free(buf), buf = NULL;
    return buf;
}

int main(void) {
    tables_eval ev[NROWS];
    for (int i = 0; i < NROWS; i++) fill(&ev[i], &kRows[i], i);
    json_t *t = tables_build(ev, NROWS);
    CHECK(t != NULL);
    if (!t) CHECK_DONE("test_tables");

    /* The problems: p1c is degenerate (row 1, superseded, says so; its latest rows do not), so
     * 5 remain: L1 p1a p1b, L2 p2a p2b, L3 p3a. */
    CHECK(v(t, "problems/n") == 5 && v(t, "problems/degenerate") == 1);
    CHECK(v(t, "problems/levels/1") == 2 && v(t, "problems/levels/2") == 2 && v(t, "problems/levels/3") == 1);
    const json_t *d = json_array_get(at(t, "degenerate"), 0);
    CHECK(json_array_size(at(t, "degenerate")) == 1);
    CHECK_STR(json_string_value(json_object_get(d, "problem")), "p1c");
    CHECK_STR(json_string_value(json_object_get(d, "id")), "sha-p1c");
    CHECK(v(d, "level") == 1 && v(d, "value") == 0 && v(d, "cases") == 3);
    CHECK_STR(json_string_value(at(d, "evidence/model")), "alpha");
    CHECK_STR(json_string_value(at(d, "evidence/candidate")), "cand1");
    CHECK(v(d, "evidence/sample") == 0);

    /* ---- paper protocol ----
     * alpha, best of N per problem (speed winner: correct, speedup > 0, fastest, lowest sample
     * on a tie):
     *   p1a rows 2,3 tie at 2 -> sample 0 (row 3) wins, memory 200/100 = 2 (row 2's would be
     *       0.5); row 4 (8x) failed the hidden tests. correct.
     *   p1b rows 5 (0.5), 6 (0.25) -> row 5, kernel memory missing. correct.
     *   p2a rows 8 (4), 9 (1); row 10 (8x) incorrect -> 4, memory 100/100 = 1 (not < baseline).
     *   p2b nothing correct.
     *   p3a row 13 (1x) wins (row 14 correct but untimed), memory 400/100 = 4.
     * all (levels 1-3, n 5): correct 4; speedup (2*0.5*4*1)^(1/4) = 4^(1/4) = sqrt(2);
     *   fast_p >0: 4/5, >0.5: {2,4,1} 3/5, >0.8: 3/5, >1: {2,4} 2/5, >1.5: 2/5, >2: {4} 1/5;
     *   memory of the winners {2, 1, 4}: mem_eff (2*1*4)^(1/3) = 2, efficient {2, 4}: 2 of 5;
     *   correct samples with memory: rows 2(400>200 up), 3, 6, 8, 9, 13, 14(800>400 up): 2 of 7;
     *   samples: 5 + 5 + 2 = 12.
     * L1 (n 2): correct 2, speedup sqrt(2*0.5) = 1, fast {1, .5, .5, .5, .5, 0}, mem {2}: 2,
     *   efficient 1; raise rows 2, 3, 6: 1 of 3; samples 5.
     * L2 (n 2): correct 1, speedup 4, fast all 1/2, mem {1}: 1, efficient 0; raise rows 8, 9:
     *   0 of 2; samples 5.
     * L3 (n 1): correct 1, speedup 1, fast {1, 1, 1, 0, 0, 0}, mem {4}: 4, efficient 1; raise
     *   rows 13, 14: 1 of 2; samples 2. */
    check_group(t, "protocols/paper/models/alpha/all", &(want){5, 12, 4, 4, sqrt(2), {0.8, 0.6, 0.6, 0.4, 0.4, 0.2}, 3, 2, 2, 7, 2});
    check_group(t, "protocols/paper/models/alpha/levels/1", &(want){2, 5, 2, 2, 1, {1, 0.5, 0.5, 0.5, 0.5, 0}, 1, 2, 1, 3, 1});
    check_group(t, "protocols/paper/models/alpha/levels/2", &(want){2, 5, 1, 1, 4, {0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, 1, 1, 0, 2, 0});
    check_group(t, "protocols/paper/models/alpha/levels/3", &(want){1, 2, 1, 1, 1, {1, 1, 1, 0, 0, 0}, 1, 4, 1, 2, 1});
    /* beta, levels 1-2 (n 4; p1b never attempted: a failure in the denominators):
     *   p1a row 16 (0.5), memory 200/300 = 2/3; row 15 incorrect.
     *   p2a rows 18 (2), 19 (0.5) -> 2, memory 300/100 = 3.
     *   p2b row 20 (4), no memory.
     * all: correct 3; speedup (0.5*2*4)^(1/3) = 4^(1/3); fast >0 3/4, >0.5 {2,4} 2/4, >0.8 2/4,
     *   >1 2/4, >1.5 2/4, >2 {4} 1/4; mem {2/3, 3}: sqrt(2), efficient {3}: 1 of 4; raise rows
     *   16 (up), 18, 19 (up): 2 of 3; samples 2 + 3 = 5.
     * L1 (n 2): correct 1, speedup 0.5, fast {.5, 0, 0, 0, 0, 0}, mem 2/3, efficient 0, raise
     *   row 16: 1 of 1, samples 2.
     * L2 (n 2): correct 2, speedup sqrt(8), fast {1, 1, 1, 1, 1, .5}, mem 3, efficient 1, raise
     *   rows 18, 19: 1 of 2, samples 3. */
    check_group(t, "protocols/paper/models/beta/all", &(want){4, 5, 3, 3, cbrt(4), {0.75, 0.5, 0.5, 0.5, 0.5, 0.25}, 2, sqrt(2), 1, 3, 2});
    check_group(t, "protocols/paper/models/beta/levels/1", &(want){2, 2, 1, 1, 0.5, {0.5, 0, 0, 0, 0, 0}, 1, 2.0 / 3, 0, 1, 1});
    check_group(t, "protocols/paper/models/beta/levels/2", &(want){2, 3, 2, 2, sqrt(8), {1, 1, 1, 1, 1, 0.5}, 1, 3, 1, 2, 1});
    CHECK(!at(t, "protocols/paper/models/beta/levels/3"));
    /* the winners, per (model, problem) */
    const json_t *b = best_of(t, "protocols/paper/best", "alpha", "p1a");
    CHECK(b && v(b, "sample") == 0 && v(b, "speedup") == 2 && v(b, "memory_ratio") == 2 && v(b, "samples") == 3 && v(b, "correct") == 2);
    b = best_of(t, "protocols/paper/best", "alpha", "p1b");
    CHECK(b && v(b, "sample") == 0 && v(b, "speedup") == 0.5 && isnull(b, "memory_ratio") && v(b, "samples") == 2);
    b = best_of(t, "protocols/paper/best", "alpha", "p2b");
    CHECK(b && isnull(b, "sample") && isnull(b, "speedup") && v(b, "correct") == 0);
    CHECK(!best_of(t, "protocols/paper/best", "beta", "p1b"));  /* never attempted */
    CHECK(!best_of(t, "protocols/paper/best", "alpha", "p1c")); /* degenerate */
    CHECK(json_array_size(at(t, "protocols/paper/best")) == 5 + 3);

    /* ---- verified protocol (kbv's memory) ----
     * alpha (levels 1-3, n 5): verified rows 2 (3x, memory 300/100 = 3), 3 (1.5x), 11 (0.5x, no
     *   memory). p1a -> row 2 (3x, 3), p2b -> 0.5 (none). correct 2; speedup sqrt(3*0.5);
     *   fast >0 2/5, >0.5 .. >2 {3}: 1/5; mem {3}: 3, efficient 1; raise rows 2 (100 vs 300),
     *   3 (100 vs 100): 0 of 2; samples 12.
     *   L1: correct 1, speedup 3, fast all 1/2, mem 3, efficient 1, raise 0 of 2, samples 5.
     *   L2: correct 1 (p2b), speedup 0.5, fast {.5, 0...}, no memory, raise 0 of 0 (null), samples 5.
     *   L3: nothing: speedup null, fast 0, samples 2.
     * beta (levels 1-2, n 4): row 19 (2x, memory 100/400 = 0.25, raises) on p2a. correct 1;
     *   speedup 2; fast {1/4 x5, 0}; mem 0.25, efficient 0; raise 1 of 1; samples 5.
     *   L1: nothing, samples 2. L2: correct 1, speedup 2, fast {.5 x5, 0}, mem .25, raise 1 of 1,
     *   samples 3. */
    check_group(t, "protocols/verified/models/alpha/all", &(want){5, 12, 2, 2, sqrt(1.5), {0.4, 0.2, 0.2, 0.2, 0.2, 0.2}, 1, 3, 1, 2, 0});
    check_group(t, "protocols/verified/models/alpha/levels/1", &(want){2, 5, 1, 1, 3, {0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, 1, 3, 1, 2, 0});
    check_group(t, "protocols/verified/models/alpha/levels/2", &(want){2, 5, 1, 1, 0.5, {0.5, 0, 0, 0, 0, 0}, 0, NAN, 0, 0, 0});
    check_group(t, "protocols/verified/models/alpha/levels/3", &(want){1, 2, 0, 0, NAN, {0, 0, 0, 0, 0, 0}, 0, NAN, 0, 0, 0});
    check_group(t, "protocols/verified/models/beta/all", &(want){4, 5, 1, 1, 2, {0.25, 0.25, 0.25, 0.25, 0.25, 0}, 1, 0.25, 0, 1, 1});
    check_group(t, "protocols/verified/models/beta/levels/1", &(want){2, 2, 0, 0, NAN, {0, 0, 0, 0, 0, 0}, 0, NAN, 0, 0, 0});
    check_group(t, "protocols/verified/models/beta/levels/2", &(want){2, 3, 1, 1, 2, {0.5, 0.5, 0.5, 0.5, 0.5, 0}, 1, 0.25, 0, 1, 1});

    /* ---- standard protocol: beta only (alpha never ran it) ----
     * p1a rows 15 (s1), 16 (s0) tie at 4x -> sample 0 (row 16), memory 200/300 = 2/3 (row 15's
     *   would be 2); p2b row 20 correct, untimed; p2a incorrect. correct 2 of 4; speedup 4;
     *   fast {1/4 x6}; mem 2/3, efficient 0; raise rows 15 (100 vs 200), 16 (300 > 200 up): 1 of 2.
     *   L1: correct 1, speedup 4, fast all 1/2, mem 2/3, raise 1 of 2, samples 2.
     *   L2: correct 1 (untimed), speedup null, fast 0, no memory, raise 0 of 0, samples 3. */
    CHECK(!at(t, "protocols/standard/models/alpha"));
    check_group(t, "protocols/standard/models/beta/all", &(want){4, 5, 2, 1, 4, {0.25, 0.25, 0.25, 0.25, 0.25, 0.25}, 1, 2.0 / 3, 0, 2, 1});
    check_group(t, "protocols/standard/models/beta/levels/1", &(want){2, 2, 1, 1, 4, {0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, 1, 2.0 / 3, 0, 2, 1});
    check_group(t, "protocols/standard/models/beta/levels/2", &(want){2, 3, 1, 0, NAN, {0, 0, 0, 0, 0, 0}, 0, NAN, 0, 0, 0});

    /* ---- four conditions (paper fields) ----
     * best per problem [fp32+standard, fp32+hidden, TF32+standard, TF32+hidden]:
     *   alpha p1a: standard-correct rows 2, 3, 4 (fp32 4, 4, 16; TF32 2, 2, 8), correct rows 2, 3
     *              -> [16, 4, 8, 2]
     *   alpha p1b: [0.5, 0.5, 0.5, 0.5]; p2a: rows 8, 9, 10 -> [8, 4, 8, 4]; p2b: none;
     *   alpha p3a: row 13 (row 14 untimed) -> [2, 2, 1, 1]
     *   beta p1a: [0.5 x4]; p2a: [2 x4]; p2b: [16, 16, 4, 4]
     * alpha all (n 5, solved 4): fp32+std (16*0.5*8*2)^(1/4) = 128^(1/4) = 2^(7/4);
     *   fp32+hid (4*0.5*4*2)^(1/4) = 2; TF32+std (8*0.5*8*1)^(1/4) = 2^(5/4); TF32+hid (2*.5*4*1)^(1/4) = sqrt(2).
     * alpha L1 (n 2): sqrt(8), sqrt(2), sqrt(4) = 2, sqrt(1) = 1; L2 (n 2, solved 1): 8, 4, 8, 4;
     *   L3 (n 1): 2, 2, 1, 1.
     * beta all (n 4, solved 3): fp32 (0.5*2*16)^(1/3) = 16^(1/3) both; TF32 (0.5*2*4)^(1/3) = 4^(1/3).
     * beta L1 (n 2, solved 1): 0.5 x4; L2 (n 2, solved 2): fp32 sqrt(32), TF32 sqrt(8). */
    check_dec(t, "decomposition/models/alpha/all", 5, (double[]){pow(2, 1.75), 2, pow(2, 1.25), sqrt(2)}, (int[]){4, 4, 4, 4});
    check_dec(t, "decomposition/models/alpha/levels/1", 2, (double[]){sqrt(8), sqrt(2), 2, 1}, (int[]){2, 2, 2, 2});
    check_dec(t, "decomposition/models/alpha/levels/2", 2, (double[]){8, 4, 8, 4}, (int[]){1, 1, 1, 1});
    check_dec(t, "decomposition/models/alpha/levels/3", 1, (double[]){2, 2, 1, 1}, (int[]){1, 1, 1, 1});
    check_dec(t, "decomposition/models/beta/all", 4, (double[]){cbrt(16), cbrt(16), cbrt(4), cbrt(4)}, (int[]){3, 3, 3, 3});
    check_dec(t, "decomposition/models/beta/levels/1", 2, (double[]){0.5, 0.5, 0.5, 0.5}, (int[]){1, 1, 1, 1});
    check_dec(t, "decomposition/models/beta/levels/2", 2, (double[]){sqrt(32), sqrt(32), sqrt(8), sqrt(8)}, (int[]){2, 2, 2, 2});
    /* per problem:
     *   p1a TF32: alpha 8 <= 0.5 x 16 (equality counts); hidden: row 4 -> both
     *   p1b alpha 0.5 vs 0.5 -> neither
     *   p2a alpha 8 vs 8, beta 2 vs 2; hidden: row 10 -> hidden only
     *   p2b beta 4 <= 0.5 x 16 -> TF32 only
     *   p3a alpha 1 <= 0.5 x 2 -> TF32 only
     * all (n 5): TF32-affected 3, hidden-affected 2, TF32 only 2, hidden only 1, both 1, neither 1 */
    check_shares(t, "decomposition/problems/all", 5, (int[]){3, 2, 2, 1, 1, 1});
    check_shares(t, "decomposition/problems/levels/1", 2, (int[]){1, 1, 0, 0, 1, 1});
    check_shares(t, "decomposition/problems/levels/2", 2, (int[]){1, 1, 1, 1, 0, 0});
    check_shares(t, "decomposition/problems/levels/3", 1, (int[]){1, 0, 1, 0, 0, 0});

    /* ---- rendering ---- */
    char *tx = render(t, "table"), *md = render(t, "md"), *csv = render(t, "csv");
    CHECK(tx && strstr(tx, "Protocol paper") && strstr(tx, "Protocol verified") && strstr(tx, "Protocol standard"));
    CHECK(tx && strstr(tx, "Four conditions") && strstr(tx, "TF32-affected") && strstr(tx, "Degenerate problems"));
    CHECK(tx && strstr(tx, "1.414") && strstr(tx, "80.0%") && strstr(tx, "3.364") && strstr(tx, "2 (40.0%)"));
    CHECK(md && strstr(md, "| alpha | all | 5 | 4 | 1.414 | 80.0% | 40.0% | 2.000 | 40.0% | 28.6% |"));
    CHECK(md && strstr(md, "| all | 5 | 3 (60.0%) | 2 (40.0%) | 2 (40.0%) | 1 (20.0%) | 1 (20.0%) | 1 (20.0%) |"));
    CHECK(csv && strstr(csv, "\"alpha\",\"all\",\"5\",\"4\",\"1.41421\",\"0.8\",\"0.4\",\"2\",\"0.4\",\"0.285714\""));
    CHECK(csv && strstr(csv, "\"L1\",\"p1c\",\"sha-p1c\",\"0\",\"3\""));
    char *bad = render(t, "pdf");
    CHECK(bad == NULL);
    free(tx), free(md), free(csv);
    json_decref(t);

    /* ---- nothing at all: every table null, nothing rendered ---- */
    t = tables_build(NULL, 0);
    CHECK(t && v(t, "problems/n") == 0 && isnull(t, "protocols/paper") && isnull(t, "protocols/verified") && isnull(t, "decomposition"));
    char *e0 = render(t, "table");
    CHECK(e0 && strstr(e0, "0 problems"));
    free(e0);
    json_decref(t);

    /* ---- reading a result ---- */
    json_t *r = json_loads(
        "{\"status\": \"verified\", \"protocol\": \"both\", \"speedup\": {\"value\": 1.5, \"ci95\": [1, 2]},"
        " \"speedup_strict\": {\"value\": 3.0}, \"memory\": {\"peak_bytes_candidate\": 100, \"peak_bytes_reference\": 250},"
        " \"standard\": {\"correct\": true, \"speedup\": 2.5},"
        " \"paper\": {\"correct\": false, \"status\": \"incorrect\", \"standard_correct\": true, \"hidden_correct\": false,"
        "   \"speedup\": 0.75, \"speedup_fp32\": 1.5, \"memory\": {\"candidate_peak_bytes\": 7, \"baseline_peak_bytes\": 9, \"ratio\": 0.7}},"
        " \"degenerate\": {\"constant\": true, \"value\": 0.5, \"cases\": 4}}",
        0, NULL);
    tables_eval e;
    memset(&e, 0, sizeof e);
    tables_eval_from_result(&e, r);
    const tables_arm *a = e.arm;
    CHECK(a[TABLES_VERIFIED].present && a[TABLES_VERIFIED].correct && a[TABLES_VERIFIED].speedup == 1.5 && a[TABLES_VERIFIED].speedup_fp32 == 3.0);
    CHECK(a[TABLES_VERIFIED].peak_kernel == 100 && a[TABLES_VERIFIED].peak_baseline == 250);
    CHECK(a[TABLES_STANDARD].present && a[TABLES_STANDARD].correct && a[TABLES_STANDARD].speedup == 2.5 && a[TABLES_STANDARD].peak_kernel == 100);
    CHECK(a[TABLES_PAPER].present && !a[TABLES_PAPER].correct && a[TABLES_PAPER].speedup == 0.75 && a[TABLES_PAPER].speedup_fp32 == 1.5);
    CHECK(a[TABLES_PAPER].peak_kernel == 7 && a[TABLES_PAPER].peak_baseline == 9);
    CHECK(e.std_correct && e.hidden_failed && e.degenerate && e.degenerate_has_value && e.degenerate_value == 0.5 && e.degenerate_cases == 4);
    json_decref(r);
    /* a --protocol standard result: no verified arm; no paper; hidden_correct null is no failure;
     * degenerate null; a speedup of null, 0 or below is none */
    r = json_loads("{\"status\": \"verified\", \"protocol\": \"standard\", \"standard\": {\"correct\": false, \"speedup\": null},"
                   " \"paper\": null, \"degenerate\": null, \"memory\": {\"peak_bytes_candidate\": null}}",
                   0, NULL);
    tables_eval_from_result(&e, r);
    CHECK(!a[TABLES_VERIFIED].present && !a[TABLES_VERIFIED].correct && a[TABLES_STANDARD].present && !a[TABLES_STANDARD].correct);
    CHECK(a[TABLES_STANDARD].speedup == 0 && a[TABLES_STANDARD].peak_kernel == -1 && !a[TABLES_PAPER].present && !e.degenerate);
    json_decref(r);
    r = json_loads("{\"status\": \"hack\", \"protocol\": \"verified\", \"speedup\": {\"value\": -1}, \"paper\": {\"correct\": true,"
                   " \"standard_correct\": true, \"hidden_correct\": null, \"speedup\": 0}, \"degenerate\": {\"constant\": false}}",
                   0, NULL);
    tables_eval_from_result(&e, r);
    CHECK(a[TABLES_VERIFIED].present && !a[TABLES_VERIFIED].correct && a[TABLES_VERIFIED].speedup == 0 && !a[TABLES_STANDARD].present);
    CHECK(a[TABLES_PAPER].present && a[TABLES_PAPER].correct && a[TABLES_PAPER].speedup == 0 && e.std_correct && !e.hidden_failed && !e.degenerate);
    json_decref(r);
    /* --protocol paper alone: its status is the paper's, no verified arm */
    r = json_loads("{\"status\": \"verified\", \"protocol\": \"paper\", \"paper\": {\"correct\": true, \"speedup\": 2}}", 0, NULL);
    tables_eval_from_result(&e, r);
    CHECK(!a[TABLES_VERIFIED].present && a[TABLES_PAPER].present && a[TABLES_PAPER].correct && a[TABLES_PAPER].speedup == 2);
    json_decref(r);
    CHECK_DONE("test_tables");
}
