/* tables.c -- the paper's tables (see tables.h; docs/results.md, "The paper's tables").
 *
 * The aggregation follows the published code (paper-protocol notes 1.6, 1.7): per (model,
 * problem) the fastest correct sample with a speedup wins, and its memory is the one counted
 * ("paired"); Speedup is the geometric mean of the winners' speedups, failures left out;
 * Correctness, Fast@p and Mem Eff% count over every problem of the model's levels. What kbv
 * adds: degenerate problems (a constant reference output) are left out of everything and
 * listed, and a correct sample that was not timed still makes its problem correct (the
 * published code never has one). Nothing here reads a database or measures.
 */
#include "tables.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *const tables_proto_names[TABLES_NPROTO] = {"paper", "verified", "standard"};

static const double kP[6] = {0, 0.5, 0.8, 1, 1.5, 2};
static const char *const kPName[6] = {"0", "0.5", "0.8", "1", "1.5", "2"};

/* The four conditions of the decomposition: {fp32, TF32 baseline} x {standard, hidden tests}. */
enum { C_FP32_STD, C_FP32_HID, C_TF32_STD, C_TF32_HID, C_N };
static const char *const kCond[C_N] = {"fp32_standard", "fp32_hidden", "tf32_standard", "tf32_hidden"};

/* ---- reading a result ------------------------------------------------------------------- */

static double pos(const json_t *x) { /* a speedup: > 0 and finite, else 0 (none) */
    double v = json_is_number(x) ? json_number_value(x) : 0;
    return isfinite(v) && v > 0 ? v : 0;
}

static long long bytes(const json_t *x) {
    if (json_is_integer(x)) return json_integer_value(x);
    return json_is_real(x) && json_real_value(x) > 0 && json_real_value(x) < 9e18 ? (long long)json_real_value(x) : -1;
}

void tables_eval_from_result(tables_eval *e, const json_t *r) {
    memset(e->arm, 0, sizeof e->arm);
    e->std_correct = e->hidden_failed = e->degenerate = e->degenerate_has_value = 0;
    e->degenerate_value = 0, e->degenerate_cases = -1;
    const char *status = json_string_value(json_object_get(r, "status"));
    const char *proto = json_string_value(json_object_get(r, "protocol"));
    const json_t *mem = json_object_get(r, "memory");
    long long pk = bytes(json_object_get(mem, "peak_bytes_candidate")), pb = bytes(json_object_get(mem, "peak_bytes_reference"));
    /* kbv's verified protocol: absent where the standard or the paper protocol ran alone */
    tables_arm *a = &e->arm[TABLES_VERIFIED];
    a->present = status != NULL && !(proto && (strcmp(proto, "standard") == 0 || strcmp(proto, "paper") == 0));
    a->correct = a->present && strcmp(status, "verified") == 0;
    a->speedup = pos(json_object_get(json_object_get(r, "speedup"), "value"));
    a->speedup_fp32 = pos(json_object_get(json_object_get(r, "speedup_strict"), "value"));
    a->peak_kernel = pk, a->peak_baseline = pb;
    /* KernelBench's: its check and timing; the kernel's memory is kbv's measurement */
    const json_t *s = json_object_get(r, "standard");
    a = &e->arm[TABLES_STANDARD];
    a->present = json_is_object(s);
    a->correct = json_is_true(json_object_get(s, "correct"));
    a->speedup = pos(json_object_get(s, "speedup"));
    a->peak_kernel = pk, a->peak_baseline = pb;
    /* the published protocol's, with its own memory figures */
    const json_t *p = json_object_get(r, "paper"), *pm = json_object_get(p, "memory");
    a = &e->arm[TABLES_PAPER];
    a->present = json_is_object(p);
    a->correct = json_is_true(json_object_get(p, "correct"));
    a->speedup = pos(json_object_get(p, "speedup"));
    a->speedup_fp32 = pos(json_object_get(p, "speedup_fp32"));
    a->peak_kernel = bytes(json_object_get(pm, "candidate_peak_bytes"));
    a->peak_baseline = bytes(json_object_get(pm, "baseline_peak_bytes"));
    e->std_correct = json_is_true(json_object_get(p, "standard_correct"));
    e->hidden_failed = json_is_false(json_object_get(p, "hidden_correct"));
    const json_t *d = json_object_get(r, "degenerate");
    if (json_is_true(json_object_get(d, "constant"))) {
        e->degenerate = 1;
        const json_t *v = json_object_get(d, "value"), *c = json_object_get(d, "cases");
        e->degenerate_has_value = json_is_number(v), e->degenerate_value = json_is_number(v) ? json_number_value(v) : 0;
        e->degenerate_cases = json_is_integer(c) ? json_integer_value(c) : -1;
    }
}

/* ---- the aggregation ---------------------------------------------------------------------- */

typedef struct tproblem {
    int level;
    const char *id, *name;
    int degenerate, evidence; /* the first evaluation that says it is degenerate, or -1 */
} tproblem;

typedef struct tbest {
    int samples; /* evaluations of the (model, problem) under the protocol */
    int correct; /* ...that it called correct */
    int win;     /* the speed winner's evaluation, -1 for none */
} tbest;

typedef struct tctx {
    const tables_eval *ev;
    int n, np, nm, nl;
    tproblem *pr;
    const char **models;
    int *levels;    /* sorted */
    int *pidx, *mi; /* per evaluation: its problem and model (-1: not counted) */
    tbest *best;    /* [proto][model][problem] */
    double *dec;    /* [model][problem][condition]: the best speedup, 0 for none */
} tctx;

static tbest *best_at(const tctx *c, int proto, int m, int p) {
    return &c->best[((size_t)proto * (size_t)c->nm + (size_t)m) * (size_t)c->np + (size_t)p];
}
static double *dec_at(const tctx *c, int m, int p) { return &c->dec[((size_t)m * (size_t)c->np + (size_t)p) * C_N]; }

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }
static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

static int find_problem(const tctx *c, const tables_eval *e) {
    for (int p = 0; p < c->np; p++)
        if (c->pr[p].level == e->level && strcmp(c->pr[p].id, e->problem) == 0) return p;
    return -1;
}

static int find_model(const tctx *c, const char *m) {
    const char **hit = bsearch(&m, c->models, (size_t)c->nm, sizeof *c->models, cmp_str);
    return hit ? (int)(hit - c->models) : -1;
}

/* Does sample i beat the current winner w? Faster wins; on a tie the lower sample number (the
 * published code's first maximum over samples in order), then the earlier evaluation. */
static int beats(const tables_eval *ev, int i, int w, double si, double sw) {
    if (w < 0 || si > sw) return 1;
    if (si < sw) return 0;
    unsigned a = (unsigned)ev[i].sample, b = (unsigned)ev[w].sample; /* -1 (unknown) sorts last */
    return a < b;
}

static int ctx_init(tctx *c, const tables_eval *ev, int n) {
    memset(c, 0, sizeof *c);
    c->ev = ev, c->n = n;
    size_t n1 = (size_t)(n > 0 ? n : 1);
    c->pr = calloc(n1, sizeof *c->pr), c->models = calloc(n1, sizeof *c->models), c->levels = calloc(n1, sizeof *c->levels);
    c->pidx = calloc(n1, sizeof *c->pidx), c->mi = calloc(n1, sizeof *c->mi);
    if (!c->pr || !c->models || !c->levels || !c->pidx || !c->mi) return -1;
    /* problems and models of the counted evaluations */
    for (int i = 0; i < n; i++) {
        c->pidx[i] = c->mi[i] = -1;
        if (!ev[i].latest) continue;
        if (find_problem(c, &ev[i]) < 0) c->pr[c->np++] = (tproblem){ev[i].level, ev[i].problem, ev[i].name, 0, -1};
        int seen = 0;
        for (int m = 0; m < c->nm && !seen; m++) seen = strcmp(c->models[m], ev[i].model) == 0;
        if (!seen) c->models[c->nm++] = ev[i].model;
    }
    qsort(c->models, (size_t)c->nm, sizeof *c->models, cmp_str);
    for (int p = 0; p < c->np; p++) {
        int seen = 0;
        for (int l = 0; l < c->nl && !seen; l++) seen = c->levels[l] == c->pr[p].level;
        if (!seen) c->levels[c->nl++] = c->pr[p].level;
    }
    qsort(c->levels, (size_t)c->nl, sizeof *c->levels, cmp_int);
    /* degenerate: any evaluation of the problem, the latest of its key or not, says so */
    for (int i = 0; i < n; i++) {
        int p = find_problem(c, &ev[i]);
        if (p >= 0 && ev[i].degenerate && !c->pr[p].degenerate) c->pr[p].degenerate = 1, c->pr[p].evidence = i;
        if (ev[i].latest) c->pidx[i] = p, c->mi[i] = find_model(c, ev[i].model);
    }
    c->best = calloc((size_t)TABLES_NPROTO * (size_t)(c->nm ? c->nm : 1) * (size_t)(c->np ? c->np : 1), sizeof *c->best);
    c->dec = calloc((size_t)(c->nm ? c->nm : 1) * (size_t)(c->np ? c->np : 1) * C_N, sizeof *c->dec);
    if (!c->best || !c->dec) return -1;
    for (size_t k = 0; k < (size_t)TABLES_NPROTO * (size_t)c->nm * (size_t)c->np; k++) c->best[k].win = -1;
    /* best-of-N under each protocol, and the paper's four conditions */
    for (int i = 0; i < n; i++) {
        int p = c->pidx[i], m = c->mi[i];
        if (p < 0 || m < 0) continue;
        for (int q = 0; q < TABLES_NPROTO; q++) {
            const tables_arm *a = &ev[i].arm[q];
            tbest *b = best_at(c, q, m, p);
            if (!a->present) continue;
            b->samples++;
            b->correct += a->correct;
            if (a->correct && a->speedup > 0 && beats(ev, i, b->win, a->speedup, b->win >= 0 ? ev[b->win].arm[q].speedup : 0)) b->win = i;
        }
        const tables_arm *a = &ev[i].arm[TABLES_PAPER];
        if (!a->present) continue;
        double *d = dec_at(c, m, p);
        int ok[C_N] = {ev[i].std_correct, a->correct, ev[i].std_correct, a->correct};
        double sp[C_N] = {a->speedup_fp32, a->speedup_fp32, a->speedup, a->speedup};
        for (int k = 0; k < C_N; k++)
            if (ok[k] && sp[k] > d[k]) d[k] = sp[k];
    }
    return 0;
}

static void ctx_free(tctx *c) { free(c->pr), free(c->models), free(c->levels), free(c->pidx), free(c->mi), free(c->best), free(c->dec); }

static json_t *share(int k, int n) { return n ? json_real((double)k / n) : json_null(); }
static json_t *gmean(double logsum, int n) { return n ? json_real(exp(logsum / n)) : json_null(); }

static void level_key(char *out, size_t n, int level) {
    if (level >= 0) snprintf(out, n, "%d", level);
    else snprintf(out, n, "none");
}

/* The levels (indices into c->levels) where model m has an evaluation of a non-degenerate
 * problem under protocol q: the model's level set, whose problems are its denominators. */
static void level_set(const tctx *c, int q, int m, char *inset) {
    memset(inset, 0, (size_t)(c->nl ? c->nl : 1));
    for (int p = 0; p < c->np; p++)
        if (!c->pr[p].degenerate && best_at(c, q, m, p)->samples > 0)
            for (int l = 0; l < c->nl; l++)
                if (c->levels[l] == c->pr[p].level) inset[l] = 1;
}

static int in_group(const tctx *c, int p, int level_i, const char *inset) {
    if (c->pr[p].degenerate) return 0;
    for (int l = 0; l < c->nl; l++)
        if (c->levels[l] == c->pr[p].level) return level_i < 0 ? inset[l] : l == level_i;
    return 0;
}

/* One protocol's metrics for model m over one level (level_i) or its whole level set (-1). */
static json_t *group_metrics(const tctx *c, int q, int m, int level_i, const char *inset) {
    int n = 0, correct = 0, timed = 0, samples = 0, fast[6] = {0}, mem_n = 0, eff = 0, rn = 0, raised = 0;
    double ls = 0, lm = 0;
    for (int p = 0; p < c->np; p++) {
        if (!in_group(c, p, level_i, inset)) continue;
        const tbest *b = best_at(c, q, m, p);
        n++, samples += b->samples, correct += b->correct > 0;
        if (b->win < 0) continue;
        const tables_arm *a = &c->ev[b->win].arm[q];
        timed++, ls += log(a->speedup);
        for (int k = 0; k < 6; k++) fast[k] += a->speedup > kP[k];
        if (a->peak_kernel > 0 && a->peak_baseline > 0) {
            double r = (double)a->peak_baseline / (double)a->peak_kernel;
            mem_n++, lm += log(r), eff += r > 1;
        }
    }
    /* per sample: the correct kernels whose peak memory exceeds the baseline's */
    for (int i = 0; i < c->n; i++) {
        const tables_arm *a = &c->ev[i].arm[q];
        if (c->mi[i] != m || c->pidx[i] < 0 || !in_group(c, c->pidx[i], level_i, inset) || !a->present || !a->correct) continue;
        if (a->peak_kernel > 0 && a->peak_baseline > 0) rn++, raised += a->peak_kernel > a->peak_baseline;
    }
    json_t *fp = json_object();
    for (int k = 0; k < 6; k++) json_object_set_new(fp, kPName[k], share(fast[k], n));
    return json_pack("{s:i, s:i, s:i, s:o, s:i, s:o, s:o, s:i, s:o, s:i, s:o, s:{s:i, s:i, s:o}}", "n", n, "samples", samples, "correct", correct,
                     "correctness", share(correct, n), "timed", timed, "speedup", gmean(ls, timed), "fast_p", fp, "mem_n", mem_n, "mem_eff",
                     gmean(lm, mem_n), "mem_efficient", eff, "mem_eff_pct", share(eff, n), "mem_raise", "n", rn, "raised", raised, "share",
                     share(raised, rn));
}

static json_t *decomp_metrics(const tctx *c, int m, int level_i, const char *inset) {
    json_t *o = json_object();
    int n = 0;
    for (int p = 0; p < c->np; p++) n += in_group(c, p, level_i, inset);
    json_object_set_new(o, "n", json_integer(n));
    for (int k = 0; k < C_N; k++) {
        int solved = 0;
        double ls = 0;
        for (int p = 0; p < c->np; p++)
            if (in_group(c, p, level_i, inset) && dec_at(c, m, p)[k] > 0) solved++, ls += log(dec_at(c, m, p)[k]);
        json_object_set_new(o, kCond[k], json_pack("{s:o, s:i}", "speedup", gmean(ls, solved), "solved", solved));
    }
    return o;
}

/* Per problem: TF32-affected (some model's best TF32-baseline speedup over its
 * standard-correct samples is at most half its best fp32-baseline one) and hidden-affected (a
 * sample correct on the standard tests failed a hidden variant). */
static void problem_flags(const tctx *c, int p, int *tf, int *hid) {
    *tf = *hid = 0;
    for (int m = 0; m < c->nm; m++) {
        const double *d = dec_at(c, m, p);
        if (d[C_FP32_STD] > 0 && d[C_TF32_STD] > 0 && d[C_TF32_STD] <= 0.5 * d[C_FP32_STD]) *tf = 1;
    }
    for (int i = 0; i < c->n; i++)
        if (c->pidx[i] == p && c->ev[i].arm[TABLES_PAPER].present && c->ev[i].std_correct && c->ev[i].hidden_failed) *hid = 1;
}

static json_t *count_share(int k, int n) { return json_pack("{s:i, s:o}", "count", k, "share", share(k, n)); }

static json_t *problem_shares(const tctx *c, int level_i) {
    int n = 0, tf_n = 0, hid_n = 0, k[4] = {0}; /* TF32 only, hidden only, both, neither */
    for (int p = 0; p < c->np; p++) {
        if (c->pr[p].degenerate) continue;
        if (level_i >= 0 && c->pr[p].level != c->levels[level_i]) continue;
        int tf, hid;
        problem_flags(c, p, &tf, &hid);
        n++, tf_n += tf, hid_n += hid;
        k[tf && !hid ? 0 : !tf && hid ? 1 : tf && hid ? 2 : 3]++;
    }
    return json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o}", "n", n, "tf32_affected", count_share(tf_n, n), "hidden_affected", count_share(hid_n, n),
                     "tf32_only", count_share(k[0], n), "hidden_only", count_share(k[1], n), "both", count_share(k[2], n), "neither",
                     count_share(k[3], n));
}

static json_t *protocol_json(const tctx *c, int q, char *inset) {
    json_t *models = json_object(), *best = json_array();
    for (int m = 0; m < c->nm; m++) {
        level_set(c, q, m, inset);
        int any = 0;
        for (int l = 0; l < c->nl; l++) any |= inset[l];
        if (!any) continue;
        json_t *lv = json_object();
        for (int l = 0; l < c->nl; l++) {
            char key[16];
            level_key(key, sizeof key, c->levels[l]);
            if (inset[l]) json_object_set_new(lv, key, group_metrics(c, q, m, l, inset));
        }
        json_object_set_new(models, c->models[m], json_pack("{s:o, s:o}", "all", group_metrics(c, q, m, -1, inset), "levels", lv));
        for (int p = 0; p < c->np; p++) {
            const tbest *b = best_at(c, q, m, p);
            if (c->pr[p].degenerate || b->samples == 0) continue;
            const tables_arm *a = b->win >= 0 ? &c->ev[b->win].arm[q] : NULL;
            int mem = a && a->peak_kernel > 0 && a->peak_baseline > 0;
            json_array_append_new(best, json_pack("{s:s, s:s, s:s, s:o, s:i, s:i, s:o, s:o, s:o}", "model", c->models[m], "problem", c->pr[p].name,
                                                  "id", c->pr[p].id, "level", c->pr[p].level >= 0 ? json_integer(c->pr[p].level) : json_null(),
                                                  "samples", b->samples, "correct", b->correct, "sample",
                                                  a && c->ev[b->win].sample >= 0 ? json_integer(c->ev[b->win].sample) : json_null(), "speedup",
                                                  a ? json_real(a->speedup) : json_null(), "memory_ratio",
                                                  mem ? json_real((double)a->peak_baseline / (double)a->peak_kernel) : json_null()));
        }
    }
    if (json_object_size(models) == 0) {
        json_decref(models), json_decref(best);
        return json_null();
    }
    return json_pack("{s:o, s:o}", "models", models, "best", best);
}

static json_t *decomposition_json(const tctx *c, char *inset) {
    json_t *models = json_object();
    for (int m = 0; m < c->nm; m++) {
        level_set(c, TABLES_PAPER, m, inset);
        int any = 0;
        for (int l = 0; l < c->nl; l++) any |= inset[l];
        if (!any) continue;
        json_t *lv = json_object();
        for (int l = 0; l < c->nl; l++) {
            char key[16];
            level_key(key, sizeof key, c->levels[l]);
            if (inset[l]) json_object_set_new(lv, key, decomp_metrics(c, m, l, inset));
        }
        json_object_set_new(models, c->models[m], json_pack("{s:o, s:o}", "all", decomp_metrics(c, m, -1, inset), "levels", lv));
    }
    if (json_object_size(models) == 0) {
        json_decref(models);
        return json_null();
    }
    json_t *lv = json_object();
    for (int l = 0; l < c->nl; l++) {
        char key[16];
        level_key(key, sizeof key, c->levels[l]);
        json_object_set_new(lv, key, problem_shares(c, l));
    }
    return json_pack("{s:o, s:{s:o, s:o}}", "models", models, "problems", "all", problem_shares(c, -1), "levels", lv);
}

json_t *tables_build(const tables_eval *ev, int n) {
    tctx c;
    char *inset = NULL;
    json_t *out = NULL;
    if (ctx_init(&c, ev, n) < 0 || !(inset = malloc((size_t)(c.nl ? c.nl : 1)))) goto done;
    json_t *degen = json_array(), *bylevel = json_object();
    int nd = 0;
    for (int p = 0; p < c.np; p++) {
        const tproblem *pr = &c.pr[p];
        char key[16];
        level_key(key, sizeof key, pr->level);
        if (!json_object_get(bylevel, key)) json_object_set_new(bylevel, key, json_integer(0));
        if (!pr->degenerate) {
            json_integer_set(json_object_get(bylevel, key), json_integer_value(json_object_get(bylevel, key)) + 1);
            continue;
        }
        const tables_eval *e = &ev[pr->evidence];
        nd++;
        json_array_append_new(degen,
                              json_pack("{s:s, s:s, s:o, s:o, s:o, s:{s:s, s:o, s:s}}", "problem", pr->name, "id", pr->id, "level",
                                        pr->level >= 0 ? json_integer(pr->level) : json_null(), "value",
                                        e->degenerate_has_value ? json_real(e->degenerate_value) : json_null(), "cases",
                                        e->degenerate_cases >= 0 ? json_integer(e->degenerate_cases) : json_null(), "evidence", "model", e->model,
                                        "sample", e->sample >= 0 ? json_integer(e->sample) : json_null(), "candidate", e->candidate));
    }
    /* bylevel was filled in problem order: rebuild it in level order */
    json_t *lv = json_object();
    for (int l = 0; l < c.nl; l++) {
        char key[16];
        level_key(key, sizeof key, c.levels[l]);
        json_object_set(lv, key, json_object_get(bylevel, key));
    }
    json_decref(bylevel);
    json_t *protos = json_object();
    for (int q = 0; q < TABLES_NPROTO; q++) json_object_set_new(protos, tables_proto_names[q], protocol_json(&c, q, inset));
    out = json_pack("{s:{s:i, s:i, s:o}, s:o, s:o, s:o}", "problems", "n", c.np - nd, "degenerate", nd, "levels", lv, "degenerate", degen,
                    "protocols", protos, "decomposition", decomposition_json(&c, inset));
done:
    free(inset);
    ctx_free(&c);
    return out;
}

/* ---- rendering: table, md, csv ------------------------------------------------------------ */

enum { F_TABLE, F_MD, F_CSV };
#define TCOL  12
#define TCELL 144

typedef struct ttab {
    int ncol, nrow, cap;
    char (*cell)[TCOL][TCELL]; /* row 0: the header */
} ttab;

/* Append a row of t->ncol cells; -1 without memory (tables_write then fails). */
static int tab_row(ttab *t, const char *const *cells) {
    if (t->nrow == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        void *q = realloc(t->cell, (size_t)cap * sizeof *t->cell);
        if (!q) return -1;
        t->cell = q, t->cap = cap;
    }
    for (int j = 0; j < t->ncol; j++) snprintf(t->cell[t->nrow][j], TCELL, "%s", cells[j] ? cells[j] : "");
    t->nrow++;
    return 0;
}

static void put_cell(FILE *f, const char *s, int fmt) {
    for (; *s; s++) {
        if (fmt == F_CSV && *s == '"') fputs("\"\"", f);
        else if (fmt == F_MD && *s == '|') fputs("\\|", f);
        else if (fmt != F_CSV && (*s == '\n' || *s == '\r')) fputc(' ', f);
        else fputc(*s, f);
    }
}

static void tab_print(FILE *f, const char *title, const ttab *t, int fmt) {
    if (fmt == F_CSV) { /* a block of its own after a blank line; every row names its table */
        fputc('\n', f);
        for (int i = 0; i < t->nrow; i++) {
            fputc('"', f), put_cell(f, i ? title : "table", fmt), fputc('"', f);
            for (int j = 0; j < t->ncol; j++) fputs(",\"", f), put_cell(f, t->cell[i][j], fmt), fputc('"', f);
            fputc('\n', f);
        }
        return;
    }
    if (fmt == F_MD) {
        fputs("\n**", f), put_cell(f, title, fmt), fputs("**\n\n", f);
        for (int i = 0; i < t->nrow; i++) {
            for (int j = 0; j < t->ncol; j++) fputs(j ? " " : "| ", f), put_cell(f, t->cell[i][j], fmt), fputs(" |", f);
            fputc('\n', f);
            if (i == 0) {
                fputc('|', f);
                for (int j = 0; j < t->ncol; j++) fputs("---|", f);
                fputc('\n', f);
            }
        }
        return;
    }
    int w[TCOL] = {0};
    for (int i = 0; i < t->nrow; i++)
        for (int j = 0; j < t->ncol; j++)
            if ((int)strlen(t->cell[i][j]) > w[j]) w[j] = (int)strlen(t->cell[i][j]);
    fprintf(f, "\n%s\n", title);
    for (int i = 0; i < t->nrow; i++) {
        for (int j = 0; j < t->ncol; j++) {
            if (j == 0) fprintf(f, "%-*s", w[j], t->cell[i][j]);
            else fprintf(f, "  %*s", w[j], t->cell[i][j]);
        }
        fputc('\n', f);
    }
}

/* A number's cell: "-" where null ("" in CSV); CSV keeps the digits, the others round. */
static void fx(char *out, const json_t *v, int fmt) {
    if (!json_is_number(v)) snprintf(out, TCELL, "%s", fmt == F_CSV ? "" : "-");
    else snprintf(out, TCELL, fmt == F_CSV ? "%.6g" : "%.3f", json_number_value(v));
}

static void fpct(char *out, const json_t *v, int fmt) {
    if (!json_is_number(v)) snprintf(out, TCELL, "%s", fmt == F_CSV ? "" : "-");
    else if (fmt == F_CSV) snprintf(out, TCELL, "%.6g", json_number_value(v));
    else snprintf(out, TCELL, "%.1f%%", 100 * json_number_value(v));
}

static void fint(char *out, const json_t *v) { snprintf(out, TCELL, "%lld", (long long)json_integer_value(v)); }

/* {count, share}: "16 (16.0%)", in CSV the count alone */
static void fcount(char *out, const json_t *cs, int fmt) {
    long long k = (long long)json_integer_value(json_object_get(cs, "count"));
    const json_t *s = json_object_get(cs, "share");
    if (fmt == F_CSV || !json_is_number(s)) snprintf(out, TCELL, "%lld", k);
    else snprintf(out, TCELL, "%lld (%.1f%%)", k, 100 * json_number_value(s));
}

static void level_cell(char *out, const char *key) {
    if (strcmp(key, "all") == 0 || strcmp(key, "none") == 0) snprintf(out, TCELL, "%s", key);
    else snprintf(out, TCELL, "L%s", key);
}

/* A model's groups in the order shown: {"all": pooled, "1": level 1, ...} (a new object). */
static json_t *group_rows(const json_t *mv) {
    json_t *rows = json_object();
    const char *lk;
    json_t *lv;
    json_object_set(rows, "all", json_object_get(mv, "all"));
    json_object_foreach((json_t *)json_object_get(mv, "levels"), lk, lv) json_object_set(rows, lk, lv);
    return rows;
}

static int proto_table(FILE *f, const char *name, const json_t *p, int fmt) {
    static const char *const head[10] = {"model", "level", "n", "correct", "Speedup", "Correctness", "Fast@1", "Mem Eff", "Mem Eff%", "mem up"};
    ttab t = {.ncol = 10};
    int rc = tab_row(&t, head);
    const char *mk, *lk;
    json_t *mv, *g;
    json_object_foreach((json_t *)json_object_get(p, "models"), mk, mv) {
        json_t *rows = group_rows(mv);
        json_object_foreach(rows, lk, g) {
            char c[10][TCELL];
            const char *cells[10];
            snprintf(c[0], TCELL, "%s", mk);
            level_cell(c[1], lk);
            fint(c[2], json_object_get(g, "n"));
            fint(c[3], json_object_get(g, "correct"));
            fx(c[4], json_object_get(g, "speedup"), fmt);
            fpct(c[5], json_object_get(g, "correctness"), fmt);
            fpct(c[6], json_object_get(json_object_get(g, "fast_p"), "1"), fmt);
            fx(c[7], json_object_get(g, "mem_eff"), fmt);
            fpct(c[8], json_object_get(g, "mem_eff_pct"), fmt);
            fpct(c[9], json_object_get(json_object_get(g, "mem_raise"), "share"), fmt);
            for (int j = 0; j < 10; j++) cells[j] = c[j];
            rc |= tab_row(&t, cells);
        }
        json_decref(rows);
    }
    char title[160];
    snprintf(title, sizeof title, "Protocol %s: best of N per (model, problem); Speedup over the problems solved, the shares over all n", name);
    tab_print(f, title, &t, fmt);
    free(t.cell);
    return rc;
}

static int side_by_side(FILE *f, const json_t *t, int fmt) {
    const json_t *protos = json_object_get(t, "protocols");
    const char *head[1 + 3 * TABLES_NPROTO];
    char hb[3 * TABLES_NPROTO][TCELL];
    int ncol = 1;
    head[0] = "model";
    for (int q = 0; q < TABLES_NPROTO; q++) {
        if (!json_is_object(json_object_get(protos, tables_proto_names[q]))) continue;
        snprintf(hb[ncol - 1], TCELL, "%s Speedup", tables_proto_names[q]);
        snprintf(hb[ncol], TCELL, "%s Correct", tables_proto_names[q]);
        snprintf(hb[ncol + 1], TCELL, "%s Fast@1", tables_proto_names[q]);
        for (int j = 0; j < 3; j++) head[ncol + j] = hb[ncol - 1 + j];
        ncol += 3;
    }
    /* every model of any protocol, in order */
    json_t *models = json_object();
    for (int q = 0; q < TABLES_NPROTO; q++) {
        const char *mk;
        json_t *mv;
        json_object_foreach((json_t *)json_object_get(json_object_get(protos, tables_proto_names[q]), "models"), mk, mv)
            json_object_set_new(models, mk, json_true());
    }
    ttab tb = {.ncol = ncol};
    int rc = tab_row(&tb, head);
    const char *mk;
    json_t *mv;
    json_object_foreach(models, mk, mv) {
        char c[1 + 3 * TABLES_NPROTO][TCELL];
        const char *cells[1 + 3 * TABLES_NPROTO];
        int j = 1;
        snprintf(c[0], TCELL, "%s", mk);
        for (int q = 0; q < TABLES_NPROTO; q++) {
            const json_t *p = json_object_get(protos, tables_proto_names[q]);
            if (!json_is_object(p)) continue;
            const json_t *g = json_object_get(json_object_get(json_object_get(p, "models"), mk), "all");
            fx(c[j], json_object_get(g, "speedup"), fmt);
            fpct(c[j + 1], json_object_get(g, "correctness"), fmt);
            fpct(c[j + 2], json_object_get(json_object_get(g, "fast_p"), "1"), fmt);
            j += 3;
        }
        for (int k = 0; k < ncol; k++) cells[k] = c[k];
        rc |= tab_row(&tb, cells);
    }
    json_decref(models);
    char title[256];
    const json_t *pr = json_object_get(t, "problems");
    snprintf(title, sizeof title,
             "Paper tables: %lld problems (%lld degenerate, left out of every figure), best of N samples per (model, problem); "
             "the protocols side by side, all levels",
             (long long)json_integer_value(json_object_get(pr, "n")), (long long)json_integer_value(json_object_get(pr, "degenerate")));
    tab_print(f, title, &tb, fmt);
    free(tb.cell);
    return rc;
}

static int decomposition_tables(FILE *f, const json_t *d, int fmt) {
    static const char *const head[7] = {"model", "level", "n", "fp32+standard", "fp32+hidden", "TF32+standard", "TF32+hidden"};
    ttab t = {.ncol = 7};
    int rc = tab_row(&t, head);
    const char *mk, *lk;
    json_t *mv, *lv;
    json_object_foreach((json_t *)json_object_get(d, "models"), mk, mv) {
        json_t *rows = group_rows(mv);
        json_object_foreach(rows, lk, lv) {
            char c[7][TCELL];
            const char *cells[7];
            snprintf(c[0], TCELL, "%s", mk);
            level_cell(c[1], lk);
            fint(c[2], json_object_get(lv, "n"));
            for (int k = 0; k < C_N; k++) fx(c[3 + k], json_object_get(json_object_get(lv, kCond[k]), "speedup"), fmt);
            for (int j = 0; j < 7; j++) cells[j] = c[j];
            rc |= tab_row(&t, cells);
        }
        json_decref(rows);
    }
    tab_print(f,
              "Four conditions (paper protocol): geometric mean of the best speedup over the problems solved, {fp32, TF32 baseline} x {standard, "
              "hidden tests}",
              &t, fmt);
    free(t.cell);
    static const char *const ph[8] = {"level", "n", "TF32-affected", "hidden-affected", "TF32 only", "hidden only", "both", "neither"};
    static const char *const pk[6] = {"tf32_affected", "hidden_affected", "tf32_only", "hidden_only", "both", "neither"};
    ttab u = {.ncol = 8};
    rc |= tab_row(&u, ph);
    const json_t *pr = json_object_get(d, "problems");
    json_t *rows = group_rows(pr);
    json_object_foreach(rows, lk, lv) {
        char c[8][TCELL];
        const char *cells[8];
        level_cell(c[0], lk);
        fint(c[1], json_object_get(lv, "n"));
        for (int k = 0; k < 6; k++) fcount(c[2 + k], json_object_get(lv, pk[k]), fmt);
        for (int j = 0; j < 8; j++) cells[j] = c[j];
        rc |= tab_row(&u, cells);
    }
    json_decref(rows);
    tab_print(f,
              "Per problem (paper protocol): TF32-affected (best TF32-baseline speedup <= 0.5 x fp32's, some model), hidden-affected "
              "(a standard-correct sample failed a hidden variant)",
              &u, fmt);
    free(u.cell);
    return rc;
}

static int degenerate_table(FILE *f, const json_t *a, int fmt) {
    static const char *const head[6] = {"level", "problem", "id", "value", "cases", "evidence"};
    ttab t = {.ncol = 6};
    int rc = tab_row(&t, head);
    size_t i;
    const json_t *d;
    json_array_foreach(a, i, d) {
        char c[6][TCELL];
        const char *cells[6];
        const json_t *l = json_object_get(d, "level"), *v = json_object_get(d, "value"), *n = json_object_get(d, "cases");
        const json_t *e = json_object_get(d, "evidence"), *s = json_object_get(e, "sample");
        if (json_is_integer(l)) snprintf(c[0], TCELL, "L%lld", (long long)json_integer_value(l));
        else snprintf(c[0], TCELL, "none");
        snprintf(c[1], TCELL, "%s", json_string_value(json_object_get(d, "problem")) ?: "");
        snprintf(c[2], TCELL, "%.12s", json_string_value(json_object_get(d, "id")) ?: "");
        if (json_is_number(v)) snprintf(c[3], TCELL, "%.6g", json_number_value(v));
        else snprintf(c[3], TCELL, "-");
        if (json_is_integer(n)) fint(c[4], n);
        else snprintf(c[4], TCELL, "-");
        char sample[24] = "-";
        if (json_is_integer(s)) snprintf(sample, sizeof sample, "%lld", (long long)json_integer_value(s));
        snprintf(c[5], TCELL, "model %.40s sample %s candidate %.60s", json_string_value(json_object_get(e, "model")) ?: "", sample,
                 json_string_value(json_object_get(e, "candidate")) ?: "");
        for (int j = 0; j < 6; j++) cells[j] = c[j];
        rc |= tab_row(&t, cells);
    }
    tab_print(f, "Degenerate problems (a constant reference output; left out of every figure above)", &t, fmt);
    free(t.cell);
    return rc;
}

int tables_write(const json_t *t, const char *format, FILE *f, kbv_err *err) {
    int fmt = strcmp(format, "csv") == 0 ? F_CSV : strcmp(format, "md") == 0 ? F_MD : strcmp(format, "table") == 0 ? F_TABLE : -1;
    if (fmt < 0) return kbv_seterr(err, "unknown format '%s' for the paper tables (table, md, csv)", format);
    if (!json_is_object(t)) return 0;
    int rc = side_by_side(f, t, fmt);
    const json_t *protos = json_object_get(t, "protocols");
    for (int q = 0; q < TABLES_NPROTO; q++) {
        const json_t *p = json_object_get(protos, tables_proto_names[q]);
        if (json_is_object(p)) rc |= proto_table(f, tables_proto_names[q], p, fmt);
    }
    if (json_is_object(json_object_get(t, "decomposition"))) rc |= decomposition_tables(f, json_object_get(t, "decomposition"), fmt);
    if (json_array_size(json_object_get(t, "degenerate"))) rc |= degenerate_table(f, json_object_get(t, "degenerate"), fmt);
    if (rc) return kbv_seterr(err, "out of memory rendering the paper tables");
    return ferror(f) ? kbv_seterr(err, "cannot write the paper tables") : 0;
}
