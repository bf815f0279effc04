/* exchange.c -- `kbv import` and `kbv export` (see exchange.h; docs/results.md, "Exchange with
 * KernelBench").
 *
 * Import reads a whole file, checks every entry, and only then opens the database and writes
 * the run and its evaluations in one transaction: a bad file leaves nothing behind. Export
 * reads the latest evaluation of every key and writes the file through a temporary one
 * renamed into place, so a failure leaves no half-written file. Neither judges or measures
 * anything: the figures are the stored ones.
 */
#include "exchange.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db.h"

#define SAMPLES_PER_PROBLEM_MAX 10000 /* one problem's list in KernelBench's format */

const char *exchange_format_name(exchange_format f) {
    return f == EXCHANGE_KERNELBENCH ? "kernelbench" : f == EXCHANGE_KERNELBENCH_LEGACY ? "kernelbench_legacy" : "kbv_paper";
}

int exchange_parse_id(const char *s, int lo, int hi) {
    size_t n = strlen(s);
    if (n == 0 || n > 6 || (n > 1 && s[0] == '0')) return -1; /* "019" would be a second name of 19 */
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v >= lo && v <= hi ? v : -1;
}

int exchange_parse_key(const char *key, int *pid, int *sid) {
    const char *us = strrchr(key, '_');
    if (!us || us == key || (size_t)(us - key) > 6) return -1;
    char p[8];
    memcpy(p, key, (size_t)(us - key));
    p[us - key] = '\0';
    int a = exchange_parse_id(p, 1, EXCHANGE_ID_MAX), b = exchange_parse_id(us + 1, 0, EXCHANGE_ID_MAX);
    if (a < 0 || b < 0) return -1;
    *pid = a, *sid = b;
    return 0;
}

int exchange_problem_id(const char *path) {
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    const char *us = strchr(base, '_');
    if (!us || us == base || (size_t)(us - base) > 6 || !us[1]) return -1;
    char p[8];
    memcpy(p, base, (size_t)(us - base));
    p[us - base] = '\0';
    return exchange_parse_id(p, 1, EXCHANGE_ID_MAX);
}

/* A JSON value's kind in words, for messages. */
static const char *kind(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "a list";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

int exchange_detect(const json_t *root, exchange_format *fmt, kbv_err *err) {
    if (!json_is_object(root)) return kbv_seterr(err, "not an eval_results.json: the file is %s, not an object of results", kind(root));
    if (json_object_size(root) == 0) return kbv_seterr(err, "no results in it (an empty object)");
    if (json_object_size(root) > EXCHANGE_ENTRIES_MAX) return kbv_seterr(err, "more than %d entries", EXCHANGE_ENTRIES_MAX);
    int have = -1;
    const char *first = NULL, *k;
    const json_t *v;
    json_object_foreach((json_t *)root, k, v) {
        int p, s, f = -1;
        if (json_is_array(v) && exchange_parse_id(k, 1, EXCHANGE_ID_MAX) >= 0) f = EXCHANGE_KERNELBENCH;
        else if (json_is_object(v) && exchange_parse_id(k, 1, EXCHANGE_ID_MAX) >= 0) f = EXCHANGE_KERNELBENCH_LEGACY;
        else if (json_is_object(v) && exchange_parse_key(k, &p, &s) == 0) f = EXCHANGE_KBV_PAPER;
        if (f < 0)
            return kbv_seterr(err,
                              "entry \"%.40s\" (%s): not a problem id with a list of samples (KernelBench), a problem id with one "
                              "sample (KernelBench, older) or \"P_S\" with one sample (the KernelBench-Verified paper harness)",
                              k, kind(v));
        if (have >= 0 && f != have)
            return kbv_seterr(err, "mixes formats: entry \"%.40s\" is %s's, entry \"%.40s\" %s's", first, exchange_format_name((exchange_format)have),
                              k, exchange_format_name((exchange_format)f));
        if (have < 0) have = f, first = k;
    }
    *fmt = (exchange_format)have;
    return 0;
}

/* A field that must be a boolean. */
static int need_bool(const json_t *e, const char *field, const char *where, int *out, kbv_err *err) {
    const json_t *v = json_object_get(e, field);
    if (!v) return kbv_seterr(err, "%s: no \"%s\"", where, field);
    if (!json_is_boolean(v)) return kbv_seterr(err, "%s: \"%s\" must be true or false, not %s", where, field, kind(v));
    *out = json_is_true(v);
    return 0;
}

/* A field that may be a number or null (or absent): the number, or -1 when not measured
 * (null, absent, or negative: the harnesses write -1.0). */
static int opt_number(const json_t *e, const char *field, const char *where, double hi, double *out, kbv_err *err) {
    const json_t *v = json_object_get(e, field);
    *out = -1;
    if (!v || json_is_null(v)) return 0;
    if (!json_is_number(v)) return kbv_seterr(err, "%s: \"%s\" must be a number, not %s", where, field, kind(v));
    double x = json_number_value(v);
    if (!isfinite(x) || x > hi) return kbv_seterr(err, "%s: \"%s\" out of range (%g)", where, field, x);
    *out = x >= 0 ? x : -1;
    return 0;
}

/* A field that may be absent, but is an object when present. */
static int opt_object(const json_t *e, const char *field, const char *where, kbv_err *err) {
    const json_t *v = json_object_get(e, field);
    if (v && !json_is_object(v)) return kbv_seterr(err, "%s: \"%s\" must be an object, not %s", where, field, kind(v));
    return 0;
}

/* The file's verdict in kbv's names (the harnesses' metadata says why a sample failed). */
static const char *entry_status(int compiled, int correct, const json_t *md) {
    if (!compiled) return "compile_error";
    if (correct) return "verified";
    const json_t *es = json_object_get(md, "eval_status");
    if (json_is_string(es) && strcmp(json_string_value(es), "timeout") == 0) return "timeout";
    if (json_object_get(md, "runtime_error") || json_object_get(md, "cuda_error") || json_object_get(md, "other_error") ||
        (json_is_string(es) && strcmp(json_string_value(es), "eval_exception") == 0))
        return "runtime_error";
    return "incorrect";
}

int exchange_entry_read(const json_t *e, int pid, int sid, const char *where, exchange_entry *out, kbv_err *err) {
    memset(out, 0, sizeof *out);
    if (!json_is_object(e)) return kbv_seterr(err, "%s: a sample must be an object, not %s", where, kind(e));
    size_t size = json_dumpb(e, NULL, 0, JSON_COMPACT);
    if (size == 0 || size > EXCHANGE_ENTRY_MAX) return kbv_seterr(err, "%s: larger than %d bytes", where, EXCHANGE_ENTRY_MAX);
    const json_t *s = json_object_get(e, "sample_id");
    if (!s) return kbv_seterr(err, "%s: no \"sample_id\"", where);
    if (!json_is_integer(s) || json_integer_value(s) < 0 || json_integer_value(s) > EXCHANGE_ID_MAX)
        return kbv_seterr(err, "%s: \"sample_id\" must be an integer from 0 to %d, not %s", where, EXCHANGE_ID_MAX,
                          json_is_integer(s) ? "that" : kind(s));
    if (sid >= 0 && json_integer_value(s) != sid)
        return kbv_seterr(err, "%s: \"sample_id\" is %lld, but its key says sample %d", where, (long long)json_integer_value(s), sid);
    int compiled, correct;
    if (need_bool(e, "compiled", where, &compiled, err) < 0 || need_bool(e, "correctness", where, &correct, err) < 0) return -1;
    if (opt_number(e, "runtime", where, 1e12, &out->runtime_ms, err) < 0 || opt_number(e, "peak_memory", where, 1e18, &out->peak_bytes, err) < 0)
        return -1;
    if (opt_object(e, "metadata", where, err) < 0 || opt_object(e, "runtime_stats", where, err) < 0 || opt_object(e, "memory_stats", where, err) < 0)
        return -1;
    if (out->runtime_ms == 0) out->runtime_ms = -1; /* no time a speedup can divide by */
    out->pid = pid, out->sid = (int)json_integer_value(s);
    out->compiled = compiled, out->correct = compiled && correct;
    out->status = entry_status(compiled, out->correct, json_object_get(e, "metadata"));
    out->entry = e;
    return 0;
}

static int entry_cmp(const void *a, const void *b) {
    const exchange_entry *x = a, *y = b;
    return x->pid != y->pid ? (x->pid < y->pid ? -1 : 1) : x->sid != y->sid ? (x->sid < y->sid ? -1 : 1) : 0;
}

int exchange_entries(const json_t *root, exchange_format fmt, exchange_entry **out, int *n, kbv_err *err) {
    *out = NULL, *n = 0;
    size_t total = 0;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)root, k, v) total += json_is_array(v) ? json_array_size(v) : 1;
    if (total > EXCHANGE_ENTRIES_MAX) return kbv_seterr(err, "more than %d samples", EXCHANGE_ENTRIES_MAX);
    if (total == 0) return kbv_seterr(err, "no samples in it (every problem's list is empty)");
    exchange_entry *a = calloc(total, sizeof *a);
    if (!a) return kbv_seterr(err, "out of memory");
    int m = 0, rc = 0;
    char where[96];
    json_object_foreach((json_t *)root, k, v) {
        int pid, sid = -1;
        if (fmt == EXCHANGE_KBV_PAPER) {
            exchange_parse_key(k, &pid, &sid); /* exchange_detect checked it */
            snprintf(where, sizeof where, "entry \"%s\"", k);
            rc = exchange_entry_read(v, pid, sid, where, &a[m++], err);
        } else if (fmt == EXCHANGE_KERNELBENCH_LEGACY) {
            pid = exchange_parse_id(k, 1, EXCHANGE_ID_MAX);
            snprintf(where, sizeof where, "entry \"%s\"", k);
            rc = exchange_entry_read(v, pid, -1, where, &a[m++], err);
        } else {
            pid = exchange_parse_id(k, 1, EXCHANGE_ID_MAX);
            if (json_array_size(v) > SAMPLES_PER_PROBLEM_MAX) rc = kbv_seterr(err, "entry \"%s\": more than %d samples", k, SAMPLES_PER_PROBLEM_MAX);
            for (size_t i = 0; rc == 0 && i < json_array_size(v); i++) {
                snprintf(where, sizeof where, "entry \"%s\", sample %zu", k, i);
                rc = exchange_entry_read(json_array_get(v, i), pid, -1, where, &a[m++], err);
            }
        }
        if (rc < 0) break;
    }
    if (rc == 0) {
        qsort(a, (size_t)m, sizeof *a, entry_cmp);
        for (int i = 1; i < m && rc == 0; i++)
            if (entry_cmp(&a[i - 1], &a[i]) == 0) rc = kbv_seterr(err, "problem %d sample %d is given twice", a[i].pid, a[i].sid);
    }
    if (rc < 0) {
        free(a);
        return -1;
    }
    *out = a, *n = m;
    return 0;
}

int exchange_baseline(const json_t *baseline, int level, int pid, const char *name, double *mean_ms, double *peak_bytes, kbv_err *err) {
    *mean_ms = 0, *peak_bytes = -1;
    char lv[24];
    snprintf(lv, sizeof lv, "level%d", level);
    const json_t *l = json_object_get(baseline, lv);
    if (!json_is_object(l)) return kbv_seterr(err, "\"%s\" must be an object of problem files, not %s", lv, l ? kind(l) : "missing");
    const json_t *e = name ? json_object_get(l, name) : NULL;
    const char *found = name, *k;
    const json_t *v;
    if (!e) {
        json_object_foreach((json_t *)l, k, v) {
            if (exchange_problem_id(k) != pid) continue;
            if (e) return kbv_seterr(err, "\"%s\": two entries for problem %d: \"%.60s\" and \"%.60s\"", lv, pid, found, k);
            e = v, found = k;
        }
    }
    if (!e) return 0;
    if (json_is_null(e)) return 1; /* skipped by the baseline's harness (e.g. no bf16) */
    char where[160];
    snprintf(where, sizeof where, "\"%s\": \"%.80s\"", lv, found);
    if (!json_is_object(e)) return kbv_seterr(err, "%s must be an object or null, not %s", where, kind(e));
    double mean;
    if (opt_number(e, "mean", where, 1e12, &mean, err) < 0 || opt_number(e, "peak_memory", where, 1e18, peak_bytes, err) < 0) return -1;
    *mean_ms = mean > 0 ? mean : 0;
    return 1;
}

/* ---- import -------------------------------------------------------------------------- */

/* Read and parse a JSON file an import names: a regular file of at most EXCHANGE_FILE_MAX
 * bytes, JSON without duplicate keys. abs (PATH_MAX) gets its absolute path, sha its bytes'
 * SHA-256 (both may be NULL). */
static int load_json(const char *path, json_t **out, char *abs, char sha[65], kbv_err *err) {
    struct stat sb;
    *out = NULL;
    if (stat(path, &sb) < 0) return kbv_seterr(err, "%s: %s", path, strerror(errno));
    if (S_ISDIR(sb.st_mode)) return kbv_seterr(err, "%s: is a folder, not a JSON file", path);
    if (!S_ISREG(sb.st_mode)) return kbv_seterr(err, "%s: not a regular file", path);
    if (sb.st_size > EXCHANGE_FILE_MAX) return kbv_seterr(err, "%s: larger than %d MiB: not an eval_results.json", path, EXCHANGE_FILE_MAX >> 20);
    if (abs && kbv_abspath(path, abs, PATH_MAX, err) < 0) return -1;
    char *data = NULL;
    size_t len = 0;
    if (kbv_read_file(path, &data, &len, err) < 0) return -1;
    if (len > EXCHANGE_FILE_MAX) { /* it grew meanwhile */
        free(data);
        return kbv_seterr(err, "%s: larger than %d MiB: not an eval_results.json", path, EXCHANGE_FILE_MAX >> 20);
    }
    if (sha) kbv_sha256_hex(data, len, sha);
    json_error_t je;
    *out = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
    free(data);
    if (!*out) return kbv_seterr(err, "%s:%d: not JSON: %s", path, je.line, je.text);
    return 0;
}

/* DIR/levelL/P_*.py (the first in name order, as KernelBench's names are unique per id). 0,
 * or -1. */
static int find_problem(const char *kb, int level, int pid, char *out, size_t n) {
    char dir[PATH_MAX], best[256] = "";
    snprintf(dir, sizeof dir, "%s/level%d", kb, level);
    DIR *d = opendir(dir);
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (l > 3 && l < sizeof best && strcmp(e->d_name + l - 3, ".py") == 0 && exchange_problem_id(e->d_name) == pid &&
            (!best[0] || strcmp(e->d_name, best) < 0))
            snprintf(best, sizeof best, "%s", e->d_name);
    }
    closedir(d);
    return best[0] && snprintf(out, n, "%s/%s", dir, best) < (int)n ? 0 : -1;
}

/* A file as the problems and candidates tables hold it: {path, name, sha256} (absolute path,
 * stem), or NULL when it cannot be read. */
static json_t *file_id(const char *path) {
    char abs[PATH_MAX], sha[65], stem[256];
    kbv_err e2;
    if (kbv_abspath(path, abs, sizeof abs, &e2) < 0 || kbv_sha256_file(abs, sha, &e2) < 0) return NULL;
    kbv_stem(abs, stem, sizeof stem);
    return json_pack("{s:s, s:s, s:s}", "path", abs, "name", stem, "sha256", sha);
}

/* A number, or null where there is none (jansson has no NaN). */
static json_t *num_or_null(int have, double v) { return have && isfinite(v) ? json_real(v) : json_null(); }

/* One imported sample, ready to store. */
typedef struct import_row {
    char key[300];
    json_t *result;          /* the stored result (owned) */
    const json_t *problem;   /* borrowed from result: {path, name, sha256} (sha256 null: no file) */
    const json_t *candidate; /* the same for the kernel file beside the source */
    int sid;
    int std; /* the standard protocol's std_* columns are set */
    const char *std_status;
    int std_correct;
    double std_speedup; /* <= 0: none */
    int paper;          /* the same for the paper protocol's paper_* columns */
    const char *paper_status;
    int paper_correct;
    double paper_speedup;
} import_row;

/* A baseline file an import reads: KernelBench's baseline_time format. */
typedef struct import_base {
    const char *opt, *path; /* the option naming it ("--baseline"), and the file (NULL: none) */
    json_t *root;
    char abs[PATH_MAX], sha[65];
} import_base;

/* Everything an import reads, before any of it is stored. */
typedef struct import_src {
    const exchange_import_opts *o;
    char path[PATH_MAX], abs[PATH_MAX], sha[65];
    exchange_format fmt;
    json_t *root, *hidden_root;
    exchange_entry *e, *h;
    int n, nh;
    char hidden_abs[PATH_MAX], hidden_sha[65], kb_abs[PATH_MAX];
    import_base base[2]; /* --baseline (TF32 for the paper), --baseline-fp32 (the paper's only) */
} import_src;

static void import_src_free(import_src *s) {
    json_decref(s->root), json_decref(s->hidden_root), json_decref(s->base[0].root), json_decref(s->base[1].root);
    free(s->e), free(s->h);
}

/* The hidden entry of (pid, sid), or NULL. */
static const exchange_entry *hidden_of(const import_src *s, int pid, int sid) {
    exchange_entry k = {.pid = pid, .sid = sid};
    return s->h ? bsearch(&k, s->h, (size_t)s->nh, sizeof k, entry_cmp) : NULL;
}

static int base_read(import_base *b, int level, kbv_err *err) {
    if (!b->path) return 0;
    if (load_json(b->path, &b->root, b->abs, b->sha, err) < 0) return -1;
    char lv[24];
    snprintf(lv, sizeof lv, "level%d", level);
    if (!json_is_object(b->root) || !json_is_object(json_object_get(b->root, lv)))
        return kbv_seterr(err, "%s: not a baseline_time file with \"%s\": {\"P_Name.py\": {\"mean\": ms, ...}} (KernelBench's)", b->path, lv);
    return 0;
}

/* Read the source, the hidden and the baseline files and check them. */
static int import_read(import_src *s, kbv_err *err) {
    const exchange_import_opts *o = s->o;
    struct stat sb;
    snprintf(s->path, sizeof s->path, "%s", o->source);
    if (stat(o->source, &sb) == 0 && S_ISDIR(sb.st_mode)) snprintf(s->path, sizeof s->path, "%s/eval_results.json", o->source); /* a run folder */
    if (load_json(s->path, &s->root, s->abs, s->sha, err) < 0) return -1;
    if (exchange_detect(s->root, &s->fmt, err) < 0 || exchange_entries(s->root, s->fmt, &s->e, &s->n, err) < 0)
        return kbv_wraperr(err, "%s", s->path);
    if (s->fmt != EXCHANGE_KBV_PAPER && (o->hidden || o->baseline_fp32))
        return kbv_seterr(err, "%s: %s goes with the paper harness's eval_results.json (\"P_S\" keys), and this one is in %s format", s->path,
                          o->hidden ? "--hidden" : "--baseline-fp32", s->fmt == EXCHANGE_KERNELBENCH ? "KernelBench's" : "KernelBench's older");
    if (o->fp32_tolerance > 0 && !o->hidden)
        return kbv_seterr(err, "--fp32-tolerance re-thresholds the hidden file's failures: it goes with --hidden eval_results_hidden.json");
    if (o->hidden) {
        exchange_format hf;
        if (load_json(o->hidden, &s->hidden_root, s->hidden_abs, s->hidden_sha, err) < 0) return -1;
        if (exchange_detect(s->hidden_root, &hf, err) < 0 || exchange_entries(s->hidden_root, hf, &s->h, &s->nh, err) < 0)
            return kbv_wraperr(err, "%s", o->hidden);
        if (hf != EXCHANGE_KBV_PAPER)
            return kbv_seterr(err, "%s: not the paper harness's format (\"P_S\" keys) but %s", o->hidden, exchange_format_name(hf));
        for (int i = 0; i < s->nh; i++) /* a hidden verdict of a sample the source lacks would count nowhere */
            if (!bsearch(&s->h[i], s->e, (size_t)s->n, sizeof *s->e, entry_cmp))
                return kbv_seterr(err, "%s: problem %d sample %d is not in %s", o->hidden, s->h[i].pid, s->h[i].sid, s->path);
    }
    s->base[0] = (import_base){.opt = "--baseline", .path = o->baseline};
    s->base[1] = (import_base){.opt = "--baseline-fp32", .path = o->baseline_fp32};
    if (base_read(&s->base[0], o->level, err) < 0 || base_read(&s->base[1], o->level, err) < 0) return -1;
    if (o->kernelbench) {
        char lvdir[PATH_MAX];
        snprintf(lvdir, sizeof lvdir, "%s/level%d", o->kernelbench, o->level);
        if (stat(lvdir, &sb) < 0 || !S_ISDIR(sb.st_mode))
            return kbv_seterr(err, "%s: no folder level%d in it: not KernelBench's problem folder (KernelBench/KernelBench in its checkout)",
                              o->kernelbench, o->level);
        if (kbv_abspath(o->kernelbench, s->kb_abs, sizeof s->kb_abs, err) < 0) return -1;
    }
    return 0;
}

/* A baseline's mean (ms, 0: none) and peak memory (bytes, -1: none) for problem pid. */
static int base_of(const import_src *s, int k, int pid, const char *pname, double *ms, double *peak, kbv_err *err) {
    *ms = 0, *peak = -1;
    const import_base *b = &s->base[k];
    if (b->root && exchange_baseline(b->root, s->o->level, pid, pname, ms, peak, err) < 0) return kbv_wraperr(err, "%s", b->path);
    return 0;
}

/* Python's truth of a JSON value (null, false, 0, "", [] and {} are false), as the paper's
 * leaderboard reads `not metadata.get(k)`. */
static int truthy(const json_t *v) {
    switch (v ? json_typeof(v) : JSON_NULL) {
    case JSON_OBJECT: return json_object_size(v) > 0;
    case JSON_ARRAY: return json_array_size(v) > 0;
    case JSON_STRING: return json_string_length(v) > 0;
    case JSON_INTEGER:
    case JSON_REAL: return json_number_value(v) != 0;
    case JSON_TRUE: return 1;
    default: return 0;
    }
}

/* A max_difference value as Python's float() reads it: a number, or a decimal string with
 * optional surrounding space. 0, or -1 (the leaderboard then keeps the verdict). */
static int diff_value(const json_t *v, double *out) {
    if (json_is_number(v)) return *out = json_number_value(v), 0;
    const char *t = json_string_value(v);
    if (!t || strpbrk(t, "xX")) return -1; /* strtod's hexadecimal is no float() */
    char *end;
    errno = 0;
    *out = strtod(t, &end);
    while (*end == ' ' || *end == '\t' || *end == '\n') end++;
    return errno || end == t || *end ? -1 : 0;
}

/* The paper leaderboard's re-threshold (generate_leaderboard.py --fp32_tolerance): a failed
 * hidden entry whose metadata has no hidden_failed_configs, hidden_runtime_error or
 * runtime_error failed only the standard trials, and is counted correct when the largest of
 * its max_difference values (empty strings skipped) is below tol. 1 with *worst, or 0 (also
 * where the leaderboard's float() or max() would raise, or a value is NaN). */
static int rethreshold(const json_t *h, double tol, double *worst) {
    const json_t *md = json_object_get(h, "metadata"), *d = json_object_get(md, "max_difference"), *v;
    if (tol <= 0 || json_is_true(json_object_get(h, "correctness"))) return 0;
    if (truthy(json_object_get(md, "hidden_failed_configs")) || truthy(json_object_get(md, "hidden_runtime_error")) ||
        truthy(json_object_get(md, "runtime_error")) || !json_is_array(d))
        return 0;
    int any = 0;
    size_t i;
    json_array_foreach(d, i, v) {
        double x;
        if (json_is_string(v) && json_string_length(v) == 0) continue;
        if (diff_value(v, &x) < 0 || isnan(x)) return 0;
        if (!any || x > *worst) *worst = x;
        any = 1;
    }
    return any && *worst < tol;
}

/* Why a sample that passed the standard trials failed the hidden ones, in kbv's names: an
 * error (the hidden entry's own, or a hidden_runtime_error or hidden_check_error):
 * runtime_error, timeout or compile_error; a failed config_1 (the x1 draw, kbv's
 * EXCHANGE_CONFIG_FMT): incorrect, as kbv's paper protocol names a failed x1 variant; any
 * other failed config: overfit. */
static const char *hidden_status(const exchange_entry *h) {
    const json_t *md = json_object_get(h->entry, "metadata"), *v;
    if (strcmp(h->status, "incorrect") != 0) return h->status;
    if (truthy(json_object_get(md, "hidden_runtime_error")) || truthy(json_object_get(md, "hidden_check_error"))) return "runtime_error";
    size_t i;
    char first[24];
    snprintf(first, sizeof first, EXCHANGE_CONFIG_FMT, 1);
    json_array_foreach(json_object_get(md, "hidden_failed_configs"), i, v) {
        if (json_is_string(v) && strcmp(json_string_value(v), first) == 0) return "incorrect";
    }
    return "overfit";
}

/* The protocol part of one sample's result: result.standard (KernelBench's file) or
 * result.paper (the paper harness's, hidden-gated where the hidden file is given; the shape of
 * kbv's own paper protocol, docs/cli.md). Fills the row's std_* columns. */
static int import_verdict(const import_src *s, const exchange_entry *x, const char *pname, import_row *row, json_t *res, kbv_err *err) {
    double base_ms, base_peak, fp32_ms, fp32_peak;
    if (base_of(s, 0, x->pid, pname, &base_ms, &base_peak, err) < 0 || base_of(s, 1, x->pid, pname, &fp32_ms, &fp32_peak, err) < 0) return -1;
    if (s->fmt != EXCHANGE_KBV_PAPER) {
        int timed = x->correct && x->runtime_ms > 0;
        row->std = 1, row->std_status = x->status, row->std_correct = x->correct;
        row->std_speedup = timed && base_ms > 0 ? base_ms / x->runtime_ms : 0;
        json_object_set_new(res, "standard",
                            json_pack("{s:b, s:s, s:b, s:o, s:{s:o, s:o}}", "correct", x->correct, "status", x->status, "compiled", x->compiled,
                                      "speedup", num_or_null(row->std_speedup > 0, row->std_speedup), "time_ms", "candidate",
                                      num_or_null(x->runtime_ms > 0, x->runtime_ms), "reference", num_or_null(base_ms > 0, base_ms)));
        return 0;
    }
    /* The paper's gating (its leaderboard's --use_hidden_eval): a sample's correctness is its
     * hidden entry's (the hidden run repeats the standard trials first), re-thresholded where
     * asked; a sample with no hidden entry is not correct. */
    const exchange_entry *h = hidden_of(s, x->pid, x->sid);
    double worst = 0;
    int hidden_known = s->h != NULL, flipped = h && !h->correct && rethreshold(h->entry, s->o->fp32_tolerance, &worst);
    int hidden_ok = h && (h->correct || flipped);
    int correct = hidden_known ? hidden_ok : x->correct;
    const char *status = correct ? "verified" : !x->correct ? x->status : h ? hidden_status(h) : "incorrect";
    int timed = correct && x->runtime_ms > 0;
    if (base_peak < 0) base_peak = fp32_peak;
    /* the paper's memory ratio: baseline peak / kernel peak (above 1: the kernel needs less) */
    int ratio = x->peak_bytes > 0 && base_peak >= 0;
    json_t *mem = json_pack("{s:o, s:o, s:o}", "candidate_peak_bytes", x->peak_bytes >= 0 ? json_integer((json_int_t)x->peak_bytes) : json_null(),
                            "baseline_peak_bytes", base_peak >= 0 ? json_integer((json_int_t)base_peak) : json_null(), "ratio",
                            num_or_null(ratio, ratio ? base_peak / x->peak_bytes : 0));
    json_t *p = json_pack("{s:b, s:s, s:b, s:b, s:o, s:{s:o, s:o, s:o}, s:o, s:o, s:o}", "correct", correct, "status", status, "compiled",
                          x->compiled, "standard_correct", x->correct, "hidden_correct", hidden_known ? json_boolean(hidden_ok) : json_null(),
                          "time_ms", "candidate", num_or_null(x->runtime_ms > 0, x->runtime_ms), "baseline_tf32", num_or_null(base_ms > 0, base_ms),
                          "baseline_fp32", num_or_null(fp32_ms > 0, fp32_ms), "speedup", num_or_null(timed && base_ms > 0, base_ms / x->runtime_ms),
                          "speedup_fp32", num_or_null(timed && fp32_ms > 0, fp32_ms / x->runtime_ms), "memory", mem);
    if (!p) return kbv_seterr(err, "out of memory");
    row->paper = 1, row->paper_status = status, row->paper_correct = correct;
    row->paper_speedup = timed && base_ms > 0 ? base_ms / x->runtime_ms : 0;
    json_object_set_new(res, "paper", p);
    json_t *imp = json_object_get(res, "imported");
    if (hidden_known) json_object_set(imp, "hidden_entry", h ? (json_t *)h->entry : json_null());
    if (flipped) json_object_set_new(imp, "rethresholded", json_pack("{s:f, s:f}", "tolerance", s->o->fp32_tolerance, "max_difference", worst));
    return 0;
}

/* One sample's key and result. */
static int import_row_make(const import_src *s, const exchange_entry *x, import_row *row, kbv_err *err) {
    const exchange_import_opts *o = s->o;
    memset(row, 0, sizeof *row);
    row->sid = x->sid;
    json_t *problem = NULL, *candidate = NULL;
    char pname[256] = "", name[64];
    if (o->kernelbench) {
        char pp[PATH_MAX];
        if (find_problem(o->kernelbench, o->level, x->pid, pp, sizeof pp) < 0)
            return kbv_seterr(err, "%s: problem %d (sample %d) has no file %s/level%d/%d_*.py", s->path, x->pid, x->sid, o->kernelbench, o->level,
                              x->pid);
        if (!(problem = file_id(pp))) return kbv_seterr(err, "%s: cannot read it", pp);
        snprintf(pname, sizeof pname, "%s", strrchr(pp, '/') + 1);
    } else {
        snprintf(name, sizeof name, "level%d/problem_%d", o->level, x->pid);
        problem = json_pack("{s:n, s:s, s:n}", "path", "name", name, "sha256");
    }
    /* The kernel KernelBench (and the paper harness) wrote beside its results, when there. */
    char dir[PATH_MAX], kp[PATH_MAX + 80];
    snprintf(dir, sizeof dir, "%s", s->abs);
    *strrchr(dir, '/') = '\0';
    snprintf(kp, sizeof kp, "%s/level_%d_problem_%d_sample_%d_kernel.py", dir, o->level, x->pid, x->sid);
    struct stat sb;
    if (stat(kp, &sb) == 0 && S_ISREG(sb.st_mode)) candidate = file_id(kp);
    if (!candidate) {
        snprintf(name, sizeof name, "level_%d_problem_%d_sample_%d", o->level, x->pid, x->sid);
        candidate = json_pack("{s:n, s:s, s:n}", "path", "name", name, "sha256");
    }
    const char *proto = s->fmt == EXCHANGE_KBV_PAPER ? "paper" : "standard";
    json_t *res = json_pack("{s:s, s:s, s:o, s:o, s:{s:s, s:s, s:s, s:i, s:i, s:i, s:O}}", "status", "imported", "protocol", proto, "problem",
                            problem, "candidate", candidate, "imported", "format", exchange_format_name(s->fmt), "source", s->abs, "sha256", s->sha,
                            "level", o->level, "problem_id", x->pid, "sample_id", x->sid, "entry", (json_t *)x->entry);
    if (!res) return kbv_seterr(err, "out of memory");
    row->result = res;
    row->problem = json_object_get(res, "problem"), row->candidate = json_object_get(res, "candidate");
    snprintf(row->key, sizeof row->key, "imported:%s:%s:level%d:%d:%d", proto, o->model, o->level, x->pid, x->sid);
    return import_verdict(s, x, pname[0] ? pname : NULL, row, res, err);
}

/* A problems or candidates row for a file ({path, name, sha256}): its id, 0 for none (a
 * sample without its file), or -1. */
static long long file_row(kbv_db *db, const char *table, const json_t *f, kbv_err *err) {
    const char *sha = json_string_value(json_object_get(f, "sha256"));
    if (!sha) return 0;
    char sql[160];
    sqlite3_stmt *st = NULL;
    snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO %s(sha256, name, path) VALUES(?, ?, ?)", table);
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK) return db_fail(db, "cannot add a file", err);
    sqlite3_bind_text(st, 1, sha, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, json_string_value(json_object_get(f, "name")), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, json_string_value(json_object_get(f, "path")), -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return db_fail(db, "cannot add a file", err);
    snprintf(sql, sizeof sql, "SELECT id FROM %s WHERE sha256 = ?", table);
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK) return db_fail(db, "cannot find a file", err);
    sqlite3_bind_text(st, 1, sha, -1, SQLITE_TRANSIENT);
    long long id = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return id > 0 ? id : db_fail(db, "cannot find a file", err);
}

/* One imported evaluation: status "imported", none of kbv's verdict, speedup or memory
 * columns; the standard protocol's std_* from KernelBench's file, the paper protocol's
 * paper_* from the paper harness's (db_open adds those to a database made before them). */
static int store_row(kbv_db *db, long long run_id, const exchange_import_opts *o, const import_row *row, kbv_err *err) {
    long long pid = file_row(db, "problems", row->problem, err);
    long long cid = pid < 0 ? -1 : file_row(db, "candidates", row->candidate, err);
    if (cid < 0) return -1;
    char *text = json_dumps(row->result, JSON_COMPACT);
    if (!text) return kbv_seterr(err, "out of memory");
    char when[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    sqlite3_stmt *st = NULL;
    const char *sql = "INSERT INTO evaluations(run_id, key, problem_id, candidate_id, model, sample, level, protocol, status, hacks,"
                      " std_status, std_correct, std_speedup, paper_status, paper_correct, paper_speedup, result, created)"
                      " VALUES(?,?,?,?,?,?,?,?,'imported','',?,?,?,?,?,?,?,?)";
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK) {
        free(text);
        return db_fail(db, "cannot add the evaluation", err);
    }
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, row->key, -1, SQLITE_TRANSIENT);
    if (pid > 0) sqlite3_bind_int64(st, 3, pid);
    else sqlite3_bind_null(st, 3);
    if (cid > 0) sqlite3_bind_int64(st, 4, cid);
    else sqlite3_bind_null(st, 4);
    sqlite3_bind_text(st, 5, o->model, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 6, row->sid);
    sqlite3_bind_int(st, 7, o->level);
    sqlite3_bind_text(st, 8, json_string_value(json_object_get(row->result, "protocol")), -1, SQLITE_TRANSIENT);
    if (row->std) {
        sqlite3_bind_text(st, 9, row->std_status, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 10, row->std_correct);
    } else {
        sqlite3_bind_null(st, 9), sqlite3_bind_null(st, 10);
    }
    if (row->std_speedup > 0) sqlite3_bind_double(st, 11, row->std_speedup);
    else sqlite3_bind_null(st, 11);
    if (row->paper) {
        sqlite3_bind_text(st, 12, row->paper_status, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 13, row->paper_correct);
    } else {
        sqlite3_bind_null(st, 12), sqlite3_bind_null(st, 13);
    }
    if (row->paper_speedup > 0) sqlite3_bind_double(st, 14, row->paper_speedup);
    else sqlite3_bind_null(st, 14);
    sqlite3_bind_text(st, 15, text, -1, free);
    sqlite3_bind_text(st, 16, when, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : db_fail(db, "cannot add the evaluation", err);
}

/* The run an import goes to: its settings name the files (by path and content), the model,
 * the level and the checkout, so the same import again finds its run and adds nothing. */
static char *import_settings(const import_src *s) {
    const exchange_import_opts *o = s->o;
    json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:i, s:o, s:o}", "imported_from", s->abs, "sha256", s->sha, "format", exchange_format_name(s->fmt),
                          "model", o->model, "level", o->level, "kernelbench", o->kernelbench ? json_string(s->kb_abs) : json_null(), "hidden",
                          o->hidden ? json_pack("{s:s, s:s}", "path", s->hidden_abs, "sha256", s->hidden_sha) : json_null());
    /* the re-threshold only when asked, so an import made before it finds its run again */
    if (j && o->fp32_tolerance > 0) json_object_set_new(j, "fp32_tolerance", json_real(o->fp32_tolerance));
    for (int k = 0; j && k < 2; k++)
        json_object_set_new(j, k ? "baseline_fp32" : "baseline",
                            s->base[k].root ? json_pack("{s:s, s:s}", "path", s->base[k].abs, "sha256", s->base[k].sha) : json_null());
    char *text = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(j);
    return text;
}

static int import_store(const import_src *s, import_row *rows, int n, int *added, int *kept, kbv_err *err) {
    kbv_db db;
    if (db_open(&db, s->o->db, err) < 0) return EXCHANGE_BAD_DB;
    char *settings = import_settings(s);
    if (!settings) {
        db_close(&db);
        return kbv_seterr(err, "out of memory");
    }
    uint64_t seed = 0, rnd = 0;
    char uuid[40];
    if (kbv_random_u64(&rnd) < 0) rnd = kbv_mix64((uint64_t)getpid() ^ (uint64_t)(kbv_now() * 1e6));
    snprintf(uuid, sizeof uuid, "%016llx%016llx", (unsigned long long)rnd, (unsigned long long)kbv_mix64(rnd ^ 0x1a2b));
    long long run_id = 0;
    int rc = sqlite3_exec(db.h, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK ? 0 : db_fail(&db, "cannot update it", err);
    if (rc == 0 && db_run(&db, settings, 1, &seed, &run_id, uuid, err) < 0) rc = -1;
    for (int i = 0; rc == 0 && i < n; i++) {
        int has = db_has(&db, run_id, rows[i].key, err);
        if (has < 0) rc = -1;
        else if (has) ++*kept;
        else if (store_row(&db, run_id, s->o, &rows[i], err) < 0) rc = -1;
        else ++*added;
    }
    if (rc == 0 && sqlite3_exec(db.h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) rc = db_fail(&db, "cannot update it", err);
    if (rc < 0) {
        sqlite3_exec(db.h, "ROLLBACK", NULL, NULL, NULL);
        *added = *kept = 0;
    }
    free(settings);
    db_close(&db);
    return rc < 0 ? EXCHANGE_BAD_DB : 0;
}

int exchange_import(const exchange_import_opts *o, const char **format, int *added, int *kept, kbv_err *err) {
    *added = *kept = 0;
    import_src s = {.o = o};
    if (import_read(&s, err) < 0) {
        import_src_free(&s);
        return EXCHANGE_BAD_INPUT;
    }
    *format = exchange_format_name(s.fmt);
    import_row *rows = calloc((size_t)s.n, sizeof *rows);
    int rc = rows ? 0 : kbv_seterr(err, "out of memory");
    for (int i = 0; rc == 0 && i < s.n; i++)
        if (import_row_make(&s, &s.e[i], &rows[i], err) < 0) rc = EXCHANGE_BAD_INPUT;
    if (rc == 0) rc = import_store(&s, rows, s.n, added, kept, err);
    for (int i = 0; rows && i < s.n; i++) json_decref(rows[i].result);
    free(rows);
    import_src_free(&s);
    return rc;
}

/* ---- export -------------------------------------------------------------------------- */

/* One evaluation as exported. */
typedef struct export_row {
    long long id, problem_row; /* evaluation id; problems.id (0: none) */
    char model[128], problem[256];
    int level, sample, pid;
    json_t *sample_obj; /* the exported sample (owned) */
    json_t *hidden_obj; /* its eval_results_hidden.json entry (owned), or NULL */
} export_row;

static const json_t *path_get(const json_t *o, const char *a, const char *b, const char *c) {
    const json_t *v = json_object_get(o, a);
    if (b) v = json_object_get(v, b);
    if (c) v = json_object_get(v, c);
    return v;
}

static double path_num(const json_t *o, const char *a, const char *b, const char *c) {
    const json_t *v = path_get(o, a, b, c);
    return json_is_number(v) ? json_number_value(v) : -1;
}

/* A protocol's time: a number, or kbv's {median|mean, ...} (median first, per protocol). */
static double time_of(const json_t *v, const char *first) {
    if (json_is_number(v)) return json_number_value(v);
    const json_t *x = json_object_get(v, first);
    if (!json_is_number(x)) x = json_object_get(v, "mean");
    return json_is_number(x) ? json_number_value(x) : -1;
}

/* "(passed / evaluated)" over the result's cases, as KernelBench writes its trials. */
static void trials_text(const json_t *res, char *out, size_t n) {
    int ev = 0, ok = 0;
    const json_t *c;
    size_t i;
    json_array_foreach(json_object_get(res, "cases"), i, c) {
        ev += json_is_true(json_object_get(c, "evaluated"));
        ok += json_is_true(json_object_get(c, "evaluated")) && json_is_true(json_object_get(c, "passed"));
    }
    snprintf(out, n, "(%d / %d)", ok, ev);
}

/* A string of at most n bytes of t, cut at a character boundary (the harness truncates its
 * error texts to 200). */
static json_t *text_upto(const char *t, size_t n) {
    size_t l = strlen(t);
    if (l > n) {
        l = n;
        while (l > 0 && ((unsigned char)t[l] & 0xC0) == 0x80) l--;
    }
    json_t *j = json_stringn(t, l);
    return j ? j : json_string("(not UTF-8)");
}

/* kbv's paper verdict's failure in the words of the harness's metadata, which import reads
 * back (entry_status): compile_error a compilation_error; timeout an eval_status "timeout";
 * the other errors (runtime_error, crash, problem_error) a runtime_error. */
static void failure_md(json_t *md, const char *pstatus, const char *detail) {
    if (strcmp(pstatus, "compile_error") == 0) json_object_set_new(md, "compilation_error", text_upto(detail, 200));
    else if (strcmp(pstatus, "timeout") == 0) json_object_set_new(md, "eval_status", json_string("timeout"));
    else if (strcmp(pstatus, "runtime_error") == 0 || strcmp(pstatus, "crash") == 0 || strcmp(pstatus, "problem_error") == 0)
        json_object_set_new(md, "runtime_error", text_upto(detail, 200));
}

/* The largest difference of a failure whose values were not close, from its detail (the
 * message of judge.c's judge_kernelbench_allclose: "N of M elements not close ([K not finite, ]
 * max_abs_err X, tol T)"): 0 with *v, or -1 (a shape, dtype or other failure). X is over the
 * finite differences; where K elements failed as NaN or Inf, the harness's
 * torch.max(abs(diff)) is NaN, and so is *v. */
static int detail_diff(const char *detail, double *v) {
    const char *m = detail && strstr(detail, "not close") ? strstr(detail, "max_abs_err ") : NULL;
    if (!m) return -1;
    char *end;
    *v = strtod(m + 12, &end);
    if (end == m + 12 || !isfinite(*v)) return -1;
    if (strstr(detail, " not finite, max_abs_err ")) *v = NAN;
    return 0;
}

/* A difference as the harness writes it ("%.6f", nan included); buf of DIFF_BUF bytes. */
#define DIFF_BUF 400 /* "%.6f" of the largest double: 309 digits and 7 more */
static const char *diff_text(double v, char *buf) {
    snprintf(buf, DIFF_BUF, isnan(v) ? "nan" : "%.6f", v);
    return buf;
}

/* The paper protocol's failed standard trials as the harness's metadata has them (the
 * re-threshold reads them): max_difference, one "%.6f" per failed trial from the result's cases
 * (--protocol paper alone) or the worst over the trials (--protocol all keeps no case per
 * trial), and correctness_issue. A trial that failed other than by its values (a shape) gives
 * no max_difference, so no re-threshold passes it. */
static void trials_md(json_t *md, const json_t *res, const json_t *p) {
    json_t *diffs = json_array();
    const json_t *c;
    size_t i;
    int other = 0, seen = 0;
    char buf[DIFF_BUF];
    json_array_foreach(json_object_get(res, "cases"), i, c) {
        const char *dom = json_string_value(json_object_get(c, "domain"));
        if (!dom || strcmp(dom, "paper") != 0 || !json_is_true(json_object_get(c, "evaluated"))) continue;
        seen = 1;
        if (json_is_true(json_object_get(c, "passed"))) continue;
        const json_t *m = json_object_get(c, "max_abs_err");
        double v;
        if (json_is_number(m) && detail_diff(json_string_value(json_object_get(c, "detail")), &v) == 0)
            json_array_append_new(diffs, json_string(diff_text(isnan(v) ? v : json_number_value(m), buf)));
        else other = 1;
    }
    double v;
    const json_t *worst = json_object_get(p, "max_abs_err");
    if (!seen && json_is_number(worst) && detail_diff(json_string_value(json_object_get(p, "detail")), &v) == 0)
        json_array_append_new(diffs, json_string(diff_text(isnan(v) ? v : json_number_value(worst), buf)));
    else if (!seen) other = 1;
    if (!other && json_array_size(diffs) > 0) {
        json_object_set(md, "max_difference", diffs);
        json_object_set_new(md, "correctness_issue", json_string("Output mismatch"));
    } else {
        const char *d = json_string_value(json_object_get(p, "detail"));
        json_object_set_new(md, "correctness_issue", text_upto(d ? d : "Output mismatch", 200));
    }
    json_decref(diffs);
}

/* The failure metadata of kbv's paper verdict in its standard part (the trials, or the load
 * before them); nothing when the trials passed. */
static void paper_standard_md(json_t *md, const json_t *res, const json_t *p) {
    if (json_is_true(json_object_get(p, "standard_correct"))) return;
    const char *st = json_string_value(json_object_get(p, "status")), *d = json_string_value(json_object_get(p, "detail"));
    if (st && strcmp(st, "incorrect") == 0) trials_md(md, res, p);
    else if (st) failure_md(md, st, d ? d : st);
}

/* Variant k's largest difference: its case's (--protocol paper alone keeps one per variant,
 * domain "x<scale>"), else the one its detail names. 0 with *v, or -1. */
static int variant_diff(const json_t *res, const json_t *var, double *v) {
    char dom[32];
    snprintf(dom, sizeof dom, "x%g", json_number_value(json_object_get(var, "scale")));
    const json_t *c;
    size_t i;
    json_array_foreach(json_object_get(res, "cases"), i, c) {
        const char *cd = json_string_value(json_object_get(c, "domain"));
        const json_t *m = json_object_get(c, "max_abs_err");
        if (cd && strcmp(cd, dom) == 0 && json_is_true(json_object_get(c, "evaluated")) && json_is_number(m) &&
            detail_diff(json_string_value(json_object_get(c, "detail")), v) == 0) {
            if (!isnan(*v)) *v = json_number_value(m);
            return 0;
        }
    }
    return detail_diff(json_string_value(json_object_get(var, "detail")), v);
}

/* The eval_results_hidden.json entry of an evaluation (docs/results.md, "Export"): the
 * harness's hidden run measures nothing, so runtime and peak_memory are -1.0; correctness is
 * the paper's hidden-gated verdict. kbv's variant k is config_<k+1> (EXCHANGE_CONFIG_FMT).
 * NULL when the evaluation has no paper verdict, or is an import without a hidden entry. */
static json_t *export_hidden(const json_t *res, const char *status, const char *key, int sample) {
    const json_t *p = json_object_get(res, "paper");
    if (!json_is_object(p)) return NULL;
    int correct = json_is_true(json_object_get(p, "correct"));
    json_t *o, *md;
    if (strcmp(status, "imported") == 0) { /* the hidden file's entry as it came, with the verdict kbv holds (a re-threshold's) */
        const json_t *h = path_get(res, "imported", "hidden_entry", NULL);
        if (!json_is_object(h) || !(o = json_deep_copy(h))) return NULL;
        json_object_set_new(o, "correctness", json_boolean(correct && json_is_true(json_object_get(o, "compiled"))));
        return o;
    }
    const char *dev = json_string_value(json_object_get(res, "device")), *gpu = json_string_value(path_get(res, "environment", "gpu", NULL));
    const char *pst = json_string_value(json_object_get(p, "status")) ?: "";
    const json_t *c = json_object_get(p, "compiled");
    int compiled = json_is_boolean(c) ? json_is_true(c) : strcmp(pst, "compile_error") != 0;
    char trials[48], buf[DIFF_BUF + 32], num[DIFF_BUF];
    snprintf(trials, sizeof trials, "(%d / %d)", (int)path_num(p, "trials_passed", NULL, NULL), (int)path_num(p, "trials", NULL, NULL));
    md = json_pack("{s:s, s:s, s:s}", "hardware", gpu ? gpu : dev ? dev : "unknown", "device", dev ? dev : "unknown", "correctness_trials", trials);
    if (!md) return NULL;
    paper_standard_md(md, res, p);
    if (json_is_boolean(json_object_get(p, "hidden_correct"))) { /* the variants ran (after the trials passed) */
        json_t *failed = json_array(), *diffs = json_array();
        int kept = 0, passed = 0, errored = 0;
        const json_t *var;
        size_t k;
        json_array_foreach(json_object_get(p, "variants"), k, var) {
            if (json_is_true(json_object_get(var, "skipped"))) continue; /* dropped, as the harness's generator drops it */
            char cfg[24];
            snprintf(cfg, sizeof cfg, EXCHANGE_CONFIG_FMT, (int)k + 1);
            kept++;
            const json_t *ps = json_object_get(var, "passed");
            double d;
            if (json_is_true(ps)) passed++;
            else if (json_is_false(ps)) {
                json_array_append_new(failed, json_string(cfg));
                if (variant_diff(res, var, &d) == 0) {
                    snprintf(buf, sizeof buf, "%s: %s", cfg, diff_text(d, num));
                    json_array_append_new(diffs, json_string(buf));
                }
            } else if (!errored && !correct) { /* the worker failed on it: the rest did not run */
                const char *pd = json_string_value(json_object_get(p, "detail"));
                char line[512];
                snprintf(line, sizeof line, "%s: %s", cfg, pd ? pd : pst);
                json_object_set_new(md, "hidden_runtime_error", json_pack("[o]", text_upto(line, 200)));
                errored = 1;
            }
        }
        if (json_array_size(failed) > 0) {
            json_object_set(md, "hidden_failed_configs", failed);
            snprintf(buf, sizeof buf, "Output mismatch on %s", json_string_value(json_array_get(failed, 0)));
            json_object_set_new(md, "hidden_correctness_issue", json_string(buf));
        }
        if (json_array_size(diffs) > 0) json_object_set(md, "hidden_max_difference", diffs);
        snprintf(buf, sizeof buf, "(%d/%d hidden configs passed)", passed, kept);
        json_object_set_new(md, "hidden_correctness_trials", json_string(buf));
        json_decref(failed), json_decref(diffs);
    }
    json_object_set_new(md, "kbv_status", json_string(status));
    json_object_set_new(md, "kbv_protocol", json_string("paper"));
    json_object_set_new(md, "kbv_key", json_string(key));
    return json_pack("{s:i, s:b, s:b, s:o, s:f, s:{}, s:f, s:{}}", "sample_id", sample, "compiled", compiled, "correctness", compiled && correct,
                     "metadata", md, "runtime", -1.0, "runtime_stats", "peak_memory", -1.0, "memory_stats");
}

/* The sample under protocol proto in KernelBench's per-sample fields (with the paper's
 * peak_memory and memory_stats when paper is set), or NULL when the evaluation has no such
 * protocol. pair: the hidden file is written beside it, so the paper's correctness here is the
 * standard trials' (the harness's eval_results.json) and the hidden file has the gated one. */
static json_t *export_sample(const char *proto, int paper, int pair, const char *status, const char *std_status, int std_correct, const json_t *res,
                             const char *key, int sample) {
    const json_t *imp = json_object_get(res, "imported"), *orig = json_object_get(imp, "entry");
    int imported = strcmp(status, "imported") == 0;
    int correct, compiled;
    double runtime = -1, peak = -1;
    json_t *stats = NULL, *mstats = NULL, *md = NULL;
    const json_t *p = json_object_get(res, "paper");
    if (strcmp(proto, "verified") == 0) {
        const char *rp = json_string_value(json_object_get(res, "protocol"));
        if (imported || (rp && (strcmp(rp, "standard") == 0 || strcmp(rp, "paper") == 0))) return NULL;
        correct = strcmp(status, "verified") == 0, compiled = strcmp(status, "compile_error") != 0;
        const json_t *t = path_get(res, "time_ms", "candidate", NULL);
        runtime = time_of(t, "median");
        peak = path_num(res, "memory", "peak_bytes_candidate", NULL);
        if (runtime > 0)
            stats = json_pack("{s:o, s:o, s:o, s:o, s:o}", "mean", num_or_null(1, path_num(t, "mean", NULL, NULL)), "median", num_or_null(1, runtime),
                              "q1", num_or_null(1, path_num(t, "q1", NULL, NULL)), "q3", num_or_null(1, path_num(t, "q3", NULL, NULL)), "num_trials",
                              json_integer((json_int_t)path_num(t, "samples", NULL, NULL)));
    } else if (strcmp(proto, "standard") == 0) {
        if (!std_status) return NULL;
        correct = std_correct, compiled = strcmp(std_status, "compile_error") != 0;
        runtime = time_of(path_get(res, "standard", "time_ms", "candidate"), "mean");
        double trials = path_num(res, "standard", "time_ms", "trials");
        if (runtime > 0 && !imported) stats = json_pack("{s:f, s:i}", "mean", runtime, "num_trials", (int)(trials > 0 ? trials : 0));
    } else {
        if (!json_is_object(p)) return NULL;
        const json_t *sc = json_object_get(p, "standard_correct");
        correct = json_is_true(pair && json_is_boolean(sc) ? sc : json_object_get(p, "correct"));
        const json_t *c = json_object_get(p, "compiled");
        compiled = json_is_boolean(c) ? json_is_true(c) : strcmp(json_string_value(json_object_get(p, "status")) ?: "", "compile_error") != 0;
        runtime = time_of(path_get(p, "time_ms", "candidate", NULL), "mean");
        peak = path_num(p, "memory", "candidate_peak_bytes", NULL);
    }
    if (imported && json_is_object(orig)) { /* the harness's own metadata and statistics */
        const json_t *c = json_object_get(orig, "compiled");
        if (json_is_boolean(c)) compiled = json_is_true(c);
        md = json_deep_copy(json_object_get(orig, "metadata"));
        stats = json_deep_copy(json_object_get(orig, "runtime_stats"));
        mstats = json_deep_copy(json_object_get(orig, "memory_stats"));
    } else {
        const char *dev = json_string_value(json_object_get(res, "device")), *gpu = json_string_value(path_get(res, "environment", "gpu", NULL));
        char trials[48];
        if (strcmp(proto, "standard") == 0)
            snprintf(trials, sizeof trials, "(%d / %d)", (int)path_num(res, "standard", "trials_passed", NULL),
                     (int)path_num(res, "standard", "trials", NULL));
        else if (strcmp(proto, "paper") == 0) /* its five trials, not the cases (which hold its variants too, or kbv's) */
            snprintf(trials, sizeof trials, "(%d / %d)", (int)path_num(p, "trials_passed", NULL, NULL), (int)path_num(p, "trials", NULL, NULL));
        else trials_text(res, trials, sizeof trials);
        md = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "hardware",
                       gpu   ? gpu
                       : dev ? dev
                             : "unknown",
                       "device", dev ? dev : "unknown", "correctness_trials", trials, "kbv_status", status, "kbv_protocol", proto, "kbv_key", key);
        if (md && strcmp(proto, "paper") == 0) paper_standard_md(md, res, p);
        if (stats && gpu) json_object_set_new(stats, "hardware", json_string(gpu));
        if (peak >= 0)
            mstats = json_pack("{s:I, s:s, s:s}", "peak_bytes", (json_int_t)peak, "hardware",
                               gpu   ? gpu
                               : dev ? dev
                                     : "unknown",
                               "device", dev ? dev : "unknown");
    }
    json_t *o = json_pack("{s:i, s:b, s:b, s:o, s:f, s:o}", "sample_id", sample, "compiled", compiled, "correctness", compiled && correct, "metadata",
                          json_is_object(md) ? json_incref(md) : json_object(), "runtime", runtime > 0 ? runtime : -1.0, "runtime_stats",
                          json_is_object(stats) ? json_incref(stats) : json_object());
    if (o && paper) {
        json_object_set_new(o, "peak_memory", peak >= 0 ? json_integer((json_int_t)peak) : json_real(-1.0));
        json_object_set_new(o, "memory_stats", json_is_object(mstats) ? json_incref(mstats) : json_object());
    }
    json_decref(md), json_decref(stats), json_decref(mstats);
    return o;
}

static int row_cmp(const void *a, const void *b) {
    const export_row *x = a, *y = b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->sample != y->sample) return x->sample < y->sample ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Read the evaluations to export (latest of each key, in evaluation order). */
static int export_read(const exchange_export_opts *o, export_row **out, int *n, int *skipped, kbv_err *err) {
    *out = NULL, *n = 0, *skipped = 0;
    kbv_db db;
    if (db_open_read(&db, o->db, err) < 0) return EXCHANGE_BAD_DB;
    const char *sql = "SELECT e.id, e.key, e.model, e.sample, e.level, e.status, e.std_status, e.std_correct, p.id, p.path, e.result"
                      " FROM evaluations e LEFT JOIN problems p ON p.id = e.problem_id"
                      " WHERE e.id IN (SELECT MAX(id) FROM evaluations GROUP BY key) AND (?1 IS NULL OR e.model = ?1) AND (?2 < 0 OR e.level = ?2)"
                      " ORDER BY e.id";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db.h, sql, -1, &st, NULL) != SQLITE_OK) {
        db_fail(&db, "cannot read its evaluations", err);
        db_close(&db);
        return EXCHANGE_BAD_DB;
    }
    if (o->model) sqlite3_bind_text(st, 1, o->model, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 2, o->level);
    int paper = strcmp(o->format, "kbv-paper") == 0, cap = 0, rc, fail = 0;
    export_row *rows = NULL;
    while (!fail && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *res_text = (const char *)sqlite3_column_text(st, 10);
        json_t *res = res_text ? json_loads(res_text, 0, NULL) : NULL;
        const char *status = (const char *)sqlite3_column_text(st, 5) ?: "";
        const char *std_status = (const char *)sqlite3_column_text(st, 6);
        int sample = sqlite3_column_type(st, 3) == SQLITE_NULL ? 0 : sqlite3_column_int(st, 3);
        const char *key = (const char *)sqlite3_column_text(st, 1) ?: "";
        json_t *x =
            res ? export_sample(o->protocol, paper, o->hidden != NULL, status, std_status, sqlite3_column_int(st, 7), res, key, sample) : NULL;
        json_t *h = x && o->hidden ? export_hidden(res, status, key, sample) : NULL;
        if (!x) {
            ++*skipped;
            json_decref(res);
            continue;
        }
        if (*n == cap) {
            cap = cap ? cap * 2 : 256;
            export_row *q = realloc(rows, (size_t)cap * sizeof *q);
            if (!q) {
                json_decref(res), json_decref(x), json_decref(h);
                fail = 1;
                break;
            }
            rows = q;
        }
        export_row *r = &rows[(*n)++];
        memset(r, 0, sizeof *r);
        r->id = sqlite3_column_int64(st, 0);
        snprintf(r->model, sizeof r->model, "%s", (const char *)sqlite3_column_text(st, 2) ?: "");
        r->level = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 4);
        r->sample = sample;
        r->problem_row = sqlite3_column_type(st, 8) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 8);
        const char *ppath = (const char *)sqlite3_column_text(st, 9);
        const char *pname = json_string_value(path_get(res, "problem", "name", NULL));
        snprintf(r->problem, sizeof r->problem, "%s", ppath ? ppath : pname ? pname : "?");
        /* The problem id: a KernelBench file name "P_Name.py", else the id an import recorded. */
        r->pid = ppath ? exchange_problem_id(ppath) : -1;
        const json_t *ip = path_get(res, "imported", "problem_id", NULL);
        if (r->pid < 0 && json_is_integer(ip) && json_integer_value(ip) >= 1 && json_integer_value(ip) <= EXCHANGE_ID_MAX)
            r->pid = (int)json_integer_value(ip);
        r->sample_obj = x, r->hidden_obj = h;
        json_decref(res);
    }
    sqlite3_finalize(st);
    int bad = fail || rc != SQLITE_DONE;
    if (bad) {
        if (fail || rc == SQLITE_ROW) kbv_seterr(err, "%s: out of memory reading its evaluations", o->db);
        else db_fail(&db, "cannot read its evaluations", err);
    }
    db_close(&db);
    *out = rows;
    return bad ? EXCHANGE_BAD_DB : 0;
}

/* Problems without an id of their own get the smallest ids no other problem has, in the
 * order of their first evaluation. */
static int number_problems(export_row *rows, int n) {
    unsigned char *used = calloc(EXCHANGE_ID_MAX + 2, 1);
    if (!used) return -1;
    for (int i = 0; i < n; i++)
        if (rows[i].pid > 0) used[rows[i].pid] = 1;
    int next = 1;
    for (int i = 0; i < n; i++) {
        if (rows[i].pid > 0) continue;
        while (next <= EXCHANGE_ID_MAX && used[next]) next++;
        int id = next <= EXCHANGE_ID_MAX ? next : EXCHANGE_ID_MAX;
        used[id] = 1;
        for (int j = i; j < n; j++) /* every evaluation of the same problem */
            if (rows[j].pid < 0 && (rows[i].problem_row ? rows[j].problem_row == rows[i].problem_row : strcmp(rows[j].problem, rows[i].problem) == 0))
                rows[j].pid = id;
    }
    free(used);
    return 0;
}

/* Write j to a temporary file beside out, its name into tmp (PATH_MAX), for rename() into
 * place once every file of the export is written: a failure leaves no file half-written. */
static int write_tmp(const json_t *j, const char *out, int flags, char *tmp, kbv_err *err) {
    if (snprintf(tmp, PATH_MAX, "%s.XXXXXX", out) >= PATH_MAX) return kbv_seterr(err, "%s: path too long", out);
    int fd = mkstemp(tmp);
    if (fd < 0) return tmp[0] = '\0', kbv_seterr(err, "%s: cannot write it: %s", out, strerror(errno));
    FILE *f = fdopen(fd, "w");
    int bad = !f || json_dumpf(j, f, flags) < 0 || fputc('\n', f) == EOF;
    int e = errno;
    if (f ? fclose(f) != 0 : close(fd) != 0) bad = 1, e = errno;
    mode_t mask = umask(0); /* mkstemp's 0600 would make the file private: the mode open() gives */
    umask(mask);
    if (!bad && chmod(tmp, 0666 & ~mask) < 0) bad = 1, e = errno;
    if (bad) {
        unlink(tmp);
        tmp[0] = '\0';
        return kbv_seterr(err, "%s: cannot write it: %s", out, strerror(e ? e : EIO));
    }
    return 0;
}

/* The same path (an existing file's device and inode)? */
static int same_file(const char *x, const char *y) {
    struct stat a, b;
    return stat(x, &a) == 0 && stat(y, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The export's documents: doc (the eval_results.json) and, with o->hidden, hdoc. */
static int export_docs(const exchange_export_opts *o, export_row *rows, int n, json_t **doc, json_t **hdoc, int *hidden_written) {
    int paper = strcmp(o->format, "kbv-paper") == 0;
    *doc = json_object(), *hdoc = o->hidden ? json_object() : NULL;
    if (!*doc || (o->hidden && !*hdoc)) return -1;
    for (int i = 0; i < n; i++) {
        char k[32];
        if (paper) {
            snprintf(k, sizeof k, "%d_%d", rows[i].pid, rows[i].sample);
            if (json_object_set(*doc, k, rows[i].sample_obj) < 0) return -1;
            if (*hdoc && rows[i].hidden_obj) {
                if (json_object_set(*hdoc, k, rows[i].hidden_obj) < 0) return -1;
                ++*hidden_written;
            }
        } else {
            snprintf(k, sizeof k, "%d", rows[i].pid);
            json_t *list = json_object_get(*doc, k);
            if (!list && json_object_set_new(*doc, k, list = json_array()) < 0) return -1;
            if (json_array_append(list, rows[i].sample_obj) < 0) return -1;
        }
    }
    return 0;
}

/* Write the documents: both into temporary files, then renamed into place (stdout last). */
static int export_write(const exchange_export_opts *o, const json_t *doc, const json_t *hdoc, kbv_err *err) {
    /* KernelBench writes its file with indent=4, the paper harness without indentation. */
    int paper = strcmp(o->format, "kbv-paper") == 0, flags = (paper ? JSON_COMPACT : JSON_INDENT(4)) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII;
    int out_stdout = strcmp(o->out, "-") == 0;
    char tmp[PATH_MAX] = "", htmp[PATH_MAX] = "";
    int rc = 0;
    if (hdoc && write_tmp(hdoc, o->hidden, flags, htmp, err) < 0) rc = -1;
    if (rc == 0 && !out_stdout && write_tmp(doc, o->out, flags, tmp, err) < 0) rc = -1;
    if (rc == 0 && tmp[0] && rename(tmp, o->out) < 0) rc = kbv_seterr(err, "%s: cannot write it: %s", o->out, strerror(errno));
    if (rc == 0) tmp[0] = '\0';
    if (rc == 0 && htmp[0] && rename(htmp, o->hidden) < 0) rc = kbv_seterr(err, "%s: cannot write it: %s", o->hidden, strerror(errno));
    if (rc == 0) htmp[0] = '\0';
    if (rc == 0 && out_stdout && (json_dumpf(doc, stdout, flags) < 0 || fputc('\n', stdout) == EOF || fflush(stdout) == EOF))
        rc = kbv_seterr(err, "cannot write to stdout");
    if (tmp[0]) unlink(tmp);
    if (htmp[0]) unlink(htmp);
    return rc;
}

int exchange_export(const exchange_export_opts *o, int *written, int *hidden_written, int *skipped, kbv_err *err) {
    *written = *hidden_written = *skipped = 0;
    if (strcmp(o->out, "-") != 0 && same_file(o->out, o->db)) return kbv_seterr(err, "%s: is the database itself", o->out), EXCHANGE_BAD_INPUT;
    if (o->hidden) {
        if (strcmp(o->format, "kbv-paper") != 0 || strcmp(o->protocol, "paper") != 0)
            return kbv_seterr(err, "--hidden writes the paper harness's eval_results_hidden.json: it goes with --format kbv-paper --protocol paper"),
                   EXCHANGE_BAD_INPUT;
        if (strcmp(o->hidden, "-") == 0) return kbv_seterr(err, "--hidden needs a file, not stdout"), EXCHANGE_BAD_INPUT;
        if (same_file(o->hidden, o->db)) return kbv_seterr(err, "%s: is the database itself", o->hidden), EXCHANGE_BAD_INPUT;
        if (strcmp(o->hidden, o->out) == 0 || same_file(o->hidden, o->out))
            return kbv_seterr(err, "%s: -o and --hidden name the same file", o->hidden), EXCHANGE_BAD_INPUT;
    }
    export_row *rows = NULL;
    int n = 0, rc = export_read(o, &rows, &n, skipped, err);
    if (rc == 0 && n == 0)
        rc = kbv_seterr(err, "%s: nothing to export: no evaluation%s%s%s has the %s protocol (%d without it)%s", o->db, o->model ? " of model " : "",
                        o->model ? o->model : "", o->level >= 0 ? " at that level" : "", o->protocol, *skipped,
                        strcmp(o->protocol, "verified") == 0 ? "; an imported one has only the protocol it came with (--protocol standard or paper)"
                                                             : ""),
        rc = EXCHANGE_BAD_INPUT;
    if (rc == 0 && number_problems(rows, n) < 0) rc = kbv_seterr(err, "out of memory");
    if (rc == 0) {
        qsort(rows, (size_t)n, sizeof *rows, row_cmp);
        for (int i = 1; i < n && rc == 0; i++)
            if (rows[i].pid == rows[i - 1].pid && rows[i].sample == rows[i - 1].sample)
                rc = kbv_seterr(err,
                                "%s: two evaluations are problem %d sample %d (model %s level %d, %s; model %s level %d, %s): give --model and "
                                "--level to export one run's",
                                o->db, rows[i].pid, rows[i].sample, rows[i - 1].model, rows[i - 1].level, rows[i - 1].problem, rows[i].model,
                                rows[i].level, rows[i].problem),
                rc = EXCHANGE_BAD_INPUT;
    }
    json_t *doc = NULL, *hdoc = NULL;
    if (rc == 0 && export_docs(o, rows, n, &doc, &hdoc, hidden_written) < 0) rc = kbv_seterr(err, "out of memory");
    if (rc == 0 && export_write(o, doc, hdoc, err) < 0) rc = EXCHANGE_FAILED;
    if (rc == 0) *written = n;
    else *hidden_written = 0;
    json_decref(doc), json_decref(hdoc);
    for (int i = 0; i < n; i++) json_decref(rows[i].sample_obj), json_decref(rows[i].hidden_obj);
    free(rows);
    return rc;
}
