/* run.c -- `kbv run` (see run.h). */
#include "run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "admit.h"
#include "db.h"
#include "evalctx.h"
#include "gpus.h"
#include "result.h"

void run_key(const char *psha, const char *csha, const char *model, int sample, const char *protocol, char *out, size_t n) {
    snprintf(out, n, "%.64s:%.64s:%s:%d:%s", psha, csha, model, sample, protocol);
}

static const char *protocol_name(const eval_opts *e) { return eval_protocol_name(e->protocol); }

/* kbv's own exhaustion, not the file's fault: no descriptor or memory left to read it. */
static int own_exhaustion(int e) { return e == EMFILE || e == ENFILE || e == ENOMEM; }

/* An entry's key; a file that cannot be read still gets a verdict, keyed by its path. -1 (err
 * set) when kbv could not read a file for want of descriptors or memory: that is no verdict. */
static int item_key(const run_item *it, const char *proto, char *out, size_t n, kbv_err *err) {
    char ps[65] = "", cs[65] = "";
    const char *paths[2] = {it->problem, it->candidate};
    char *shas[2] = {ps, cs};
    for (int k = 0; k < 2; k++) {
        kbv_err e2;
        errno = 0;
        if (kbv_sha256_file(paths[k], shas[k], &e2) == 0) continue;
        if (own_exhaustion(errno)) return kbv_seterr(err, "%s (kbv's own exhaustion, not the file's)", e2.msg);
        snprintf(shas[k], 65, "missing");
    }
    run_key(ps, cs, it->model, it->sample, proto, out, n);
    if (strcmp(ps, "missing") == 0 || strcmp(cs, "missing") == 0) {
        size_t l = strlen(out);
        snprintf(out + l, n - l, "|%s", strcmp(ps, "missing") == 0 ? it->problem : it->candidate);
    }
    return 0;
}

int run_in_shard(const char *key, int i, int n) {
    if (n <= 1) return 1;
    uint64_t h = 1469598103934665603ULL; /* FNV-1a, then mixed */
    for (const unsigned char *p = (const unsigned char *)key; *p; p++) h = (h ^ *p) * 1099511628211ULL;
    return (int)(kbv_mix64(h) % (uint64_t)n) == i;
}

/* A path from the manifest, relative to its folder. */
static int resolve(const char *dir, const char *p, char *out, size_t n) {
    int w = p[0] == '/' ? snprintf(out, n, "%s", p) : snprintf(out, n, "%s/%s", dir, p);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

static int add_item(run_item **items, int *n, int *cap, const char *dir, const char *problem, const char *candidate, const char *model, int sample,
                    int level, int line, const char *path, kbv_err *err) {
    if (!problem || !*problem || !candidate || !*candidate) return kbv_seterr(err, "%s:%d: needs 'problem' and 'candidate'", path, line);
    /* Cut short, two models could become one in the results. */
    if (model && strlen(model) >= sizeof(*items)->model)
        return kbv_seterr(err, "%s:%d: 'model' is longer than %zu bytes", path, line, sizeof(*items)->model - 1);
    if (*n == *cap) {
        int c = *cap ? *cap * 2 : 64;
        run_item *q = realloc(*items, (size_t)c * sizeof *q);
        if (!q) return kbv_seterr(err, "out of memory");
        *items = q, *cap = c;
    }
    run_item *it = &(*items)[*n];
    memset(it, 0, sizeof *it);
    if (resolve(dir, problem, it->problem, sizeof it->problem) < 0)
        return kbv_seterr(err, "%s:%d: the 'problem' path is longer than %zu bytes", path, line, sizeof it->problem - 1);
    if (resolve(dir, candidate, it->candidate, sizeof it->candidate) < 0)
        return kbv_seterr(err, "%s:%d: the 'candidate' path is longer than %zu bytes", path, line, sizeof it->candidate - 1);
    if (model && strlen(model) >= sizeof it->model)
        return kbv_seterr(err, "%s:%d: 'model' is longer than %zu bytes", path, line, sizeof it->model - 1);
    snprintf(it->model, sizeof it->model, "%s", model && *model ? model : "default");
    it->sample = sample, it->level = level, it->line = line;
    ++*n;
    return 0;
}

/* One CSV/TSV record into fields (quotes with "" escapes); the line is modified. Returns the
 * number of fields, or -1 for a quote that is not closed. */
static int split(char *line, char sep, char **f, int maxf) {
    int n = 0;
    char *p = line;
    while (n < maxf) {
        char *start = p, *o = p;
        if (*p == '"') {
            p++;
            int closed = 0;
            while (*p) {
                if (*p == '"' && p[1] == '"') *o++ = '"', p += 2;
                else if (*p == '"') {
                    p++;
                    closed = 1;
                    break;
                } else *o++ = *p++;
            }
            if (!closed) return -1;
            while (*p && *p != sep) p++;
        } else {
            while (*p && *p != sep) *o++ = *p++;
        }
        char end = *p;
        *o = '\0';
        f[n++] = start;
        if (end != sep) break;
        p++;
    }
    return n;
}

/* 'sample' and 'level': absent or empty is -1; otherwise 0..1e9, or -1 returned. */
static int to_int(const char *s, int *out) {
    if (!s || !*s) return *out = -1, 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < 0 || v > 1000000000) return -1;
    *out = (int)v;
    return 0;
}

/* The whole manifest, NUL-terminated, or -1: a folder, more than RUN_MANIFEST_MAX bytes (say
 * /dev/zero), or a NUL byte in it (not a text file). A pipe is fine: <(...) works. */
static int read_manifest(const char *path, char **out, size_t *len, kbv_err *err) {
    *out = NULL, *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return kbv_seterr(err, "%s: cannot read the manifest: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        close(fd);
        return kbv_seterr(err, "%s: is a folder, not a manifest", path);
    }
    kbv_buf b;
    kbv_buf_init(&b);
    char chunk[65536];
    int rc = 0;
    for (;;) {
        ssize_t r = read(fd, chunk, sizeof chunk);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            rc = kbv_seterr(err, "%s: cannot read the manifest: %s", path, strerror(errno));
            break;
        }
        if (r == 0) break;
        if (b.len + (size_t)r > RUN_MANIFEST_MAX) {
            rc = kbv_seterr(err, "%s: more than %d MiB: not a manifest", path, RUN_MANIFEST_MAX >> 20);
            break;
        }
        if (kbv_buf_append(&b, chunk, (size_t)r) < 0) {
            rc = kbv_seterr(err, "%s: out of memory reading the manifest", path);
            break;
        }
        if (memchr(chunk, '\0', (size_t)r)) break; /* binary: said below, without reading the rest */
    }
    close(fd);
    if (rc == 0 && !b.data && kbv_buf_append(&b, "", 0) < 0) rc = kbv_seterr(err, "%s: out of memory", path);
    const char *nul = rc == 0 ? memchr(b.data, '\0', b.len) : NULL;
    if (nul) {
        int line = 1;
        for (const char *p = b.data; p < nul; p++) line += *p == '\n';
        rc = kbv_seterr(err, "%s:%d: a NUL byte: not a text file", path, line);
    }
    if (rc < 0) {
        kbv_buf_free(&b);
        return -1;
    }
    *out = b.data, *len = b.len;
    return 0;
}

/* A JSON field that must be an integer in [0, 1e9] when present (-1 when absent). */
static int json_count(const json_t *o, const char *key, int *out) {
    const json_t *v = json_object_get(o, key);
    *out = -1;
    if (!v) return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 1000000000) return -1;
    *out = (int)json_integer_value(v);
    return 0;
}

int manifest_parse(const char *data, size_t len, const char *path, const char *dir, run_item **items, int *n, kbv_err *err) {
    *items = NULL, *n = 0;
    /* The lines are C strings: a NUL byte would silently end the manifest there. */
    const char *nul = len ? memchr(data, '\0', len) : NULL;
    if (nul) {
        int at = 1;
        for (const char *p = data; p < nul; p++) at += *p == '\n';
        return kbv_seterr(err, "%s:%d: a NUL byte (not a text file?)", path, at);
    }
    char *text = malloc(len + 1); /* split() and the line loop write into it */
    if (!text) return kbv_seterr(err, "%s: out of memory", path);
    if (len) memcpy(text, data, len);
    text[len] = '\0';
    int cap = 0, rc = 0, lineno = 0;
    const char *ext = strrchr(path, '.');
    int jsonl = ext && (strcmp(ext, ".jsonl") == 0 || strcmp(ext, ".json") == 0 || strcmp(ext, ".ndjson") == 0);
    int col[5] = {-1, -1, -1, -1, -1}; /* problem, candidate, model, sample, level */
    char sep = ext && strcmp(ext, ".tsv") == 0 ? '\t' : ',';
    int header = 0;
    char *start = text;
    if ((unsigned char)start[0] == 0xEF && (unsigned char)start[1] == 0xBB && (unsigned char)start[2] == 0xBF) start += 3; /* a UTF-8 BOM */
    for (char *line = start, *next; line && rc == 0; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        lineno++;
        size_t l = strlen(line);
        if (l && line[l - 1] == '\r') line[--l] = '\0';
        char *s = line;
        while (*s == ' ' || *s == '\t') s++;
        if (!*s || *s == '#') continue;
        if (jsonl || (!header && *s == '{')) {
            jsonl = 1;
            json_error_t je;
            json_t *o = json_loads(s, 0, &je);
            if (!json_is_object(o)) {
                rc = kbv_seterr(err, "%s:%d: not a JSON object: %s", path, lineno, o ? "another JSON value" : je.text);
                json_decref(o);
                break;
            }
            int sample, level;
            const char *keys[3] = {"problem", "candidate", "model"};
            for (int k = 0; k < 3 && rc == 0; k++)
                if (json_object_get(o, keys[k]) && !json_is_string(json_object_get(o, keys[k])))
                    rc = kbv_seterr(err, "%s:%d: '%s' must be a string", path, lineno, keys[k]);
            if (rc == 0 && (json_count(o, "sample", &sample) < 0 || json_count(o, "level", &level) < 0))
                rc = kbv_seterr(err, "%s:%d: 'sample' and 'level' must be integers from 0 to 1000000000", path, lineno);
            if (rc == 0)
                rc = add_item(items, n, &cap, dir, json_string_value(json_object_get(o, "problem")),
                              json_string_value(json_object_get(o, "candidate")), json_string_value(json_object_get(o, "model")), sample, level,
                              lineno, path, err);
            json_decref(o);
            continue;
        }
        char *f[32];
        if (!header && strchr(s, '\t')) sep = '\t';
        /* Leading blanks are indentation, but in TSV a tab ends a field: a leading one means
         * an empty first column, not one column fewer. */
        if (sep == '\t')
            for (s = line; *s == ' '; s++) {
            }
        if (!header) {
            int nf = split(s, sep, f, 32);
            if (nf < 0) {
                rc = kbv_seterr(err, "%s:%d: a quoted field is not closed (a CSV record is one line)", path, lineno);
                break;
            }
            const char *names[5] = {"problem", "candidate", "model", "sample", "level"};
            for (int i = 0; i < nf; i++)
                for (int k = 0; k < 5; k++)
                    if (strcmp(f[i], names[k]) == 0) col[k] = i;
            if (col[0] < 0 || col[1] < 0) {
                int csv = ext && (strcmp(ext, ".csv") == 0 || strcmp(ext, ".tsv") == 0);
                rc = kbv_seterr(err, "%s:%d: %s header naming 'problem' and 'candidate' (and optionally model, sample, level)", path, lineno,
                                csv ? "a CSV/TSV manifest starts with a" : "neither a JSON object nor a CSV/TSV");
                break;
            }
            header = 1;
            continue;
        }
        int nf = split(s, sep, f, 32), sample = -1, level = -1;
        if (nf < 0) {
            rc = kbv_seterr(err, "%s:%d: a quoted field is not closed (a CSV record is one line)", path, lineno);
            break;
        }
        const char *get[5];
        for (int k = 0; k < 5; k++) get[k] = col[k] >= 0 && col[k] < nf ? f[col[k]] : NULL;
        if (to_int(get[3], &sample) < 0 || to_int(get[4], &level) < 0) {
            rc = kbv_seterr(err, "%s:%d: 'sample' and 'level' must be integers from 0 to 1000000000", path, lineno);
            break;
        }
        rc = add_item(items, n, &cap, dir, get[0], get[1], get[2], sample, level, lineno, path, err);
    }
    free(text);
    if (rc == 0 && *n == 0) rc = kbv_seterr(err, "%s: no evaluations in the manifest", path);
    if (rc < 0) free(*items), *items = NULL, *n = 0;
    return rc;
}

void run_default_suite(const char *device, char *out, size_t n) {
    snprintf(out, n, "problems/default-%s.jsonl", eval_device(device ? device : "auto"));
}

int manifest_load(const char *path, run_item **items, int *n, kbv_err *err) {
    *items = NULL, *n = 0;
    char *text = NULL;
    size_t len = 0;
    if (read_manifest(path, &text, &len, err) < 0) return -1;
    char copy[PATH_MAX], dir[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", path);
    snprintf(dir, sizeof dir, "%s", dirname(copy));
    int rc = manifest_parse(text, len, path, dir, items, n, err);
    free(text);
    return rc;
}

/* Evaluate one entry of source and store it in run run_id under key: 0 (r filled, caller
 * frees), -1 (kbv could not evaluate), or RUN_BAD_DB. admission_wait: seconds it waited to be
 * admitted (admit.h), or -1 when there was no admission control. */
static int evaluate_one(kbv_db *db, long long run_id, const eval_opts *eo, const char *source, const run_item *it, const char *key, int first,
                        double admission_wait, kbv_result *r, kbv_err *err) {
    eval_opts e = *eo;
    e.problem = it->problem, e.candidate = it->candidate;
    result_init(r);
    if (eval_run(&e, r, err) < 0) {
        if (!err->msg[0] && r->errors.len) { /* said in the result (kbv's exhaustion): its last line */
            const char *text = r->errors.data, *last = text + r->errors.len;
            while (last > text && last[-1] == '\n') last--;
            const char *start = last;
            while (start > text && start[-1] != '\n') start--;
            kbv_seterr(err, "%.*s", (int)(last - start), start);
        }
        return kbv_wraperr(err, "%s:%d", source, it->line);
    }
    if (admission_wait >= 0) r->phase_s[PHASE_ADMISSION_WAIT] = admission_wait;
    if (first && db_run_env(db, run_id, r, err) < 0) return RUN_BAD_DB;
    return db_store(db, run_id, key, it->model, it->sample, it->level, r, err) < 0 ? RUN_BAD_DB : 0;
}

/* KB/levelL/P_*.py for problem number P, or -1. */
static int find_problem(const char *kb, int level, int prob, char *out, size_t n) {
    char dir[PATH_MAX], want[32];
    snprintf(dir, sizeof dir, "%s/level%d", kb, level);
    snprintf(want, sizeof want, "%d_", prob);
    DIR *d = opendir(dir);
    if (!d) return -1;
    int found = -1;
    for (struct dirent *e; found < 0 && (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (strncmp(e->d_name, want, strlen(want)) == 0 && l > 3 && strcmp(e->d_name + l - 3, ".py") == 0)
            found = snprintf(out, n, "%s/%s", dir, e->d_name) < (int)n ? 0 : -1;
    }
    closedir(d);
    return found;
}

static int scan_runs(const char *kb, const char *dir, const char *model, run_item **items, int *n, int *cap, int depth, kbv_err *err) {
    DIR *d = opendir(dir);
    if (!d) return kbv_seterr(err, "%s: cannot read the runs folder: %s", dir, strerror(errno));
    char **names = NULL;
    size_t nn = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char **q = realloc(names, (nn + 1) * sizeof *q);
        if (!q) break;
        names = q;
        names[nn++] = strdup(e->d_name);
    }
    closedir(d);
    /* sorted: the same folders give the same order */
    for (size_t i = 1; i < nn; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1], names[j - 1] = t;
        }
    int rc = 0;
    for (size_t i = 0; i < nn && rc == 0; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        int level, prob, sample, used = 0;
        if (sscanf(names[i], "level_%d_problem_%d_sample_%d_kernel.py%n", &level, &prob, &sample, &used) == 3 && names[i][used] == '\0') {
            char pp[PATH_MAX];
            if (find_problem(kb, level, prob, pp, sizeof pp) < 0) rc = kbv_seterr(err, "%s: no problem %d in %s/level%d", path, prob, kb, level);
            else rc = add_item(items, n, cap, "/", pp, path, model, sample, level, 0, path, err);
        } else if (depth == 0) {
            DIR *sub = opendir(path);
            if (sub) {
                closedir(sub);
                rc = scan_runs(kb, path, names[i], items, n, cap, 1, err);
            }
        }
    }
    for (size_t i = 0; i < nn; i++) free(names[i]);
    free(names);
    return rc;
}

int manifest_from_runs(const char *kb, const char *runs, run_item **items, int *n, kbv_err *err) {
    *items = NULL, *n = 0;
    int cap = 0;
    /* Absolute folders: the items' paths are taken from "/" (add_item), and a relative
     * --kernelbench or --runs would name files under the root instead of the working folder. */
    char copy[PATH_MAX], kbabs[PATH_MAX];
    if (!realpath(kb, kbabs)) return kbv_seterr(err, "%s: cannot use the KernelBench folder: %s", kb, strerror(errno));
    if (!realpath(runs, copy)) return kbv_seterr(err, "%s: cannot read the runs folder: %s", runs, strerror(errno));
    const char *base = strrchr(copy, '/') ? strrchr(copy, '/') + 1 : copy;
    int rc = scan_runs(kbabs, copy, base, items, n, &cap, 0, err);
    if (rc == 0 && *n == 0) rc = kbv_seterr(err, "%s: no files named level_L_problem_P_sample_S_kernel.py (in it or one folder down)", runs);
    if (rc < 0) free(*items), *items = NULL, *n = 0;
    return rc;
}

static void progress(const run_opts *o, int done, int total, int stored, double t0, const char *what) {
    if (o->quiet) return;
    double el = kbv_now() - t0, rate = stored > 0 ? stored / el * 3600 : 0;
    double eta = stored > 0 ? (total - done) * el / stored : 0;
    fprintf(stderr, "kbv run: [%d/%d] %s  (%.0f/h, ETA %.0f min)\n", done, total, what, rate, eta / 60);
}

/* The lock file of slot k's GPU, shared by every kbv on this machine that uses the same
 * scratch folder: evaluations on one GPU time alone (util.h, kbv_gpulock). Empty on the CPU. */
static int on_gpu(const run_opts *o) { return strcmp(eval_device(o->eval.device), "cuda") == 0; }

/* Keyed by the physical GPU (gpus.h): slot k's --gpus GPU, or without --gpus the first this
 * process sees, as its children do; the lock a `kbv eval` on that GPU takes too (eval.c). */
static void gpu_lock_path(const run_opts *o, int k, char *out, size_t outlen) {
    out[0] = '\0';
    if (!on_gpu(o)) return;
    kbv_gpu g;
    if (o->ngpus) g = o->gpus[gpus_slot(k, o->ngpus)];
    else gpus_default(GPUS_ROOT, getenv("CUDA_VISIBLE_DEVICES"), &g);
    gpus_lock_path(kbv_scratch_base(o->eval.scratch_base), g.id, out, outlen);
}

/* A --gpus GPU as progress lines name it: its index among the GPUs this process can open (PCI
 * bus order: nvidia-smi's outside a cgroup) and its UUID's first 8 hex digits, "3
 * (GPU-1a2b3c4d)"; what kbv cannot map, as written. */
static void gpu_label(const kbv_gpu *g, char *out, size_t outlen) {
    if (g->index >= 0 && strncmp(g->id, "GPU-", 4) == 0) snprintf(out, outlen, "%d (%.12s)", g->index, g->id);
    else snprintf(out, outlen, "%s", g->cvd);
}

/* The entry a child evaluates travels in its environment (KBV_CHILD_ENTRY) as the parent read
 * it, paths resolved: a child never reads the manifest (or the run folders) again, since by
 * then a pipe (<(...)) is drained and a file may have been edited or replaced, which would give
 * the child another entry, or none, than the one the parent admitted and keyed. */
#define CHILD_ENTRY_ENV "KBV_CHILD_ENTRY"

/* An entry as one JSON object, paths as resolved; "line" only where asked for (the child's
 * entry), sample and level -1 (not given) as they are there and left out otherwise (a manifest
 * line, which takes no -1). NULL without memory. */
static char *item_json(const run_item *it, int with_line) {
    json_t *o = json_pack("{s:s, s:s, s:s}", "problem", it->problem, "candidate", it->candidate, "model", it->model);
    int bad = !o;
    if (!bad && (with_line || it->sample >= 0)) bad |= json_object_set_new(o, "sample", json_integer(it->sample));
    if (!bad && (with_line || it->level >= 0)) bad |= json_object_set_new(o, "level", json_integer(it->level));
    if (!bad && with_line) bad |= json_object_set_new(o, "line", json_integer(it->line));
    char *s = bad ? NULL : json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

static char *entry_encode(const run_item *it) { return item_json(it, 1); }

/* 1 when JSON can hold s (jansson takes UTF-8 text only): why item_json() gave nothing. */
static int json_text(const char *s) {
    json_t *j = json_string(s);
    json_decref(j);
    return j != NULL;
}

int manifest_write_jsonl(const run_item *items, int n, kbv_buf *out, kbv_err *err) {
    for (int i = 0; i < n; i++) {
        const run_item *it = &items[i];
        char *s = item_json(it, 0);
        if (!s && (!json_text(it->problem) || !json_text(it->candidate) || !json_text(it->model)))
            return kbv_seterr(err, "the entry on line %d: its paths or model are not UTF-8 text, which a JSON manifest cannot hold", it->line);
        int rc = !s || kbv_buf_printf(out, "%s\n", s) < 0;
        free(s);
        if (rc) return kbv_seterr(err, "out of memory");
    }
    return 0;
}

static int entry_decode(const char *s, run_item *it, kbv_err *err) {
    memset(it, 0, sizeof *it);
    json_error_t je;
    json_t *o = s ? json_loads(s, 0, &je) : NULL;
    const char *p = NULL, *c = NULL, *m = NULL;
    json_int_t sample = -2, level = -2, line = -1;
    int bad = !o || json_unpack(o, "{s:s, s:s, s:s, s:I, s:I, s:I}", "problem", &p, "candidate", &c, "model", &m, "sample", &sample, "level", &level,
                                "line", &line) != 0;
    bad = bad || strlen(p) >= sizeof it->problem || strlen(c) >= sizeof it->candidate || strlen(m) >= sizeof it->model || sample < -1 ||
          sample > 1000000000 || level < -1 || level > 1000000000 || line < 0 || line > INT_MAX;
    if (!bad) {
        snprintf(it->problem, sizeof it->problem, "%s", p), snprintf(it->candidate, sizeof it->candidate, "%s", c);
        snprintf(it->model, sizeof it->model, "%s", m);
        it->sample = (int)sample, it->level = (int)level, it->line = (int)line;
    }
    json_decref(o);
    return bad ? kbv_seterr(err, "--child: %s is %s (it is set by the parent kbv run)", CHILD_ENTRY_ENV, s ? "malformed" : "not set") : 0;
}

/* A child kbv for entry it (index i) on slot k: the parent's command line plus --child I:RUN,
 * the entry in KBV_CHILD_ENTRY; it records admission_wait (seconds, or -1: none) as
 * phases_s.admission_wait (KBV_ADMISSION_WAIT). */
static pid_t spawn_child(const run_opts *o, int i, const run_item *it, long long run_id, int k, double admission_wait, kbv_err *err) {
    char self[PATH_MAX];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) return kbv_seterr(err, "cannot find kbv's own path"), -1;
    self[sl] = '\0';
    char *entry = entry_encode(it);
    char **argv = entry ? calloc((size_t)o->argc + 4, sizeof *argv) : NULL, spec[64];
    if (!argv) return free(entry), kbv_seterr(err, "out of memory"), -1;
    snprintf(spec, sizeof spec, "%d:%lld", i, run_id);
    char lock[PATH_MAX];
    gpu_lock_path(o, k, lock, sizeof lock);
    int a = 0;
    for (int j = 0; j < o->argc; j++) {
        if (strcmp(o->argv[j], "--seed") == 0) { /* scrubbed; a child takes the seed from the database */
            j++;
            continue;
        }
        argv[a++] = o->argv[j];
    }
    argv[a++] = "--child", argv[a++] = spec, argv[a] = NULL;
    char waited[32];
    snprintf(waited, sizeof waited, "%.3f", admission_wait);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a killed parent takes its children along */
        signal(SIGINT, SIG_IGN);          /* a terminal's Ctrl-C is the parent's to handle (on_stop) */
        /* its GPU alone: by UUID where kbv knows it (gpus.h), so that no device order matters */
        if (o->ngpus) setenv("CUDA_VISIBLE_DEVICES", o->gpus[gpus_slot(k, o->ngpus)].cvd, 1), setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
        if (lock[0]) setenv("KBV_GPU_LOCK", lock, 1);
        if (admission_wait >= 0) setenv("KBV_ADMISSION_WAIT", waited, 1);
        else unsetenv("KBV_ADMISSION_WAIT");
        if (setenv(CHILD_ENTRY_ENV, entry, 1) == 0) execv(self, argv);
        _exit(127);
    }
    free(argv), free(entry);
    if (pid < 0) return kbv_seterr(err, "fork: %s", strerror(errno)), -1;
    return pid;
}

/* The pending entries by problem: admission's unit of measure (admit.h), and the run's
 * reference cache (refcache.c): one folder per problem, dropped as soon as the last pending
 * evaluation of that problem has ended, since it can hold GiBs on a tmpfs. */
typedef struct ref_groups {
    const char *dir;   /* the run's folder; "" when there is none */
    char (*sha)[65];   /* per pending entry: its problem file's SHA-256 ("" if unreadable) */
    int *group, *left; /* per pending entry: the first entry of its problem; per group: entries left */
} ref_groups;

static int ref_groups_init(ref_groups *g, const char *dir, const run_item *items, const int *pending, int np) {
    memset(g, 0, sizeof *g);
    g->dir = dir;
    g->sha = calloc((size_t)np + 1, sizeof *g->sha);
    g->group = calloc((size_t)np + 1, sizeof *g->group), g->left = calloc((size_t)np + 1, sizeof *g->left);
    if (!g->sha || !g->group || !g->left) return -1;
    for (int q = 0; q < np; q++) {
        kbv_err e;
        if (kbv_sha256_file(items[pending[q]].problem, g->sha[q], &e) < 0) g->sha[q][0] = '\0';
        g->group[q] = q;
        for (int p = 0; p < q; p++)
            if (strcmp(g->sha[p], g->sha[q]) == 0) {
                g->group[q] = g->group[p];
                break;
            }
        g->left[g->group[q]]++;
    }
    return 0;
}

static void ref_groups_done(ref_groups *g, int q) {
    if (!g->sha || --g->left[g->group[q]] > 0 || !g->dir[0] || !g->sha[q][0]) return;
    char path[PATH_MAX + 80];
    snprintf(path, sizeof path, "%s/%s", g->dir, g->sha[q]);
    kbv_rmtree(path);
}

static void ref_groups_free(ref_groups *g) { free(g->sha), free(g->group), free(g->left); }

/* Evaluations at a time: --jobs on each GPU of --gpus, or in all (run_main resolves jobs). */
static int slot_count(const run_opts *o) { return (o->ngpus ? o->ngpus : 1) * o->jobs; }

/* The order side-by-side evaluations start in: the problems in turn, each problem's entries in
 * the manifest's order (round r starts every problem's r-th entry, the problems in the order
 * they first appear). A manifest usually has a problem's samples in a row, and until one
 * evaluation of a problem has ended its need is unknown, so its others wait (admission,
 * admit_unmeasured_busy): in the manifest's order the slots would hold one problem at a time.
 * In turns, the first slots take distinct problems, and a problem's later samples come when
 * its first has been measured and has kept its reference side for them (refcache.c). */
typedef struct turn_key {
    int round, problem, q; /* its place among its problem's entries; its problem's first entry; its place */
} turn_key;

static int by_turn(const void *a, const void *b) {
    const turn_key *x = a, *y = b;
    if (x->round != y->round) return x->round < y->round ? -1 : 1;
    return x->problem < y->problem ? -1 : x->problem > y->problem;
}

static int order_in_turns(const run_item *items, int *pending, int np) {
    turn_key *t = calloc((size_t)np + 1, sizeof *t);
    int *was = calloc((size_t)np + 1, sizeof *was);
    if (!t || !was) return free(t), free(was), -1;
    for (int q = 0; q < np; q++) {
        t[q] = (turn_key){0, q, q};
        for (int p = q - 1; p >= 0; p--) /* the latest earlier entry of its problem */
            if (strcmp(items[pending[p]].problem, items[pending[q]].problem) == 0) {
                t[q].round = t[p].round + 1, t[q].problem = t[p].problem;
                break;
            }
        was[q] = pending[q];
    }
    qsort(t, (size_t)np, sizeof *t, by_turn);
    for (int q = 0; q < np; q++) pending[q] = was[t[q].q];
    free(t), free(was);
    return 0;
}

/* The compile cache's folder as session.c picks it (for admission: is it on the scratch's
 * file system?); the scratch base where it lies in each evaluation's scratch. */
static const char *compile_cache(const run_opts *o, char *buf, size_t n) {
    return session_cache_base(&o->eval, NULL, buf, n) ? buf : kbv_scratch_base(o->eval.scratch_base);
}

/* Whether a stored status means the evaluation ran all of its cases (its use is the problem's). */
static int ran_all_cases(const char *status) {
    return strcmp(status, "verified") == 0 || strcmp(status, "incorrect") == 0 || strcmp(status, "overfit") == 0 || strcmp(status, "hack") == 0;
}

/* SIGINT or SIGTERM to kbv run (docs/results.md, "Stopping a run"): the first stops it starting
 * entries and, with slots, kills the running evaluations (not stored; --resume runs them
 * again); one at a time, the evaluation in progress ends first. Either way the database is
 * closed cleanly and the summary and time report printed. A second signal ends kbv at once. */
static volatile sig_atomic_t g_stop;

static struct timespec g_stop_at; /* when the first signal came */

static void on_stop(int sig) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now); /* (async-signal-safe) */
    if (g_stop) {
        /* A second signal ends kbv at once, unless it came with the first: timeout(1) sends
         * its signal to kbv and then to kbv's process group, so kbv gets it twice at once. */
        double since = (double)(now.tv_sec - g_stop_at.tv_sec) + (double)(now.tv_nsec - g_stop_at.tv_nsec) / 1e9;
        if (since < 0.5) return;
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    g_stop_at = now;
    g_stop = sig;
}

/* ---- compiling ahead (docs/results.md, "Compiling ahead") ----------------------------------
 *
 * A compile-ahead worker is the candidate's worker an evaluation would start (session_load:
 * the same worker binary, sandbox, environment and per-candidate compile cache), which loads
 * the problem, inspects and loads the candidate, and stops: loading a load_inline candidate
 * builds its extension into the cache folder of that candidate's bytes, where the
 * evaluation's own load later finds it (torch rebuilds what ninja finds out of date, so a
 * build that differs in anything is built again). Nothing of it is stored or judged: the
 * evaluation loads the candidate itself and a failure is found again there. */

enum { AHEAD_NONE, AHEAD_RUNNING, AHEAD_BUILT, AHEAD_FAILED, AHEAD_NOT /* an evaluation loads it */ };
enum { ENTRY_STARTED = 1, ENTRY_SAID = 2 }; /* run_slots: per pending entry */
/* How much nicer than the run a compile ahead runs (ahead_spawn). */
enum { AHEAD_NICE = 10 };
/* A compile-ahead child's exit status: loaded, the load failed (the evaluation says why), kbv. */
enum { AHEAD_EXIT_BUILT = 0, AHEAD_EXIT_FAILED = 1, AHEAD_EXIT_KBV = 2 };

/* How many compile-ahead workers at a time (run.h, compile_jobs; run_main settles the default):
 * none where the compile cache is each evaluation's own scratch, since a build made ahead
 * would not be found there. */
static int ahead_jobs(const run_opts *o) {
    char base[PATH_MAX];
    if (o->compile_jobs <= 0 || !session_cache_base(&o->eval, NULL, base, sizeof base)) return 0;
    return o->compile_jobs > 64 ? 64 : o->compile_jobs;
}

/* A torch build folder's lock (torch.utils.file_baton: created with O_EXCL, removed when the
 * build ends; a holder killed mid-build leaves it, and every later load of the extension
 * then waits for it forever). Beneath the candidate's cache folder dir, remove the locks
 * modified before `before` or at or after `since` (0: no bound). The folder is the
 * candidate's to write: nothing in it is followed (a build folder that is a link to elsewhere
 * is skipped), so kbv removes only regular files named lock that lie in it. */
static void drop_locks(const char *dir, time_t before, time_t since) {
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0) close(dfd);
        return;
    }
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        int bfd = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat sb;
        if (bfd < 0) continue;
        if (fstatat(bfd, "lock", &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode) &&
            ((before && sb.st_mtime < before) || (since && sb.st_mtime >= since)))
            unlinkat(bfd, "lock", 0);
        close(bfd);
    }
    closedir(d);
}

/* In a forked child: the compile-ahead of entry it (AHEAD_EXIT_*). cache: the compile cache's
 * base (compile_cache). */
static int ahead_load(const eval_opts *eo, const run_item *it, const char *cache) {
    eval_opts e = *eo;
    e.problem = it->problem, e.candidate = it->candidate, e.verbose = 0;
    kbv_result r;
    result_init(&r);
    eval_ctx c = {.o = &e, .r = &r, .fresh_ci = -1, .lock = KBV_GPULOCK_OFF};
    kbv_err err = {{0}};
    int rc = AHEAD_EXIT_KBV;
    snprintf(r.device, sizeof r.device, "%s", eval_device(e.device));
    if (kbv_abspath(it->problem, r.problem.path, sizeof r.problem.path, &err) < 0 ||
        kbv_abspath(it->candidate, r.candidate.path, sizeof r.candidate.path, &err) < 0 ||
        kbv_sha256_file(r.candidate.path, r.candidate.sha256, &err) < 0 || proc_init_reaper(&err) < 0 ||
        kbv_mkscratch(e.scratch_base, c.scratch, sizeof c.scratch, &err) < 0) {
        result_free(&r);
        return AHEAD_EXIT_KBV;
    }
    int ok = session_scratch_folders(c.scratch, &err) == 0;
    /* The candidate's folder in the compile cache: locks left by a kbv killed mid-build are
     * stale once older than any kbv load may take (its worker is killed then). */
    char dir[PATH_MAX + 32];
    session_cache_folder(cache, r.candidate.sha256, dir, sizeof dir);
    drop_locks(dir, time(NULL) - (time_t)(e.start_timeout_s + 2 * e.timeout_s + e.load_timeout_s) - 60, 0);
    time_t t0 = time(NULL);
    kbv_proc p;
    kbv_reply fail;
    proc_result pr = PROC_OK;
    memset(&p, 0, sizeof p), memset(&fail, 0, sizeof fail);
    int s = ok ? session_load(&c, &p, "candidate", 1, NULL, &pr, &fail, &err) : -1;
    if (s >= 0) {
        if (s == 0) proc_finish(&p, 5.0);
        else proc_kill(&p);
        proc_free(&p);
        reply_free(&fail);
        rc = s == 0 ? AHEAD_EXIT_BUILT : AHEAD_EXIT_FAILED;
        /* Killed (a timeout, a limit) or dead mid-build: the lock its build took is left, and
         * no other load of these bytes runs in this run until this one has ended (run_slots). */
        if (s > 0 && pr != PROC_OK) drop_locks(dir, 0, t0);
    }
    free(c.kernels);
    if (c.env) session_free_env(&c);
    kbv_rmtree(c.scratch);
    result_free(&r);
    return rc;
}

/* Start the compile-ahead of entry it in a child process: its pid, or -1 (err set). */
static pid_t ahead_spawn(const run_opts *o, const eval_opts *eo, const run_item *it, const char *cache, kbv_err *err) {
    static int turn; /* the GPUs in turn: each worker's CUDA context takes memory where it starts */
    const char *gpu = o->ngpus ? o->gpus[gpus_slot(turn++, o->ngpus)].cvd : NULL;
    fflush(NULL); /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a killed parent takes its children along */
        signal(SIGINT, SIG_IGN);          /* a terminal's Ctrl-C is the parent's to handle (on_stop) */
        if (gpu)
            setenv("CUDA_VISIBLE_DEVICES", gpu, 1),
                setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1); /* the run's GPUs are alike: one architecture to build for */
        /* Background work: the compile (its worker, ninja, nvcc and the compilers inherit this)
         * yields the CPU to the evaluations running now, so that their timed and host-bound
         * calls are not slowed by it where every core is busy. */
        if (kbv_nicer(AHEAD_NICE) < 0)
            fprintf(stderr, "kbv run: compile ahead of %s at the run's own priority (setpriority: %s)\n", it->candidate, strerror(errno));
        _exit(ahead_load(eo, it, cache));
    }
    if (pid < 0) return kbv_seterr(err, "fork: %s", strerror(errno)), -1;
    return pid;
}

/* ---- where the time went ------------------------------------------------------------------- */

typedef struct run_times {
    double t0;                 /* this invocation's start */
    double phase[PHASE_COUNT]; /* phases_s summed over the evaluations stored now (a phase that did not run: 0) */
    double eval_wall;          /* their wall_s, summed */
    int nevals;                /* evaluations stored now */
    int ngpus;                 /* GPU locks watched (0: GPU busy time not measured) */
    double gpu_busy;           /* seconds some evaluation held a GPU's lock, summed over the GPUs */
    double gpu_alone;          /* ... of them, held alone (timing: kbv's, the standard and paper steps') */
    double slot_wait;          /* seconds free slots waited for their next entry's compile-ahead */
    int ahead_jobs, ahead_started, ahead_built, ahead_failed, ahead_hits, ahead_peak, in_slot; /* peak: the most at once; in_slot: evaluations that compiled their own */
    double ahead_s; /* the compile-ahead workers' wall time, summed */
    pid_t pch;      /* kbv-worker --build-pch running in the background (--build fast on a GPU), or 0 */
    /* CPU seconds (user + system, wait4's rusage: each child with the descendants it waited
     * for) of the evaluations' processes that ended (neval_cpu of them), of the compiles
     * ahead and of the background headers' build; kbv's own and all its children's at t0; the
     * machine's busy and total jiffies at t0 (/proc/stat, 0: unreadable). */
    double cpu_evals, cpu_ahead, cpu_pch, cpu_self0, cpu_children0;
    int neval_cpu;
    unsigned long long host_busy0, host_total0;
} run_times;

/* The machine's CPU time so far from /proc/stat's "cpu" line, in jiffies: busy (all but idle
 * and iowait) and in all. 0, or -1 where unreadable. */
static int host_cpu(unsigned long long *busy, unsigned long long *total) {
    FILE *f = fopen("/proc/stat", "re");
    if (!f) return -1;
    unsigned long long v[8] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (n < 4) return -1;
    *total = 0;
    for (int i = 0; i < 8; i++) *total += v[i]; /* (guest time is inside user time already) */
    *busy = *total - v[3] - v[4];
    return 0;
}

/* The background build of the precompiled headers has ended with wait status st. */
static void pch_ended(const run_opts *o, run_times *t, int st) {
    kbv_err e = {{0}};
    t->pch = 0;
    if (session_pch_status(&o->eval, st, &e) < 0) fprintf(stderr, "kbv run: --build fast: %s: every build takes the stock path\n", e.msg);
}

static void times_add(run_times *t, const double *phase_s, double wall_s) {
    for (int k = 0; k < PHASE_COUNT; k++)
        if (phase_s[k] > 0) t->phase[k] += phase_s[k];
    if (wall_s > 0) t->eval_wall += wall_s;
    t->nevals++;
}

/* A stored evaluation's phases_s and wall_s, from its result in the database. */
static void times_add_stored(kbv_db *db, long long run_id, const char *key, run_times *t) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->h, "SELECT result, wall_s FROM evaluations WHERE run_id = ? AND key = ?", -1, &st, NULL) != SQLITE_OK) return;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(st, 0);
        json_t *j = text ? json_loads(text, 0, NULL) : NULL;
        const json_t *ph = json_object_get(j, "phases_s");
        double p[PHASE_COUNT];
        for (int k = 0; k < PHASE_COUNT; k++)
            p[k] = json_is_number(json_object_get(ph, kbv_phase_names[k])) ? json_number_value(json_object_get(ph, kbv_phase_names[k])) : -1;
        times_add(t, p, sqlite3_column_double(st, 1));
        json_decref(j);
    }
    sqlite3_finalize(st);
}

/* The GPU locks' files (gpu_lock_path), found once their first evaluation made them, and
 * whether someone holds each: its flock in /proc/locks (read, never taken: a probe that took
 * the lock would delay the evaluations). */
typedef struct gpu_watch {
    int n;
    char path[64][PATH_MAX];
    unsigned long ino[64];
    unsigned maj[64], min[64];
    int found[64];
    double last; /* kbv_now() of the last sample */
} gpu_watch;

static void gpu_watch_init(gpu_watch *w, const run_opts *o, int nslots) {
    memset(w, 0, sizeof *w);
    for (int k = 0; k < nslots && w->n < 64; k++) {
        char p[PATH_MAX];
        gpu_lock_path(o, k, p, sizeof p);
        int dup = !p[0];
        for (int j = 0; j < w->n && !dup; j++) dup = strcmp(w->path[j], p) == 0;
        if (!dup) snprintf(w->path[w->n++], PATH_MAX, "%s", p);
    }
    w->last = kbv_now();
}

/* Add the time since the last sample to t->gpu_busy for each GPU whose lock is held now. */
static void gpu_watch_sample(gpu_watch *w, run_times *t) {
    double now = kbv_now(), dt = now - w->last;
    w->last = now;
    for (int j = 0; j < w->n; j++) {
        struct stat sb;
        if (!w->found[j] && stat(w->path[j], &sb) == 0)
            w->found[j] = 1, w->ino[j] = (unsigned long)sb.st_ino, w->maj[j] = major(sb.st_dev), w->min[j] = minor(sb.st_dev);
    }
    FILE *f = fopen("/proc/locks", "re");
    if (!f) return;
    int busy[64] = {0}; /* 1: held shared (cases), 2: held alone (timing) */
    char line[256];
    while (fgets(line, sizeof line, f)) {
        unsigned maj, min;
        unsigned long ino;
        int alone;
        if (!gpus_lock_held(line, &maj, &min, &ino, &alone)) continue;
        for (int j = 0; j < w->n; j++)
            if (w->found[j] && w->ino[j] == ino && w->maj[j] == maj && w->min[j] == min && busy[j] < 1 + alone) busy[j] = 1 + alone;
    }
    fclose(f);
    for (int j = 0; j < w->n; j++) {
        if (busy[j]) t->gpu_busy += dt;
        if (busy[j] == 2) t->gpu_alone += dt;
    }
}

/* The candidate's SHA-256 in an entry's key (run_key: "PSHA:CSHA:..."); "" when unreadable. */
static void key_candidate(const char *key, char out[65]) {
    const char *c = strchr(key, ':');
    out[0] = '\0';
    if (c && strcspn(c + 1, ":") == 64) memcpy(out, c + 1, 64), out[64] = '\0';
}

/* Run the pending entries in child processes, nslots at a time, each admitted when its need
 * fits (admit.h) unless --no-admission; beside them, compile-ahead workers for the entries
 * after (one per candidate's bytes), each admitted like an evaluation, and none while an
 * evaluation waits for memory or scratch. An entry whose candidate is being compiled ahead
 * starts when that ends, so that no two loads of one candidate build at once; meanwhile the
 * slots take later entries, but none that would compile its candidate in the slot: that
 * compile goes to the pool, which may then be as wide as ahead_jobs() plus the slots not
 * compiling their own (docs/results.md, "Compiling ahead"). */
static int run_slots(const run_opts *o, const eval_opts *eo, kbv_db *db, long long run_id, const int *pending, int npending, char (*keys)[300],
                     const run_item *items, int total, int done0, int *counts, ref_groups *groups, run_times *tm, kbv_err *err, int *kbv_errors) {
    int nslots = slot_count(o);
    if (nslots > 64) nslots = 64;
    int nahead = ahead_jobs(o), amax = nahead ? nahead + nslots : 0; /* the pool's widest (below) */
    tm->ahead_jobs = nahead;
    admit_eval ev[64], aev[128]; /* per slot: the child running there (pid 0: free); per compile slot */
    memset(ev, 0, sizeof ev), memset(aev, 0, sizeof aev);
    int slot_item[64], slot_q[64], slot_builds[64], aq[128], next = 0, anext = 0, running = 0, arunning = 0, done = done0, stored = 0, rc = 0;
    int admission = !o->no_admission, blocked = 0, waiting = ADMIT_YES, nwaits = 0;
    double t0 = kbv_now(), waited = 0, slot_wait_since = 0, astart[128];
    kbv_admit adm;
    char cache[PATH_MAX];
    memset(&adm, 0, sizeof adm);
    const char *cache_base = compile_cache(o, cache, sizeof cache);
    char(*csha)[65] = calloc((size_t)npending + 1, sizeof *csha);
    int *first = calloc((size_t)npending + 1, sizeof *first);      /* per entry: the first pending entry of its candidate's bytes */
    unsigned char *state = calloc((size_t)npending + 1, 1);        /* per first entry: AHEAD_* */
    unsigned char *started = calloc((size_t)npending + 1, 1);      /* per entry: ENTRY_* */
    double *wsince = calloc((size_t)npending + 1, sizeof *wsince); /* per entry: when it began to wait for admission */
    gpu_watch *gw = calloc(1, sizeof *gw);
    if (!csha || !first || !state || !started || !wsince || !gw) rc = kbv_seterr(err, "out of memory");
    for (int q = 0; rc == 0 && q < npending; q++) {
        key_candidate(keys[pending[q]], csha[q]);
        first[q] = q;
        for (int p = 0; p < q && csha[q][0]; p++)
            if (strcmp(csha[p], csha[q]) == 0) {
                first[q] = first[p];
                break;
            }
    }
    if (rc == 0) gpu_watch_init(gw, o, nslots), tm->ngpus = gw->n;
    if (rc == 0 && admission && admit_init(&adm, o->eval.scratch_base, groups->dir, cache_base, npending, (const char(*)[65])groups->sha, err) < 0)
        rc = -1;
    if (rc == 0 && nahead && !o->quiet)
        fprintf(stderr, "kbv run: compiling ahead in up to %d worker(s) (--compile-jobs), %d while no slot compiles its own\n", nahead, amax);
    while ((next < npending || running > 0) && rc == 0) {
        if (g_stop) { /* the running ones are killed below, as on an error */
            rc = RUN_INTERRUPTED;
            break;
        }
        /* Fill the free slots, in the manifest's order. An entry whose problem is not measured
         * yet while one of its evaluations runs (admit_unmeasured_busy), or whose candidate is
         * being compiled ahead, is passed over for the entries after it, and starts once that
         * ends: on the H200 a problem's first evaluation of 647 s held every later entry back
         * for 4 minutes with the slots free (BENCHMARKS.md). An entry whose need does not fit
         * (and any running) waits, and the ones after it wait behind it, so that a large
         * entry is not passed over for ever. */
        for (int k = 0; k < nslots && next < npending && !blocked; k++) {
            if (ev[k].pid) continue;
            int q = -1, compiling = 0, memwait = 0;
            admit_bytes need = {0, 0};
            for (int s = next; s < npending && q < 0; s++) {
                if (started[s] & ENTRY_STARTED) continue;
                if (state[first[s]] == AHEAD_RUNNING) {
                    compiling = 1;
                    continue;
                }
                /* Passed over for an earlier entry's compile ahead, it would compile its own
                 * candidate here (its bytes built nowhere yet): that compile goes to the pool,
                 * at the pool's priority and in the manifest's order, and the slot takes the
                 * first entry built. Compiled in the slot at the run's priority, it held the
                 * slot and took the cores from the earlier entries' compiles ahead, which then
                 * waited, built, for the slots (BENCHMARKS.md, call DD). */
                if (compiling && nahead && csha[s][0] && state[first[s]] == AHEAD_NONE) continue;
                int g = groups->group ? groups->group[s] : 0;
                if (!admission) {
                    q = s;
                    break;
                }
                need = admit_need_running(&adm, ev, nslots, g);
                admit_bytes avail = admit_available(&adm), left = admit_left(admit_left(avail, ev, nslots), aev, amax);
                int why = admit_decide(&adm, ev, nslots, g, need, left, running || arunning);
                if (why == ADMIT_YES) {
                    q = s;
                    break;
                }
                if (!wsince[s]) wsince[s] = kbv_now();
                if (why == ADMIT_WAIT_MEASURE) { /* passed over, said once */
                    if (!(started[s] & ENTRY_SAID) && !o->quiet)
                        fprintf(stderr, "kbv run: waiting to start %s (line %d): problem %s's first evaluation is still measuring what it needs\n",
                                items[pending[s]].candidate, items[pending[s]].line, items[pending[s]].problem);
                    started[s] |= ENTRY_SAID;
                    continue;
                }
                if (why != waiting && !o->quiet) {
                    char nb[32], fb[32], rb[32];
                    int scratch = why == ADMIT_WAIT_SCRATCH;
                    long long f = scratch ? avail.scratch : avail.memory;
                    admit_format(scratch ? need.scratch : need.memory, nb, sizeof nb);
                    admit_format(f, fb, sizeof fb);
                    admit_format(f - (scratch ? left.scratch : left.memory), rb, sizeof rb);
                    fprintf(stderr, "kbv run: waiting for %s to start %s (line %d): need %s, %s free, %s of it reserved by %d running\n",
                            scratch ? "scratch" : "memory", items[pending[s]].candidate, items[pending[s]].line, nb, fb, rb, running + arunning);
                }
                waiting = why, memwait = 1;
                break;
            }
            if (q < 0) {
                if (!memwait) waiting = ADMIT_YES; /* none waits for memory or scratch: compiles ahead may start */
                if (compiling && !slot_wait_since) slot_wait_since = kbv_now();
                break;
            }
            waiting = ADMIT_YES;
            double wait_s = admission ? (wsince[q] ? kbv_now() - wsince[q] : 0) : -1;
            pid_t p = spawn_child(o, pending[q], &items[pending[q]], run_id, k, wait_s, err);
            if (p < 0) {
                if (running == 0 && arunning == 0) { /* nothing will end and free what it lacks */
                    rc = -1;
                    break;
                }
                /* kbv's own exhaustion (no process or memory left): try again when one ends */
                if (!o->quiet) fprintf(stderr, "kbv run: %s; the next evaluation starts when a running one ends\n", err->msg);
                err->msg[0] = '\0';
                blocked = 1;
                break;
            }
            if (wsince[q]) nwaits++, waited += wait_s;
            if (slot_wait_since) tm->slot_wait += kbv_now() - slot_wait_since, slot_wait_since = 0;
            if (state[first[q]] == AHEAD_BUILT) tm->ahead_hits++;
            slot_builds[k] = csha[q][0] && state[first[q]] == AHEAD_NONE; /* its load compiles: its bytes built nowhere yet */
            tm->in_slot += slot_builds[k];
            if (state[first[q]] == AHEAD_NONE) state[first[q]] = AHEAD_NOT; /* its bytes load in an evaluation now: none ahead */
            memset(&ev[k], 0, sizeof ev[k]);
            ev[k].pid = p, ev[k].problem = groups->group ? groups->group[q] : 0, ev[k].reserved = need;
            slot_q[k] = q, slot_item[k] = pending[q], running++;
            started[q] |= ENTRY_STARTED;
            while (next < npending && (started[next] & ENTRY_STARTED)) next++;
        }
        /* Then the compile-aheads, for the entries after those started: not while an
         * evaluation waits for admission (it comes first), and each only when it fits. */
        if (anext < next) anext = next;
        /* The pool: ahead_jobs() workers, and one more for each slot not compiling its own
         * entry's candidate (a slot counts as compiling until its evaluation ends), so that
         * the compiles at once are never more than the slots and ahead_jobs() together. */
        int width = nahead; /* at most amax */
        for (int k = 0; nahead && k < nslots; k++) width += !(ev[k].pid && slot_builds[k]);
        while (rc == 0 && nahead && waiting == ADMIT_YES && !blocked && anext < npending) {
            int q = anext, k = 0;
            if (first[q] != q || !csha[q][0] ||
                state[q] != AHEAD_NONE) { /* an earlier entry's load builds it, an unreadable file builds nothing, an evaluation of it started */
                anext++;
                continue;
            }
            if (arunning >= width) break;
            while (k < amax && aev[k].pid) k++;
            if (k == amax) break;
            /* No further ahead than the pool is wide: builds for entries the slots will not
             * reach for a long while only take CPU from the evaluations running now (on the
             * H200, 10 workers unbounded built some 30 entries while 8 slots finished 9). */
            int unstarted = 0; /* entries from next to anext not started yet (some after next may have been) */
            for (int u = next; u < anext; u++) unstarted += !(started[u] & ENTRY_STARTED);
            if (unstarted >= width) break;
            admit_bytes need = {0, 0};
            if (admission) {
                need = admit_ahead_need(&adm);
                admit_bytes left = admit_left(admit_left(admit_available(&adm), ev, nslots), aev, amax);
                if (admit_check(need, left) != ADMIT_YES) break;
            }
            pid_t p = ahead_spawn(o, eo, &items[pending[q]], cache_base, err);
            if (p < 0) { /* compiling ahead is only a head start: the evaluation compiles itself */
                err->msg[0] = '\0';
                break;
            }
            memset(&aev[k], 0, sizeof aev[k]);
            aev[k].pid = p, aev[k].problem = groups->group ? groups->group[q] : 0, aev[k].reserved = need;
            aq[k] = q, astart[k] = kbv_now(), state[q] = AHEAD_RUNNING;
            arunning++, anext++, tm->ahead_started++;
            if (arunning > tm->ahead_peak) tm->ahead_peak = arunning;
        }
        if (rc < 0 || (running == 0 && arunning == 0)) break;
        int st = 0;
        struct rusage ru;
        memset(&ru, 0, sizeof ru);
        pid_t p = wait4(-1, &st, WNOHANG, &ru);
        if (p == 0) { /* none ended: measure the running ones, then look again */
            if (admission) admit_sample(&adm, ev, nslots), admit_sample(&adm, aev, amax);
            gpu_watch_sample(gw, tm);
            struct timespec ts = {0, (long)(ADMIT_TICK_S * 1e9)};
            nanosleep(&ts, NULL);
            continue;
        }
        if (p < 0) {
            if (errno == EINTR) continue;
            rc = kbv_seterr(err, "wait4: %s", strerror(errno));
            break;
        }
        gpu_watch_sample(gw, tm);
        if (p == tm->pch) tm->cpu_pch += kbv_rusage_seconds(&ru), pch_ended(o, tm, st);
        for (int k = 0; k < amax; k++) {
            if (aev[k].pid != p) continue;
            int built = WIFEXITED(st) && WEXITSTATUS(st) == AHEAD_EXIT_BUILT;
            state[aq[k]] = built ? AHEAD_BUILT : AHEAD_FAILED;
            tm->ahead_built += built, tm->ahead_failed += !built;
            tm->ahead_s += kbv_now() - astart[k], tm->cpu_ahead += kbv_rusage_seconds(&ru);
            if (admission) admit_ahead_record(&adm, &aev[k], (long long)ru.ru_maxrss * 1024);
            aev[k].pid = 0, arunning--;
        }
        for (int k = 0; k < nslots; k++) {
            if (ev[k].pid != p) continue;
            running--, blocked = 0;
            tm->cpu_evals += kbv_rusage_seconds(&ru), tm->neval_cpu++;
            int i = slot_item[k];
            ref_groups_done(groups, slot_q[k]);
            char status[32] = "", what[700];
            if (db_status(db, run_id, keys[i], status, sizeof status, err) < 0) rc = RUN_BAD_DB;
            else if (!status[0]) {
                char how[64];
                if (WIFEXITED(st)) snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(st));
                else snprintf(how, sizeof how, "signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
                /* kbv's own failure on this entry (its error is on stderr): not stored, the run
                 * goes on, and --resume runs it again */
                (*kbv_errors)++;
                if (!o->quiet)
                    fprintf(stderr, "kbv run: the evaluation of %s (line %d) stored nothing (its kbv ended with %s); --resume runs it again\n",
                            items[i].candidate, items[i].line, how);
            } else {
                done++, stored++;
                times_add_stored(db, run_id, keys[i], tm);
                for (int v = 0; v < KBV_STATUS_COUNT; v++)
                    if (strcmp(status, kbv_status_name((kbv_status)v)) == 0) counts[v]++;
                char gpu[128] = "";
                if (o->ngpus) gpu_label(&o->gpus[gpus_slot(k, o->ngpus)], gpu, sizeof gpu);
                snprintf(what, sizeof what, "%s %s: %s%s%s", items[i].model, items[i].candidate, status, o->ngpus ? " on GPU " : "", gpu);
                progress(o, done, total, stored, t0, what);
            }
            if (admission) admit_record(&adm, &ev[k], status[0] && ran_all_cases(status), (long long)ru.ru_maxrss * 1024);
            ev[k].pid = 0;
        }
    }
    for (int k = 0; k < nslots; k++) /* on an error: stop the others */
        if (ev[k].pid) kill(ev[k].pid, SIGKILL), waitpid(ev[k].pid, NULL, 0);
    for (int k = 0; k < amax; k++)
        if (aev[k].pid) kill(aev[k].pid, SIGKILL), waitpid(aev[k].pid, NULL, 0);
    if (admission && nwaits && !o->quiet)
        fprintf(stderr, "kbv run: %d evaluation(s) waited for scratch, memory or their problem's first measurement, %.0f s in all\n", nwaits, waited);
    admit_free(&adm);
    free(csha), free(first), free(state), free(started), free(wsince), free(gw);
    return rc;
}

/* Where this invocation's time went (docs/results.md, "Where a run's time went"): a few lines
 * on stderr (unless quiet) and one JSON line appended to DB.throughput.jsonl, next to the
 * database (its schema has no place for it). */
static void times_report(const run_opts *o, const run_times *t, long long run_id, const char *uuid) {
    double wall = kbv_now() - t->t0, per_h = wall > 0 ? t->nevals / wall * 3600 : 0;
    double share = t->ngpus && wall > 0 ? t->gpu_busy / (wall * t->ngpus) : -1;
    /* The CPU: the machine's busy share over the run (anyone's work), and what kbv and every
     * process it waited for used (evaluations, compiles ahead, headers, kbv run itself). */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned long long busy1 = 0, total1 = 0;
    double host = t->host_total0 && host_cpu(&busy1, &total1) == 0 && total1 > t->host_total0
                      ? (double)(busy1 - t->host_busy0) / (double)(total1 - t->host_total0)
                      : -1;
    double self = kbv_cpu_seconds(RUSAGE_SELF) - t->cpu_self0, all = self + kbv_cpu_seconds(RUSAGE_CHILDREN) - t->cpu_children0;
    double kbv_share = cores > 0 && wall > 0 ? all / (wall * (double)cores) : -1;
    /* The CPU's own bound on the rate: all of kbv's core-seconds over the evaluations stored,
     * on every core all the time (compiles ahead for entries not stored yet count too, so a
     * run cut short states its cost high and its ceiling low). */
    double per_stored = t->nevals > 0 && all > 0 ? all / t->nevals : -1;
    double ceiling = per_stored > 0 && cores > 0 ? (double)cores * 3600 / per_stored : -1;
    json_t *c = json_pack("{s:i, s:o, s:f, s:o, s:f, s:i, s:o, s:f, s:f, s:f, s:o, s:o}", "cores", (int)cores, "host_busy_share",
                          host >= 0 ? json_real(host) : json_null(), "kbv_s", all, "kbv_share", kbv_share >= 0 ? json_real(kbv_share) : json_null(),
                          "evaluations_s", t->cpu_evals, "evaluations", t->neval_cpu, "per_evaluation_s",
                          t->neval_cpu ? json_real(t->cpu_evals / t->neval_cpu) : json_null(), "compile_ahead_s", t->cpu_ahead, "headers_s",
                          t->cpu_pch, "kbv_run_s", self, "per_stored_s", per_stored > 0 ? json_real(per_stored) : json_null(), "ceiling_per_hour",
                          ceiling > 0 ? json_real(ceiling) : json_null());
    json_t *ph = json_object(), *j = json_pack("{s:I, s:s, s:f, s:i, s:f, s:f, s:i}", "run", (json_int_t)run_id, "uuid", uuid, "wall_s", wall,
                                               "evaluations", t->nevals, "per_hour", per_h, "evaluations_wall_s", t->eval_wall, "gpus", t->ngpus);
    for (int k = 0; ph && k < PHASE_COUNT; k++) json_object_set_new(ph, kbv_phase_names[k], json_real(t->phase[k]));
    if (j) {
        json_object_set_new(j, "phases_s", ph ? ph : json_null());
        json_object_set_new(j, "gpu_busy_s", t->ngpus ? json_real(t->gpu_busy) : json_null());
        json_object_set_new(j, "gpu_busy_share", share >= 0 ? json_real(share) : json_null());
        json_object_set_new(j, "gpu_alone_s", t->ngpus ? json_real(t->gpu_alone) : json_null());
        json_object_set_new(j, "compile_ahead",
                            json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:f, s:f}", "jobs", t->ahead_jobs, "peak", t->ahead_peak, "started",
                                      t->ahead_started, "built", t->ahead_built, "failed", t->ahead_failed, "hits", t->ahead_hits, "in_slot",
                                      t->in_slot, "seconds", t->ahead_s, "slot_wait_s", t->slot_wait));
        json_object_set_new(j, "cpu", c);
        c = NULL;
    } else {
        json_decref(ph);
    }
    json_decref(c);
    char path[PATH_MAX];
    char *line = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (line && snprintf(path, sizeof path, "%s.throughput.jsonl", o->db ? o->db : "kbv.db") < (int)sizeof path) {
        FILE *f = fopen(path, "ae");
        if (f) fprintf(f, "%s\n", line), fclose(f);
    }
    free(line);
    if (o->quiet) return;
    fprintf(stderr, "kbv run: time: %.0f s wall, %d evaluation(s) stored (%.0f/h); inside them, summed:", wall, t->nevals, per_h);
    for (int k = 0; k < PHASE_COUNT; k++)
        if (t->phase[k] > 0) fprintf(stderr, " %s %.0f s", kbv_phase_names[k], t->phase[k]);
    fputc('\n', stderr);
    if (t->ngpus)
        fprintf(stderr, "kbv run: GPU busy (an evaluation held its lock) %.0f s of %.0f s: %.0f%% on %d GPU(s); held alone (timing) %.0f s: %.0f%%\n",
                t->gpu_busy, wall * t->ngpus, 100 * share, t->ngpus, t->gpu_alone, wall > 0 ? 100 * t->gpu_alone / (wall * t->ngpus) : 0);
    else fprintf(stderr, "kbv run: GPU busy: not measured (%s)\n", on_gpu(o) ? "--jobs 1: no GPU lock" : "on the CPU");
    if (t->ahead_jobs)
        fprintf(stderr,
                "kbv run: compiled ahead in %d worker(s) (at most %d at once): %d started, %d built, %d failed, %.0f s in all; "
                "%d evaluation(s) found theirs built, %d compiled their own; slots waited %.0f s for compiles\n",
                t->ahead_jobs, t->ahead_peak, t->ahead_started, t->ahead_built, t->ahead_failed, t->ahead_s, t->ahead_hits, t->in_slot,
                t->slot_wait);
    else fprintf(stderr, "kbv run: compiled ahead: none (--compile-jobs)\n");
    fprintf(stderr, "kbv run: CPU: ");
    if (host >= 0) fprintf(stderr, "the machine's %ld cores %.0f%% busy; ", cores, 100 * host);
    fprintf(stderr, "kbv and what it ran %.0f core-s (%.0f%% of the cores)", all, 100 * (kbv_share > 0 ? kbv_share : 0));
    if (t->neval_cpu) fprintf(stderr, "; %.0f s per evaluation (its workers and their compilers)", t->cpu_evals / t->neval_cpu);
    if (t->cpu_ahead > 0) fprintf(stderr, "; compiles ahead %.0f s", t->cpu_ahead);
    if (t->cpu_pch > 0) fprintf(stderr, "; headers %.0f s", t->cpu_pch);
    fprintf(stderr, "; kbv run itself %.0f s\n", self);
    if (ceiling > 0)
        fprintf(stderr, "kbv run: CPU ceiling: %.0f core-s a stored evaluation, all included: %ld cores allow at most %.0f/h\n", per_stored, cores,
                ceiling);
}

int run_main(const run_opts *opts, kbv_err *err) {
    /* --jobs not given: on a GPU, evaluations share each GPU (timing alone, under the lock),
     * up to 8 or half the CPU cores; on the CPU one at a time, since CPU timing has no lock. */
    run_opts ro = *opts;
    const run_opts *o = &ro;
    run_times tm = {.t0 = kbv_now(), .cpu_self0 = kbv_cpu_seconds(RUSAGE_SELF), .cpu_children0 = kbv_cpu_seconds(RUSAGE_CHILDREN)};
    if (host_cpu(&tm.host_busy0, &tm.host_total0) < 0) tm.host_busy0 = tm.host_total0 = 0;
    if (ro.jobs <= 0 && ro.child_entry < 0 && on_gpu(o)) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        ro.jobs = cores >= 16 ? 8 : cores >= 4 ? (int)(cores / 2) : 1;
    }
    if (ro.jobs <= 0) ro.jobs = 1;
    /* --compile-jobs not given: on a GPU, the cores the slots leave (at most one per slot), so
     * that compiles run ahead on every core while earlier evaluations use the GPU; on the CPU
     * none, since there the slots' own compiles already use the cores. */
    if (ro.compile_jobs < 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN), slots = slot_count(o);
        ro.compile_jobs = ro.child_entry < 0 && on_gpu(o) && cores > slots ? (int)(cores - slots < slots ? cores - slots : slots) : 0;
    }
    run_item *items = NULL, child_item;
    int n = 0;
    if (o->child_entry >= 0) { /* the parent's entry, not the manifest read again (CHILD_ENTRY_ENV) */
        if (entry_decode(getenv(CHILD_ENTRY_ENV), &child_item, err) < 0) return RUN_BAD_SOURCE;
        unsetenv(CHILD_ENTRY_ENV); /* not for its workers */
    } else if (o->manifest ? manifest_load(o->manifest, &items, &n, err) < 0 : manifest_from_runs(o->kernelbench, o->runs, &items, &n, err) < 0)
        return RUN_BAD_SOURCE;
    const char *source = o->manifest ? o->manifest : o->runs;
    kbv_db db;
    if (db_open(&db, o->db ? o->db : "kbv.db", err) < 0) {
        free(items);
        return RUN_BAD_DB;
    }
    eval_opts eo = o->eval;
    char db_abs[PATH_MAX];
    if (kbv_abspath(o->db ? o->db : "kbv.db", db_abs, sizeof db_abs, err) == 0) eo.db_path = db_abs; /* hidden from candidates */
    if (o->child_entry >= 0) { /* one entry of an existing run, in a child process */
        int rc = 0;
        uint64_t seed;
        if (db_run_seed(&db, o->child_run, &seed, err) < 0) rc = RUN_BAD_DB;
        char key[300];
        if (rc == 0 && item_key(&child_item, protocol_name(&eo), key, sizeof key, err) < 0) rc = -1;
        if (rc == 0) {
            eo.have_seed = 1, eo.seed = seed, eo.verbose = 0;
            eo.ref_cache = getenv("KBV_REF_CACHE"); /* the parent's, for this run */
            const char *pc = getenv("KBV_PYCACHE"); /* the parent's bytecode tree (session_prepare_pycache) */
            snprintf(eo.pycache, sizeof eo.pycache, "%s", pc && pc[0] == '/' ? pc : "");
            const char *aw = getenv("KBV_ADMISSION_WAIT"); /* the parent's admission control */
            char *end = NULL;
            double waited = aw ? strtod(aw, &end) : -1;
            if (!aw || end == aw || *end || !(waited >= 0 && waited < 1e9)) waited = -1;
            kbv_result r;
            rc = evaluate_one(&db, o->child_run, &eo, source, &child_item, key, 1, waited, &r, err);
            result_free(&r);
        }
        db_close(&db), free(items);
        return rc;
    }
    char mabs[PATH_MAX];
    if (kbv_abspath(source, mabs, sizeof mabs, err) < 0) snprintf(mabs, sizeof mabs, "%s", source);
    json_t *sj = json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:b}", "manifest", mabs, "device", eo.device, "cases", eo.ncases, "protocol", eo.protocol,
                           "shard_i", o->shard_i, "shard_n", o->shard_n, "timing", eo.timing);
    char *settings = sj ? json_dumps(sj, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(sj);
    uint64_t seed = eo.seed, rnd = 0;
    char uuid[40];
    if (!eo.have_seed && kbv_random_u64(&seed) < 0) seed = (uint64_t)kbv_now();
    if (kbv_random_u64(&rnd) < 0) rnd = kbv_mix64((uint64_t)getpid() ^ (uint64_t)(kbv_now() * 1e6));
    snprintf(uuid, sizeof uuid, "%016llx%016llx", (unsigned long long)rnd, (unsigned long long)kbv_mix64(rnd ^ seed));
    long long run_id = 0;
    int resumed = settings ? db_run(&db, settings, o->resume, &seed, &run_id, uuid, err) : kbv_seterr(err, "out of memory");
    int had_settings = settings != NULL;
    free(settings);
    if (resumed < 0) {
        db_close(&db), free(items);
        return had_settings ? RUN_BAD_DB : -1;
    }
    int secret = eo.have_seed == 2; /* from a seed file: it stays out of logs */
    eo.have_seed = 1, eo.seed = seed, eo.verbose = 0;
    if (!o->quiet) {
        char said[48] = "seed from the seed file";
        if (!secret) snprintf(said, sizeof said, "seed %llu", (unsigned long long)seed);
        fprintf(stderr, "kbv run: %s run %lld of %s (%s), %d entries%s\n", resumed ? "resuming" : "starting", run_id, o->db ? o->db : "kbv.db", said,
                n, o->shard_n > 1 ? " before sharding" : "");
    }
    const char *proto = protocol_name(&eo);
    int total = 0, done = 0, stored = 0, skipped = 0, rc = 0, kbv_errors = 0, counts[KBV_STATUS_COUNT] = {0};
    char(*keys)[300] = calloc((size_t)n, sizeof *keys);
    int *mine = calloc((size_t)n, sizeof *mine);
    if (!keys || !mine) rc = kbv_seterr(err, "out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        if (item_key(&items[i], proto, keys[i], sizeof keys[i], err) < 0) {
            rc = -1;
            break;
        }
        mine[i] = run_in_shard(keys[i], o->shard_i, o->shard_n);
        total += mine[i];
    }
    /* What this shard still has to evaluate. */
    int *pending = rc == 0 ? calloc((size_t)n + 1, sizeof *pending) : NULL, np = 0, dups = 0;
    if (rc == 0 && !pending) rc = kbv_seterr(err, "out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        if (!mine[i]) continue;
        int dup = -1; /* the same evaluation as an earlier line: one key holds one result */
        for (int q = 0; q < np && dup < 0; q++)
            if (strcmp(keys[pending[q]], keys[i]) == 0) dup = pending[q];
        if (dup >= 0) {
            if (!o->quiet)
                fprintf(stderr, "kbv run: %s:%d: the same evaluation as line %d (same files, model and sample); evaluated once\n", source,
                        items[i].line, items[dup].line);
            done++, dups++;
            continue;
        }
        int has = db_has(&db, run_id, keys[i], err);
        if (has < 0) rc = RUN_BAD_DB;
        else if (has) done++, skipped++;
        else pending[np++] = i;
    }
    /* The reference side of each problem, kept by its first evaluation for the others
     * (refcache.c, docs/results.md): a "kbv-" folder in the scratch base, hidden from workers. */
    char ref_cache[PATH_MAX] = "";
    kbv_err cerr; /* without the folder every evaluation runs its own reference side */
    if (rc == 0 && np > 1 && (eo.protocol & EVAL_VERIFIED) && !o->no_reuse) {
        if (kbv_mkscratch(eo.scratch_base, ref_cache, sizeof ref_cache, &cerr) == 0) {
            eo.ref_cache = ref_cache;
            setenv("KBV_REF_CACHE", ref_cache, 1); /* for the children of run_slots */
        } else {
            ref_cache[0] = '\0';
        }
    }
    int sided = o->ngpus > 0 || o->jobs > 1 || ahead_jobs(o) > 0; /* evaluations side by side: run_slots */
    if (rc == 0 && sided && order_in_turns(items, pending, np) < 0) rc = kbv_seterr(err, "out of memory");
    ref_groups groups = {.dir = ""};
    if (rc == 0 && ref_groups_init(&groups, ref_cache, items, pending, np) < 0) rc = kbv_seterr(err, "out of memory");
    struct sigaction stop = {.sa_handler = on_stop}, old_int, old_term; /* no SA_RESTART: a wait ends on it */
    sigemptyset(&stop.sa_mask);
    g_stop = 0;
    sigaction(SIGINT, &stop, &old_int), sigaction(SIGTERM, &stop, &old_term);
    /* kbv's bytecode tree for the workers' Python (build.md), made before any worker starts;
     * the children of run_slots take it from the environment */
    if (rc == 0 && o->child_entry < 0) {
        session_prepare_pycache(&eo);
        if (eo.pycache[0]) setenv("KBV_PYCACHE", eo.pycache, 1);
        else unsetenv("KBV_PYCACHE");
    }
    /* --build fast: kbv's precompiled headers, built once before any candidate's build can use
     * them. On a GPU, or on the CPU with --no-timing, they build in the background, 10 nicer
     * than kbv, while the first evaluations start (a build that finds them not made yet takes
     * the stock path: build.md); a CPU run that times builds them first, since a build beside
     * it would slow its timed calls. */
    if (rc == 0 && eo.build_fast && o->child_entry < 0) {
        kbv_err perr = {{0}};
        if (on_gpu(o) || !eo.timing ? session_spawn_pch(&eo, AHEAD_NICE, &tm.pch, &perr) : session_prepare_pch(&eo, &perr)) {
            fprintf(stderr, "kbv run: --build fast is off: %s\n", perr.msg);
            eo.build_fast = 0, tm.pch = 0;
        }
    }
    if (rc == 0 && sided) {
        if (!o->quiet)
            fprintf(stderr, "kbv run: %d to evaluate in %d slot(s)%s\n", np, slot_count(o),
                    o->ngpus ? (o->jobs > 1 ? " (--jobs per GPU)" : " (one per GPU)") : "");
        rc = run_slots(o, &eo, &db, run_id, pending, np, keys, items, total, done, counts, &groups, &tm, err, &kbv_errors);
        stored = rc == 0 ? np - kbv_errors : rc == RUN_INTERRUPTED ? tm.nevals : 0;
    } else {
        double t0 = kbv_now();
        for (int q = 0; rc == 0 && q < np; q++) {
            if (g_stop) {
                rc = RUN_INTERRUPTED;
                break;
            }
            int i = pending[q];
            kbv_result r;
            int e = evaluate_one(&db, run_id, &eo, source, &items[i], keys[i], stored == 0, -1, &r, err);
            ref_groups_done(&groups, q);
            if (e == RUN_BAD_DB) {
                rc = e;
            } else if (e < 0) { /* kbv's own failure on this entry: not stored; the run goes on, --resume runs it again */
                kbv_errors++;
                if (!o->quiet)
                    fprintf(stderr, "kbv run: kbv could not evaluate %s (line %d): %s; --resume runs it again\n", items[i].candidate, items[i].line,
                            err->msg);
                err->msg[0] = '\0';
            } else {
                done++, stored++;
                counts[r.status]++;
                times_add(&tm, r.phase_s, r.wall_s);
                if (r.cpu_kbv_s >= 0) tm.cpu_evals += r.cpu_kbv_s + r.cpu_workers_s, tm.neval_cpu++;
                char what[600];
                snprintf(what, sizeof what, "%s %s/%s: %s", items[i].model, r.problem.name, r.candidate.name, kbv_status_name(r.status));
                progress(o, done, total, stored, t0, what);
            }
            result_free(&r);
        }
    }
    int stopped = rc == RUN_INTERRUPTED;
    if (tm.pch > 0) { /* still building: a stopped run stops it, a finished one lets it finish (later runs use them) */
        if (rc != 0) kill(-tm.pch, SIGTERM);
        else if (!o->quiet) fprintf(stderr, "kbv run: waiting for the precompiled headers to be built (--build fast)\n");
        int st = 0;
        struct rusage ru;
        memset(&ru, 0, sizeof ru);
        while (wait4(tm.pch, &st, 0, &ru) < 0 && errno == EINTR) {
        }
        tm.cpu_pch += kbv_rusage_seconds(&ru);
        if (rc == 0) pch_ended(o, &tm, st);
    }
    if (stopped) rc = 0; /* what was stored is reported as for a run that ended */
    if (!o->quiet && rc == 0) {
        if (stopped) fprintf(stderr, "kbv run: stopped by %s\n", g_stop == SIGTERM ? "SIGTERM" : "SIGINT");
        fprintf(stderr, "kbv run: %d evaluations in this shard, %d stored now, %d already stored;", total - dups, stored, skipped);
        for (int k = 0; k < KBV_STATUS_COUNT; k++)
            if (counts[k]) fprintf(stderr, " %s %d", kbv_status_name((kbv_status)k), counts[k]);
        fprintf(stderr, "\nkbv run: results in %s (kbv report --db %s)\n", o->db ? o->db : "kbv.db", o->db ? o->db : "kbv.db");
    }
    if (rc == 0) times_report(o, &tm, run_id, uuid);
    if (rc == 0 && stopped)
        rc = kbv_seterr(err, "stopped by %s before %d evaluation(s): kbv run --resume runs them", g_stop == SIGTERM ? "SIGTERM" : "SIGINT",
                        np - stored - kbv_errors),
        rc = RUN_INTERRUPTED;
    else if (rc == 0 && kbv_errors > 0)
        rc = kbv_seterr(err, "%d evaluation(s) failed on kbv's own side (their errors above) and were not stored: kbv run --resume runs them again",
                        kbv_errors);
    if (ref_cache[0]) {
        kbv_rmtree(ref_cache);
        unsetenv("KBV_REF_CACHE");
    }
    ref_groups_free(&groups);
    free(pending), free(keys), free(mine), free(items);
    db_close(&db);
    /* Only now: a signal that comes after the first (timeout(1)'s second, to the process group,
     * can come late on a busy machine) must not end kbv before the database is closed. */
    sigaction(SIGINT, &old_int, NULL), sigaction(SIGTERM, &old_term, NULL);
    return rc;
}
