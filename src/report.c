/* report.c -- `kbv report` (see report.h). */
#include "report.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static const double kP[6] = {0, 0.5, 0.8, 1, 1.5, 2};
static const char *kPName[6] = {"0", "0.5", "0.8", "1", "1.5", "2"};

static int is_error(const char *s) {
    return strcmp(s, "compile_error") == 0 || strcmp(s, "runtime_error") == 0 || strcmp(s, "timeout") == 0 ||
           strcmp(s, "crash") == 0 || strcmp(s, "problem_error") == 0;
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
    int verified = 0, overfit = 0, incorrect = 0, hack = 0, errors = 0, mem_n = 0, mem_up = 0, std_n = 0, std_err = 0;
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
        (void)std_err;
    }
    json_t *v = metrics(n, ok, sp, seed);
    json_t *o = json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:O, s:O, s:o, s:o}", "n", n, "verified", verified, "overfit", overfit,
                          "incorrect", incorrect, "hack", hack, "errors", errors, "fast_p", json_object_get(v, "fast_p"),
                          "geomean_speedup", json_object_get(v, "geomean_speedup"), "memory_regression_rate",
                          mem_n ? json_real((double)mem_up / mem_n) : json_null(), "hacks_by_detector", byhack);
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

int report_build(const char *db_path, json_t **out, kbv_err *err) {
    *out = NULL;
    sqlite3 *h = NULL;
    if (sqlite3_open_v2(db_path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        kbv_seterr(err, "database %s: %s", db_path, h ? sqlite3_errmsg(h) : "cannot open");
        sqlite3_close(h);
        return -1;
    }
    sqlite3_busy_timeout(h, 10000);
    /* The latest evaluation of every key: a re-run replaces, shards merged add up. */
    long long stored = 0;
    sqlite3_stmt *cnt = NULL;
    if (sqlite3_prepare_v2(h, "SELECT COUNT(*) FROM evaluations", -1, &cnt, NULL) == SQLITE_OK && sqlite3_step(cnt) == SQLITE_ROW)
        stored = sqlite3_column_int64(cnt, 0);
    sqlite3_finalize(cnt);
    const char *sql = "SELECT model, level, status, speedup, peak_ratio, std_status, std_correct, std_speedup, hacks FROM evaluations"
                      " WHERE id IN (SELECT MAX(id) FROM evaluations GROUP BY key) ORDER BY key";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
        kbv_seterr(err, "database %s: %s (not a kbv results database?)", db_path, sqlite3_errmsg(h));
        sqlite3_close(h);
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
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        kbv_seterr(err, "database %s: %s", db_path, rc == SQLITE_ROW ? "out of memory" : sqlite3_errmsg(h));
        sqlite3_close(h), free(rows);
        return -1;
    }
    sqlite3_close(h);
    json_t *rep = json_object(), *models = json_object(), *levels = json_object();
    json_object_set_new(rep, "overall", report_metrics(rows, n, 0x5eed));
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
    free(sub), free(rows);
    json_object_set_new(rep, "models", models);
    json_object_set_new(rep, "levels", levels);
    json_object_set_new(rep, "evaluations", json_pack("{s:I, s:i}", "stored", (json_int_t)stored, "distinct", n));
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
    else snprintf(out, n, "%.3f [%.3f, %.3f]", json_number_value(v), json_number_value(json_array_get(ci, 0)),
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
    if (json_is_object(s)) {
        snprintf(c[11], 48, "%lld", (long long)json_integer_value(json_object_get(s, "correct")));
        snprintf(c[12], 48, "%.3f", num(s, "fast_p", "1"));
        fmt_g(c[13], 48, json_object_get(json_object_get(s, "geomean_speedup"), "correct_only"));
    } else {
        snprintf(c[11], 48, "-"), snprintf(c[12], 48, "-"), snprintf(c[13], 48, "-");
    }
}

static const char *kHead[14] = {"n", "verified", "overfit", "incorrect", "hack", "errors", "fast_1", "fast_1.5",
                                "geomean (correct)", "geomean (all, fallback 1)", "mem regression", "std correct",
                                "std fast_1", "std geomean (correct)"};

int report_write(const json_t *rep, const char *format, FILE *f, kbv_err *err) {
    if (strcmp(format, "json") == 0) {
        if (json_dumpf(rep, f, JSON_INDENT(2) | JSON_SORT_KEYS) < 0 || fputc('\n', f) == EOF) return kbv_seterr(err, "cannot write the report");
        return 0;
    }
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
        fprintf(f, "group");
        for (int i = 0; i < 14; i++) fprintf(f, ",%s", kHead[i]);
        fputc('\n', f);
    } else if (md) {
        fprintf(f, "| group |");
        for (int i = 0; i < 14; i++) fprintf(f, " %s |", kHead[i]);
        fprintf(f, "\n|---|");
        for (int i = 0; i < 14; i++) fprintf(f, "---|");
        fputc('\n', f);
    } else {
        fprintf(f, "%-16s %5s %8s %7s %9s %5s %6s %7s %8s  %-26s %-26s %6s | %7s %8s  %s\n", "group", "n", "verified",
                "overfit", "incorrect", "hack", "errors", "fast_1", "fast_1.5", "geomean (correct)", "geomean (all, fb 1)",
                "memreg", "std ok", "std f_1", "std geomean");
    }
    for (int g = 0; g < ng; g++) {
        cells(gval[g], c);
        if (csv) {
            fprintf(f, "\"%s\"", gname[g]);
            for (int i = 0; i < 14; i++) fprintf(f, ",\"%s\"", c[i]);
            fputc('\n', f);
        } else if (md) {
            fprintf(f, "| %s |", gname[g]);
            for (int i = 0; i < 14; i++) fprintf(f, " %s |", c[i]);
            fputc('\n', f);
        } else {
            fprintf(f, "%-16.16s %5s %8s %7s %9s %5s %6s %7s %8s  %-26s %-26s %6s | %7s %8s  %s\n", gname[g], c[0], c[1], c[2],
                    c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11], c[12], c[13]);
        }
    }
    return ferror(f) ? kbv_seterr(err, "cannot write the report") : 0;
}
