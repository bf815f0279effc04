/* report.c -- `kbv report` (see report.h). */
#include "report.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "charts.h"
#include "db.h"
#include "perf.h"
#include "stats.h"
#include "tables.h"
#include "util.h"

static const double kP[6] = {0, 0.5, 0.8, 1, 1.5, 2};
static const char *kPName[6] = {"0", "0.5", "0.8", "1", "1.5", "2"};

static int is_error(const char *s) {
    return strcmp(s, "compile_error") == 0 || strcmp(s, "runtime_error") == 0 || strcmp(s, "timeout") == 0 || strcmp(s, "crash") == 0 ||
           strcmp(s, "problem_error") == 0;
}

/* geometric mean with a bootstrap CI: {value, ci95} or null */
static json_t *geomean(const double *x, int n, uint64_t seed) {
    if (n <= 0) return json_pack("{s:n, s:n}", "value", "ci95");
    double acc = 0;
    for (int i = 0; i < n; i++) acc += log(x[i]);
    double lo = NAN, hi = NAN;
    if (stats_bootstrap_geomean_ci(x, (size_t)n, 2000, 0.95, seed, &lo, &hi) < 0) lo = hi = NAN;
    return json_pack("{s:f, s:[f, f]}", "value", exp(acc / n), "ci95", lo, hi);
}

/* The metrics under one protocol: correct[i] and speedup[i] (<= 0: not measured). */
static json_t *metrics(int n, const int *correct, const double *speedup, uint64_t seed) {
    json_t *fp = json_object();
    int ncorrect = 0;
    for (int i = 0; i < n; i++) ncorrect += correct[i];
    for (int k = 0; k < 6; k++) {
        int c = 0;
        for (int i = 0; i < n; i++) c += correct[i] && (kP[k] == 0 || (speedup[i] > 0 && speedup[i] > kP[k]));
        json_object_set_new(fp, kPName[k], json_real(n ? (double)c / n : 0));
    }
    double *a = malloc(sizeof(double) * (size_t)(n ? n : 1)), *b = malloc(sizeof(double) * (size_t)(n ? n : 1));
    int na = 0, nb = 0;
    for (int i = 0; a && b && i < n; i++) {
        if (correct[i] && speedup[i] > 0) a[na++] = speedup[i];
        b[nb++] = correct[i] && speedup[i] > 0 ? speedup[i] : 1.0; /* a failure falls back to PyTorch */
    }
    json_t *g = json_pack("{s:o, s:o}", "correct_only", geomean(a, na, seed), "all_fallback", geomean(b, nb, seed ^ 1));
    free(a), free(b);
    return json_pack("{s:i, s:o, s:o}", "correct", ncorrect, "fast_p", fp, "geomean_speedup", g);
}

json_t *report_metrics(const report_row *rows, int n, uint64_t seed) {
    int *ok = calloc((size_t)(n ? n : 1), sizeof *ok), *sok = calloc((size_t)(n ? n : 1), sizeof *sok);
    double *sp = calloc((size_t)(n ? n : 1), sizeof *sp), *ssp = calloc((size_t)(n ? n : 1), sizeof *ssp);
    if (!ok || !sok || !sp || !ssp) {
        free(ok), free(sok), free(sp), free(ssp);
        return NULL;
    }
    int verified = 0, overfit = 0, incorrect = 0, hack = 0, errors = 0, mem_n = 0, mem_up = 0, std_n = 0;
    json_t *byhack = json_object();
    for (int i = 0; i < n; i++) {
        const report_row *r = &rows[i];
        ok[i] = strcmp(r->status, "verified") == 0;
        sp[i] = r->has_speedup ? r->speedup : 0;
        verified += ok[i];
        overfit += strcmp(r->status, "overfit") == 0;
        incorrect += strcmp(r->status, "incorrect") == 0;
        hack += strcmp(r->status, "hack") == 0;
        errors += is_error(r->status);
        if (ok[i] && r->has_peak) mem_n++, mem_up += r->peak_ratio > 1.0;
        sok[i] = r->std_ran && r->std_correct;
        ssp[i] = r->std_has_speedup ? r->std_speedup : 0;
        std_n += r->std_ran;
        char h[512];
        snprintf(h, sizeof h, "%s", r->hacks);
        for (char *save = NULL, *t = strtok_r(h, ",", &save); t; t = strtok_r(NULL, ",", &save))
            json_object_set_new(byhack, t, json_integer(json_integer_value(json_object_get(byhack, t)) + 1));
    }
    /* The authored share (GPU only): its median over the evaluations audited, and how many fell
     * below the library policy's threshold (docs/hacks.md). */
    double *sh = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    int nsh = 0, low = 0;
    for (int i = 0; sh && i < n; i++)
        if (rows[i].has_share) sh[nsh++] = rows[i].authored_share, low += rows[i].authored_share < PERF_AUTHORED_SHARE_MIN;
    json_t *share = json_pack("{s:o, s:i, s:i, s:f}", "median", nsh ? json_real(stats_median(sh, (size_t)nsh)) : json_null(), "n", nsh,
                              "below_threshold", low, "threshold", PERF_AUTHORED_SHARE_MIN);
    free(sh);
    json_t *v = metrics(n, ok, sp, seed);
    json_t *o =
        json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:O, s:O, s:o, s:o}", "n", n, "verified", verified, "overfit", overfit, "incorrect", incorrect,
                  "hack", hack, "errors", errors, "fast_p", json_object_get(v, "fast_p"), "geomean_speedup", json_object_get(v, "geomean_speedup"),
                  "memory_regression_rate", mem_n ? json_real((double)mem_up / mem_n) : json_null(), "hacks_by_detector", byhack);
    json_object_set_new(o, "authored_share", share);
    json_decref(v);
    if (std_n) {
        json_t *s = metrics(n, sok, ssp, seed ^ 7);
        json_object_set_new(s, "n", json_integer(n));
        json_object_set_new(s, "evaluated", json_integer(std_n));
        json_object_set_new(o, "standard", s);
    } else {
        json_object_set_new(o, "standard", json_null());
    }
    free(ok), free(sok), free(sp), free(ssp);
    return o;
}

/* An evaluation whose problem no stored evaluation calls degenerate (tables.c reads the same
 * field for the paper's tables). */
#define KBV_NOT_DEGENERATE                                                                                                          \
    "(problem_id IS NULL OR problem_id NOT IN (SELECT problem_id FROM evaluations WHERE problem_id IS NOT NULL AND"                  \
    " json_extract(result, '$.degenerate.constant') = 1))"

/* What the HTML report's figures need per evaluation (charts.c), in key order like "rows":
 * {model, status, protocol, verified (speedup), standard, paper, peak_ratio}. standard and paper are
 * {correct, speedup} or null where that protocol did not run (results stored before the paper
 * protocol have no "paper"); peak_ratio is memory.peak_ratio, else the peak bytes' ratio. */
static json_t *chart_proto(const json_t *o) {
    if (!json_is_object(o)) return json_null();
    const json_t *s = json_object_get(o, "speedup");
    return json_pack("{s:b, s:o}", "correct", json_is_true(json_object_get(o, "correct")), "speedup",
                     json_is_number(s) ? json_real(json_number_value(s)) : json_null());
}

static json_t *chart_rows(sqlite3 *h) {
    const char *sql = "SELECT model, json_extract(result, '$.status', '$.speedup.value', '$.standard', '$.paper', '$.memory', '$.protocol')"
                      " FROM evaluations WHERE id IN (SELECT MAX(id) FROM evaluations GROUP BY key) AND " KBV_NOT_DEGENERATE " ORDER BY key";
    sqlite3_stmt *st = NULL;
    json_t *a = json_array();
    if (!a || sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st), json_decref(a);
        return NULL;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *ex = (const char *)sqlite3_column_text(st, 1);
        json_t *x = ex ? json_loads(ex, 0, NULL) : NULL;
        const json_t *status = json_array_get(x, 0), *ver = json_array_get(x, 1), *mem = json_array_get(x, 4), *proto = json_array_get(x, 5);
        const json_t *pr = json_object_get(mem, "peak_ratio"), *pc = json_object_get(mem, "peak_bytes_candidate"),
                     *pf = json_object_get(mem, "peak_bytes_reference");
        double peak = json_is_number(pr)                                                         ? json_number_value(pr)
                      : json_is_number(pc) && json_is_number(pf) && json_number_value(pf) > 0 ? json_number_value(pc) / json_number_value(pf)
                                                                                                : NAN;
        json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:o}", "model", (const char *)sqlite3_column_text(st, 0) ?: "default",
                                           "status", json_is_string(status) ? json_string_value(status) : "", "protocol",
                                           json_is_string(proto) ? json_string_value(proto) : "", "verified",
                                           json_is_number(ver) ? json_real(json_number_value(ver)) : json_null(), "standard",
                                           chart_proto(json_array_get(x, 2)), "paper", chart_proto(json_array_get(x, 3)), "peak_ratio",
                                           isfinite(peak) ? json_real(peak) : json_null()));
        json_decref(x);
    }
    sqlite3_finalize(st);
    return a;
}

/* The paper's tables (tables.c) from every evaluation that counts -- the latest of each key --
 * and every older one that says its problem is degenerate (a constant reference output: that
 * holds for the problem whatever the candidate). Only the result's fields the tables read are
 * extracted, not the whole result parsed. NULL where the database cannot be read (or memory
 * runs out). */
static json_t *paper_tables(sqlite3 *h) {
    const char *sql = "SELECT e.model, e.sample, e.level, COALESCE(p.sha256, json_extract(e.result, '$.problem.sha256'), json_extract(e.result, '$.problem.name')),"
                      " json_extract(e.result, '$.problem.name'), json_extract(e.result, '$.candidate.name'),"
                      " e.id IN (SELECT MAX(id) FROM evaluations GROUP BY key),"
                      " json_object('status', json_extract(e.result, '$.status'), 'protocol', json_extract(e.result, '$.protocol'),"
                      "  'speedup', json_extract(e.result, '$.speedup'), 'speedup_strict', json_extract(e.result, '$.speedup_strict'),"
                      "  'memory', json_extract(e.result, '$.memory'), 'standard', json_extract(e.result, '$.standard'),"
                      "  'paper', json_extract(e.result, '$.paper'), 'degenerate', json_extract(e.result, '$.degenerate'))"
                      " FROM evaluations e LEFT JOIN problems p ON p.id = e.problem_id"
                      " WHERE e.id IN (SELECT MAX(id) FROM evaluations GROUP BY key) OR json_extract(e.result, '$.degenerate.constant') = 1"
                      " ORDER BY e.key, e.id";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) return sqlite3_finalize(st), NULL;
    tables_eval *ev = NULL;
    int n = 0, cap = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            tables_eval *q = realloc(ev, (size_t)(cap = cap ? 2 * cap : 256) * sizeof *q);
            if (!q) break;
            ev = q;
        }
        tables_eval *e = &ev[n++];
        memset(e, 0, sizeof *e);
        snprintf(e->model, sizeof e->model, "%s", (const char *)sqlite3_column_text(st, 0) ?: "default");
        e->sample = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 1);
        e->level = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 2);
        snprintf(e->problem, sizeof e->problem, "%s", (const char *)sqlite3_column_text(st, 3) ?: "");
        snprintf(e->name, sizeof e->name, "%s", (const char *)sqlite3_column_text(st, 4) ?: "");
        snprintf(e->candidate, sizeof e->candidate, "%s", (const char *)sqlite3_column_text(st, 5) ?: "");
        e->latest = sqlite3_column_int(st, 6);
        const char *ex = (const char *)sqlite3_column_text(st, 7);
        json_t *x = ex ? json_loads(ex, 0, NULL) : NULL;
        tables_eval_from_result(e, x);
        json_decref(x);
    }
    sqlite3_finalize(st);
    json_t *t = rc == SQLITE_DONE ? tables_build(ev, n) : NULL;
    free(ev);
    return t;
}

int report_build(const char *db_path, int with_rows, json_t **out, kbv_err *err) {
    *out = NULL;
    kbv_db db;
    if (db_open_read(&db, db_path, err) < 0) return -1; /* a kbv database of this schema version */
    sqlite3 *h = db.h;
    /* The latest evaluation of every key: a re-run replaces, shards merged add up. */
    long long stored = 0;
    sqlite3_stmt *cnt = NULL;
    if (sqlite3_prepare_v2(h, "SELECT COUNT(*) FROM evaluations", -1, &cnt, NULL) == SQLITE_OK && sqlite3_step(cnt) == SQLITE_ROW)
        stored = sqlite3_column_int64(cnt, 0);
    sqlite3_finalize(cnt);
    /* Evaluations whose candidate could not be given redrawn weights (docs/correctness.md). */
    long long unverifiable = 0;
    cnt = NULL;
    if (sqlite3_prepare_v2(h,
                           "SELECT COUNT(DISTINCT evaluation_id) FROM flags WHERE flag = 'weights_unverifiable' AND evaluation_id IN"
                           " (SELECT MAX(id) FROM evaluations GROUP BY key)",
                           -1, &cnt, NULL) == SQLITE_OK &&
        sqlite3_step(cnt) == SQLITE_ROW)
        unverifiable = sqlite3_column_int64(cnt, 0);
    sqlite3_finalize(cnt);
    /* the stored result's audit figures and names, in one parse of it: [authored_ns, library_ns,
     * problem, candidate]. A degenerate problem's evaluations (any of them says its reference
     * output is constant: docs/correctness.md) are left out, as from the paper's tables. */
    const char *sql = "SELECT model, level, status, speedup, peak_ratio, std_status, std_correct, std_speedup, hacks,"
                      " json_extract(result, '$.audit.candidate.authored_ns', '$.audit.candidate.library_ns', '$.problem.name', '$.candidate.name')"
                      " FROM evaluations WHERE id IN (SELECT MAX(id) FROM evaluations GROUP BY key) AND " KBV_NOT_DEGENERATE " ORDER BY key";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
        db_fail(&db, "cannot read its evaluations", err);
        db_close(&db);
        return -1;
    }
    report_row *rows = NULL;
    int n = 0, cap = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            report_row *q = realloc(rows, (size_t)cap * sizeof *q);
            if (!q) break;
            rows = q;
        }
        report_row *r = &rows[n++];
        memset(r, 0, sizeof *r);
        snprintf(r->model, sizeof r->model, "%s", (const char *)sqlite3_column_text(st, 0) ?: "default");
        r->level = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 1);
        snprintf(r->status, sizeof r->status, "%s", (const char *)sqlite3_column_text(st, 2) ?: "");
        r->has_speedup = sqlite3_column_type(st, 3) != SQLITE_NULL, r->speedup = sqlite3_column_double(st, 3);
        r->has_peak = sqlite3_column_type(st, 4) != SQLITE_NULL, r->peak_ratio = sqlite3_column_double(st, 4);
        r->std_ran = sqlite3_column_type(st, 5) != SQLITE_NULL, r->std_correct = sqlite3_column_int(st, 6);
        r->std_has_speedup = sqlite3_column_type(st, 7) != SQLITE_NULL, r->std_speedup = sqlite3_column_double(st, 7);
        snprintf(r->hacks, sizeof r->hacks, "%s", (const char *)sqlite3_column_text(st, 8) ?: "");
        const char *ex = (const char *)sqlite3_column_text(st, 9);
        json_t *x = ex ? json_loads(ex, 0, NULL) : NULL;
        const json_t *an = json_array_get(x, 0), *ln = json_array_get(x, 1);
        double share = json_is_integer(an) && json_is_integer(ln) ? perf_authored_share(json_integer_value(an), json_integer_value(ln)) : -1;
        r->has_share = share >= 0, r->authored_share = share >= 0 ? share : 0;
        snprintf(r->problem, sizeof r->problem, "%s", json_is_string(json_array_get(x, 2)) ? json_string_value(json_array_get(x, 2)) : "");
        snprintf(r->candidate, sizeof r->candidate, "%s", json_is_string(json_array_get(x, 3)) ? json_string_value(json_array_get(x, 3)) : "");
        json_decref(x);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        if (rc == SQLITE_ROW) kbv_seterr(err, "%s: out of memory reading its evaluations", db_path);
        else db_fail(&db, "cannot read its evaluations", err);
        db_close(&db), free(rows);
        return -1;
    }
    json_t *crows = with_rows ? chart_rows(h) : NULL; /* per evaluation, for the charts */
    json_t *ptab = paper_tables(h);
    if (!ptab) {
        db_fail(&db, "cannot read its evaluations for the paper tables", err);
        db_close(&db), free(rows), json_decref(crows);
        return -1;
    }
    db_close(&db);
    json_t *rep = json_object(), *models = json_object(), *levels = json_object();
    json_object_set_new(rep, "overall", report_metrics(rows, n, 0x5eed));
    json_object_set_new(json_object_get(rep, "overall"), "weights_unverifiable", json_integer((json_int_t)unverifiable));
    report_row *sub = malloc(sizeof *sub * (size_t)(n ? n : 1));
    for (int i = 0; sub && i < n; i++) {
        if (!json_object_get(models, rows[i].model)) {
            int m = 0;
            for (int j = 0; j < n; j++)
                if (strcmp(rows[j].model, rows[i].model) == 0) sub[m++] = rows[j];
            json_object_set_new(models, rows[i].model, report_metrics(sub, m, 0x5eed));
        }
        char lv[16];
        snprintf(lv, sizeof lv, "%d", rows[i].level);
        if (rows[i].level >= 0 && !json_object_get(levels, lv)) {
            int m = 0;
            for (int j = 0; j < n; j++)
                if (rows[j].level == rows[i].level) sub[m++] = rows[j];
            json_object_set_new(levels, lv, report_metrics(sub, m, 0x5eed));
        }
    }
    if (with_rows) {
        json_t *a = json_array();
        for (int i = 0; i < n; i++) {
            const report_row *r = &rows[i];
            json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:s}", "model", r->model, "problem", r->problem, "candidate",
                                               r->candidate, "status", r->status, "speedup", r->has_speedup ? json_real(r->speedup) : json_null(),
                                               "std_speedup", r->std_has_speedup ? json_real(r->std_speedup) : json_null(), "peak_ratio",
                                               r->has_peak ? json_real(r->peak_ratio) : json_null(), "authored_share",
                                               r->has_share ? json_real(r->authored_share) : json_null(), "hacks", r->hacks));
        }
        json_object_set_new(rep, "rows", a);
        json_object_set_new(rep, "chart_rows", crows ? crows : json_array());
    }
    free(sub), free(rows);
    json_object_set_new(rep, "models", models);
    json_object_set_new(rep, "levels", levels);
    json_object_set_new(rep, "evaluations", json_pack("{s:I, s:i}", "stored", (json_int_t)stored, "distinct", n));
    json_object_set_new(rep, "paper_tables", ptab);
    *out = rep;
    return 0;
}

static double num(const json_t *o, const char *a, const char *b) {
    const json_t *x = json_object_get(o, a);
    if (b) x = json_object_get(x, b);
    return json_is_number(x) ? json_number_value(x) : NAN;
}

static void fmt_g(char *out, size_t n, const json_t *g) {
    const json_t *v = json_object_get(g, "value"), *ci = json_object_get(g, "ci95");
    if (!json_is_number(v)) snprintf(out, n, "-");
    else
        snprintf(out, n, "%.3f [%.3f, %.3f]", json_number_value(v), json_number_value(json_array_get(ci, 0)),
                 json_number_value(json_array_get(ci, 1)));
}

/* One group as a row of cells, verified then standard. */
static void cells(const json_t *m, char c[16][48]) {
    const json_t *s = json_object_get(m, "standard");
    snprintf(c[0], 48, "%lld", (long long)json_integer_value(json_object_get(m, "n")));
    snprintf(c[1], 48, "%lld", (long long)json_integer_value(json_object_get(m, "verified")));
    snprintf(c[2], 48, "%lld", (long long)json_integer_value(json_object_get(m, "overfit")));
    snprintf(c[3], 48, "%lld", (long long)json_integer_value(json_object_get(m, "incorrect")));
    snprintf(c[4], 48, "%lld", (long long)json_integer_value(json_object_get(m, "hack")));
    snprintf(c[5], 48, "%lld", (long long)json_integer_value(json_object_get(m, "errors")));
    snprintf(c[6], 48, "%.3f", num(m, "fast_p", "1"));
    snprintf(c[7], 48, "%.3f", num(m, "fast_p", "1.5"));
    fmt_g(c[8], 48, json_object_get(json_object_get(m, "geomean_speedup"), "correct_only"));
    fmt_g(c[9], 48, json_object_get(json_object_get(m, "geomean_speedup"), "all_fallback"));
    double mr = num(m, "memory_regression_rate", NULL);
    if (isnan(mr)) snprintf(c[10], 48, "-");
    else snprintf(c[10], 48, "%.3f", mr);
    double as = num(m, "authored_share", "median");
    if (isnan(as)) snprintf(c[11], 48, "-");
    else snprintf(c[11], 48, "%.3f", as);
    if (json_is_object(s)) {
        snprintf(c[12], 48, "%lld", (long long)json_integer_value(json_object_get(s, "correct")));
        snprintf(c[13], 48, "%.3f", num(s, "fast_p", "1"));
        fmt_g(c[14], 48, json_object_get(json_object_get(s, "geomean_speedup"), "correct_only"));
    } else {
        snprintf(c[12], 48, "-"), snprintf(c[13], 48, "-"), snprintf(c[14], 48, "-");
    }
}

static const char *kHead[15] = {"n",
                                "verified",
                                "overfit",
                                "incorrect",
                                "hack",
                                "errors",
                                "fast_1",
                                "fast_1.5",
                                "geomean (correct)",
                                "geomean (all, fallback 1)",
                                "mem regression",
                                "authored share",
                                "std correct",
                                "std fast_1",
                                "std geomean (correct)"};

static void html_text(FILE *f, const char *s) { charts_html_text(f, s); }

/* One Markdown table row as an HTML one: cells split at each '|' that is not escaped ("\|", a
 * model name's own), unescaped; th in a header row. */
static void html_row(FILE *f, char *ln, int head) {
    fputs("<tr>", f);
    char *p = ln + 1; /* after the leading '|' */
    while (*p) {
        char *end = p;
        while (*end && !(*end == '|' && (end == p || end[-1] != '\\'))) end++;
        if (!*end) break; /* text after the last '|' is no cell */
        *end = '\0';
        while (*p == ' ') p++;
        for (char *q = end - 1; q >= p && *q == ' '; q--) *q = '\0';
        for (char *q = p, *w = p;; q++) { /* "\|" -> "|" */
            if (q[0] == '\\' && q[1] == '|') q++;
            if (!(*w++ = *q)) break;
        }
        fputs(head ? "<th>" : "<td>", f);
        html_text(f, p);
        fputs(head ? "</th>" : "</td>", f);
        p = end + 1;
    }
    fputs("</tr>\n", f);
}

static int write_html(const json_t *rep, FILE *f, kbv_err *err) {
    char *figures = NULL; /* drawn first: a failure leaves no half-written page */
    if (charts_html(rep, &figures, err) < 0) return -1;
    fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>kbv report</title>\n"
               "<style>body{font-family:sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;font-size:90%%}"
               "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}th{background:#eee}"
               ".charts{display:flex;flex-wrap:wrap;gap:1em}.charts figure{flex:1 1 560px;max-width:760px}"
               "figure{margin:0 0 1.5em 0;max-width:760px}figure svg{width:100%%;height:auto}figcaption{font-size:90%%}</style></head><body>\n"
               "<h1>kbv report</h1>\n<p>Verified protocol (hidden inputs, float64 oracle, TF32 baseline) beside the standard "
               "protocol (KernelBench's check and timing). fast_p: share of all candidates verified and faster than p.</p>\n");
    /* The Markdown form's tables and their titles ("**...**" lines), as HTML. */
    kbv_err e2;
    char *buf = NULL;
    size_t blen = 0;
    FILE *mem = open_memstream(&buf, &blen);
    int ok = mem && report_write(rep, "md", mem, &e2) == 0;
    if (mem) fclose(mem);
    int in_table = 0;
    for (char *save = NULL, *ln = ok ? strtok_r(buf, "\n", &save) : NULL; ln; ln = strtok_r(NULL, "\n", &save)) {
        size_t len = strlen(ln);
        if (ln[0] == '|' && strncmp(ln, "|---", 4) == 0) continue; /* the rule under a header */
        if (ln[0] == '|') {
            if (!in_table) fputs("<table>\n", f);
            html_row(f, ln, !in_table);
            in_table = 1;
            continue;
        }
        if (in_table) fputs("</table>\n", f), in_table = 0;
        int bold = len > 4 && strncmp(ln, "**", 2) == 0 && strcmp(ln + len - 2, "**") == 0;
        if (bold) ln[len - 2] = '\0', ln += 2;
        fputs(bold ? "<p><strong>" : "<p>", f);
        html_text(f, ln);
        fputs(bold ? "</strong></p>\n" : "</p>\n", f);
    }
    if (in_table) fputs("</table>\n", f);
    free(buf);
    fprintf(f, "%s</body></html>\n", figures);
    free(figures);
    return ferror(f) ? kbv_seterr(err, "cannot write the report") : 0;
}

/* A group's name in a CSV field (quotes doubled) or a Markdown cell ('|' escaped, no line
 * breaks); the table's as it is (the whole text goes through kbv_fputs_safe). */
static void group_name(FILE *f, const char *name, int csv, int md) {
    for (const char *p = name; *p; p++) {
        if (csv && *p == '"') fputs("\"\"", f);
        else if (md && *p == '|') fputs("\\|", f);
        else if (md && (*p == '\n' || *p == '\r')) fputc(' ', f);
        else fputc(*p, f);
    }
}

static int write_text(const json_t *rep, const char *format, FILE *f, kbv_err *err);

int report_write(const json_t *rep, const char *format, FILE *f, kbv_err *err) {
    if (strcmp(format, "html") == 0) return write_html(rep, f, err);
    if (strcmp(format, "json") == 0) {
        if (json_dumpf(rep, f, JSON_INDENT(2) | JSON_SORT_KEYS) < 0 || fputc('\n', f) == EOF) return kbv_seterr(err, "cannot write the report");
        return 0;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return kbv_seterr(err, "out of memory");
    int rc = write_text(rep, format, m, err);
    if (fclose(m) != 0 && rc == 0) rc = kbv_seterr(err, "out of memory");
    if (rc == 0) kbv_fputs_safe(buf, f);
    free(buf);
    return rc == 0 && ferror(f) ? kbv_seterr(err, "cannot write the report") : rc;
}

/* table, md, csv */
static int write_text(const json_t *rep, const char *format, FILE *f, kbv_err *err) {
    /* Groups: overall, then models, then levels. */
    const char *gname[512];
    const json_t *gval[512];
    int ng = 0;
    gname[ng] = "overall", gval[ng++] = json_object_get(rep, "overall");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)json_object_get(rep, "models"), k, v) if (ng < 511) gname[ng] = k, gval[ng++] = v;
    char lvname[64][24];
    int nl = 0;
    json_object_foreach((json_t *)json_object_get(rep, "levels"), k, v) if (ng < 511 && nl < 64) {
        snprintf(lvname[nl], sizeof lvname[nl], "level %s", k);
        gname[ng] = lvname[nl++], gval[ng++] = v;
    }
    char c[16][48];
    int csv = strcmp(format, "csv") == 0, md = strcmp(format, "md") == 0, table = strcmp(format, "table") == 0;
    if (!csv && !md && !table) return kbv_seterr(err, "unknown format '%s' (json, table, md, csv)", format);
    if (csv) {
        fprintf(f, "\"group\"");
        for (int i = 0; i < 15; i++) fprintf(f, ",\"%s\"", kHead[i]); /* quoted: "geomean (all, fallback 1)" holds a comma */
        fputc('\n', f);
    } else if (md) {
        fprintf(f, "| group |");
        for (int i = 0; i < 15; i++) fprintf(f, " %s |", kHead[i]);
        fprintf(f, "\n|---|");
        for (int i = 0; i < 15; i++) fprintf(f, "---|");
        fputc('\n', f);
    } else {
        fprintf(f, "%-16s %5s %8s %7s %9s %5s %6s %7s %8s  %-26s %-26s %6s %8s | %7s %8s  %s\n", "group", "n", "verified", "overfit", "incorrect",
                "hack", "errors", "fast_1", "fast_1.5", "geomean (correct)", "geomean (all, fb 1)", "memreg", "authored", "std ok", "std f_1",
                "std geomean");
    }
    for (int g = 0; g < ng; g++) {
        cells(gval[g], c);
        if (csv) {
            fputc('"', f), group_name(f, gname[g], 1, 0), fputc('"', f);
            for (int i = 0; i < 15; i++) fprintf(f, ",\"%s\"", c[i]);
            fputc('\n', f);
        } else if (md) {
            fputs("| ", f), group_name(f, gname[g], 0, 1), fputs(" |", f);
            for (int i = 0; i < 15; i++) fprintf(f, " %s |", c[i]);
            fputc('\n', f);
        } else {
            fprintf(f, "%-16.16s %5s %8s %7s %9s %5s %6s %7s %8s  %-26s %-26s %6s %8s | %7s %8s  %s\n", gname[g], c[0], c[1], c[2], c[3], c[4], c[5],
                    c[6], c[7], c[8], c[9], c[10], c[11], c[12], c[13], c[14]);
        }
    }
    long long unverifiable = json_integer_value(json_object_get(json_object_get(rep, "overall"), "weights_unverifiable"));
    if (table && unverifiable > 0)
        fprintf(f, "weights_unverifiable: %lld evaluation(s) ran no weight case (the candidate's state_dict does not map onto the reference's)\n",
                unverifiable);
    /* the paper's tables after the groups (docs/results.md, "The paper's tables") */
    if (tables_write(json_object_get(rep, "paper_tables"), format, f, err) < 0) return -1;
    return ferror(f) ? kbv_seterr(err, "cannot write the report") : 0;
}
