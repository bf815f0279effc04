/* eval.c -- orchestrate one evaluation (see eval.h).
 *
 * Case plan: for each distribution in kDists, --cases seeds. A hidden case whose reference
 * output is not valid is retried in narrower domains (raw, abs, nominal_range, a fresh
 * nominal draw); if none is valid the case is skipped and never counts.
 *
 * Worker failures map to verdicts here, in one place (candidate_failure()):
 *   reply kind "load"            -> compile_error
 *   reply kind "exit" (SystemExit), process died, protocol garbage -> crash
 *   no reply within the step's timeout -> timeout
 *   any other failure reply      -> runtime_error
 * A failure of the reference worker is a problem_error.
 */
#include "eval.h"

#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "gen.h"
#include "gen_host.h"
#include "judge.h"
#include "perf.h"
#include "proc.h"
#include "sandbox.h"
#include "stats.h"
#include "tensor.h"

#define SEED_MASK 0x7fffffffffffffffULL /* torch seeds are taken as signed 64-bit here */

void eval_opts_default(eval_opts *o) {
    memset(o, 0, sizeof *o);
    o->device = "auto";
    o->timeout_s = 300;
    o->load_timeout_s = 600;
    o->start_timeout_s = 120;
    o->ncases = 2;
    o->protocol = EVAL_VERIFIED;
    o->capture_cap = 256 * 1024;
    o->timing = 1;
    o->time_budget_s = 0; /* auto: 10 s on a GPU, 2 s on the CPU */
    o->prime = -1;
    o->sandbox = 1;
    o->max_memory_bytes = sandbox_phys_bytes() / 4 * 3;
    o->standard_trials = 100;
}

typedef struct eval_ctx {
    const eval_opts *o;
    kbv_result *r;
    char scratch[PATH_MAX];
    char **env;
    int nenv;
    json_t *plan;        /* per input: how to make it (from the probe and the declarations) */
    int oracle_fallback; /* 1 once float64 failed: the strict fp32 run is the oracle */
    int nominal_nonfinite, nominal_degenerate;
    int oracle_retry;    /* float64 failed on a hidden case: decide after the fp32 run */
    char invalid_why[200]; /* why reference_case() returned 2 */
    /* the first hidden case the candidate passed: the timing's never-seen values are drawn
     * like its inputs, under other tags (value_cache_check) */
    int fresh_ci, fresh_dist, fresh_dom;
    uint64_t fresh_seed;
    /* per output: every judged case's candidate and oracle fingerprints (constant_output) */
#define EVAL_MAX_SEEN 8
#define EVAL_MAX_SEEN_CASES 64
    int seen[EVAL_MAX_SEEN];
    uint64_t seen_cand[EVAL_MAX_SEEN][EVAL_MAX_SEEN_CASES], seen_ref[EVAL_MAX_SEEN][EVAL_MAX_SEEN_CASES];
    kbv_gpulock lock; /* the GPU shared with other evaluations (off unless --jobs shares it) */
    /* The reference side of every case, shared by a run's evaluations of one problem
     * (o->ref_cache; ref_cache_open() and docs/results.md). */
    struct {
        char dir[PATH_MAX + 72];  /* the problem's folder: <ref_cache>/<sha256 of the problem> */
        char tmp[PATH_MAX + 96];  /* this evaluation's folder while it records, renamed to dir */
        json_t *loaded;           /* a finished folder's index: cases are taken from it */
        json_t *cases;            /* records made here, by case index */
        long long bytes;          /* output bytes kept so far */
        const char *keep;         /* tmp while the reference's outputs are read, else NULL */
    } cache;
} eval_ctx;

static void progress(const eval_ctx *c, const char *fmt, const char *arg) {
    if (!c->o->verbose) return;
    fprintf(stderr, "kbv: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
}

static void free_env(eval_ctx *c);

/* The worker's environment: a fixed, small set (docs/security.md says why each). home is
 * its HOME, TMPDIR and working folder; cache its compile cache. */
static int build_env(eval_ctx *c, const char *home, const char *cache, kbv_err *err) {
    static const char *pass[] = {"PATH", "LANG", "LC_ALL", "CUDA_VISIBLE_DEVICES", "CUDA_HOME", "LD_LIBRARY_PATH",
                                 "TORCH_CUDA_ARCH_LIST", "CC", "CXX", "MAX_JOBS", "ASAN_OPTIONS", "UBSAN_OPTIONS"};
    if (c->env) free_env(c);
    c->env = calloc(32, sizeof *c->env);
    if (!c->env) return kbv_seterr(err, "out of memory");
    for (size_t i = 0; i < sizeof pass / sizeof *pass; i++) {
        const char *v = getenv(pass[i]);
        if (v && asprintf(&c->env[c->nenv], "%s=%s", pass[i], v) >= 0) c->nenv++;
    }
    if (!getenv("PATH") && asprintf(&c->env[c->nenv], "PATH=/usr/local/bin:/usr/bin:/bin") >= 0) c->nenv++;
    const char *fixed[][2] = {{"TORCH_EXTENSIONS_DIR", cache}, {"HOME", home}, {"TMPDIR", home},
                              {"PYTHONHASHSEED", "0"}, {"PYTHONDONTWRITEBYTECODE", "1"}};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        if (asprintf(&c->env[c->nenv], "%s=%s", fixed[i][0], fixed[i][1]) < 0) return kbv_seterr(err, "out of memory");
        c->nenv++;
    }
    return 0;
}

static void free_env(eval_ctx *c) {
    for (int i = 0; i < c->nenv; i++) free(c->env[i]);
    free(c->env);
    c->env = NULL, c->nenv = 0;
}

/* mkdir -p */
static void make_dirs(char *path) {
    for (char *p = path + 1; *p; p++)
        if (*p == '/') *p = '\0', mkdir(path, 0755), *p = '/';
    mkdir(path, 0755);
}

/* The compile cache of a role: one folder per candidate (by its bytes), so that no candidate
 * can write what another loads. */
static void cache_dir(const eval_ctx *c, const char *role, char *out, size_t n) {
    char base[PATH_MAX];
    if (c->o->cache_dir) snprintf(base, sizeof base, "%s", c->o->cache_dir);
    else if (getenv("XDG_CACHE_HOME")) snprintf(base, sizeof base, "%s/kbv/torch_extensions", getenv("XDG_CACHE_HOME"));
    else if (getenv("HOME")) snprintf(base, sizeof base, "%s/.cache/kbv/torch_extensions", getenv("HOME"));
    else snprintf(base, sizeof base, "%s/torch_extensions", c->scratch);
    const char *sha = c->r->candidate.sha256;
    if (strcmp(role, "reference") == 0 || !sha[0]) snprintf(out, n, "%s/reference", base);
    else snprintf(out, n, "%s/%.16s", base, sha);
    make_dirs(out);
}

/* The sandbox of a worker in role (docs/security.md): writes only in its own folder and its
 * compile cache; for a candidate, no reads of the reference's outputs, the results
 * database or other evaluations' scratch folders, and no capabilities. */
static int worker_sandbox(eval_ctx *c, const char *role, const char *home, const char *cache, kbv_sandbox *sb,
                          kbv_err *err) {
    kbv_sandbox_spec sp = {.enable = c->o->sandbox, .gpu = strcmp(c->r->device, "cuda") == 0};
    char ref[PATH_MAX + 8], std[PATH_MAX + 8], dbx[3][PATH_MAX + 16], base[PATH_MAX];
    int cand = strcmp(role, "reference") != 0;
    sp.writable[sp.nwritable++] = cand ? home : c->scratch; /* the reference also writes the shared inputs (weights) */
    sp.writable[sp.nwritable++] = cache;
    if (cand) {
        snprintf(ref, sizeof ref, "%s/ref", c->scratch);
        sp.secret[sp.nsecret++] = ref;
        if (strcmp(role, "standard") != 0) {
            snprintf(std, sizeof std, "%s/std", c->scratch);
            sp.secret[sp.nsecret++] = std;
        }
        if (c->o->db_path) {
            static const char *sfx[] = {"", "-wal", "-shm", "-journal"};
            sp.secret[sp.nsecret++] = c->o->db_path;
            for (int i = 1; i < 4; i++) {
                snprintf(dbx[i - 1], sizeof dbx[i - 1], "%s%s", c->o->db_path, sfx[i]);
                sp.secret[sp.nsecret++] = dbx[i - 1];
            }
        }
        snprintf(base, sizeof base, "%s", c->scratch);
        char *slash = strrchr(base, '/');
        if (slash && slash != base) *slash = '\0';
        sp.scratch_base = base, sp.own_scratch = c->scratch;
        sp.drop_caps = 1;
    }
    sp.max_file_bytes = 64LL << 30;
    sp.max_data_bytes = c->o->max_memory_bytes;
    sp.max_cpu_s = 6 * 3600;
    sp.max_procs = 4096;
    return sandbox_prepare(sb, &sp, err);
}

static int start_worker(eval_ctx *c, kbv_proc *p, const char *role, const char *device, json_t **hello, kbv_err *err) {
    char *argv[] = {(char *)c->o->worker, "--device", (char *)device, "--role", (char *)role, NULL, NULL};
    if (c->o->sandbox && strcmp(role, "reference") == 0 && !sandbox_skips("dumpable")) argv[5] = "--private";
    const char *dir = strcmp(role, "reference") == 0 ? "ref" : strcmp(role, "candidate") == 0 ? "cand"
                      : strcmp(role, "standard") == 0   ? "std"
                                                        : NULL;
    char home[PATH_MAX + 8], cache[PATH_MAX];
    snprintf(home, sizeof home, "%s%s%s", c->scratch, dir ? "/" : "", dir ? dir : "");
    cache_dir(c, role, cache, sizeof cache);
    kbv_sandbox sb;
    if (build_env(c, home, cache, err) < 0 || worker_sandbox(c, role, home, cache, &sb, err) < 0) return -1;
    int rc = proc_spawn(p, argv, c->env, home, c->o->capture_cap, &sb, err);
    if (rc == 0) snprintf(p->role, sizeof p->role, "%s", role);
    if (rc == 0 && strcmp(role, "reference") != 0) {
        json_decref(c->r->sandbox);
        c->r->sandbox = sandbox_describe(&sb, p->namespaces);
    }
    sandbox_free(&sb);
    if (rc < 0) return -1;
    proc_result pr = proc_request(p, NULL, c->o->start_timeout_s, hello, err);
    if (pr == PROC_OK && json_is_true(json_object_get(*hello, "ok"))) return 0;
    char st[128] = "";
    if (pr == PROC_DIED) proc_describe_status(p->wstatus, st, sizeof st);
    if (pr == PROC_OK) {
        kbv_seterr(err, "%s worker failed to start: %s", role, json_string_value(json_object_get(*hello, "message")));
        json_decref(*hello), *hello = NULL;
    } else if (pr == PROC_DIED) {
        kbv_seterr(err, "%s worker %s before it was ready", role, st);
    } else {
        kbv_wraperr(err, "%s worker did not start", role);
    }
    proc_kill(p);
    char *e = proc_capture_text(&p->err);
    if (e && *e) {
        size_t n = strlen(err->msg);
        snprintf(err->msg + n, sizeof err->msg - n, "; its stderr: %.300s", e);
    }
    free(e);
    proc_free(p); /* the callers free only a worker that started */
    return -1;
}

/* What a worker's guard saw (src/worker/guard.h) becomes a finding. */
static void take_guard(eval_ctx *c, const json_t *rep) {
    const json_t *g = json_object_get(rep, "guard");
    for (size_t i = 0; i < json_array_size(g); i++) {
        const json_t *e = json_array_get(g, i);
        const char *id = json_string_value(json_object_get(e, "id")), *sev = json_string_value(json_object_get(e, "severity"));
        if (!id || !sev) continue;
        result_add_finding(c->r, id, sev, json_pack("{s:O, s:O}", "step", json_object_get(e, "step"), "detail", json_object_get(e, "detail")),
                           "%s", json_string_value(json_object_get(e, "detail")) ?: "");
    }
}

/* Add seconds s to field key of the step profile's entry "role.op" (r->steps). */
static void profile_add(eval_ctx *c, const kbv_proc *p, const char *op, const char *key, double s) {
    char name[64];
    snprintf(name, sizeof name, "%s.%s", p->role[0] ? p->role : "worker", op ? op : "?");
    if (!c->r->steps) c->r->steps = json_object();
    json_t *e = json_object_get(c->r->steps, name);
    if (!e) json_object_set_new(c->r->steps, name, e = json_pack("{s:i, s:f}", "n", 0, "s", 0.0));
    if (!e) return;
    if (strcmp(key, "s") == 0) json_object_set_new(e, "n", json_integer(json_integer_value(json_object_get(e, "n")) + 1));
    json_object_set_new(e, key, json_real(json_number_value(json_object_get(e, key)) + s));
}

/* Send cmd, collect the reply. Returns the proc_result; *reply set only for PROC_OK. The
 * step's wall time, and how the worker says it spent it, go into the step profile. */
static proc_result step(eval_ctx *c, kbv_proc *p, json_t *cmd, double timeout, json_t **reply, kbv_err *err) {
    char op[32];
    snprintf(op, sizeof op, "%s", json_string_value(json_object_get(cmd, "op")) ?: "?");
    double t0 = kbv_now();
    proc_result pr = proc_request(p, cmd, timeout, reply, err);
    json_decref(cmd);
    profile_add(c, p, op, "s", kbv_now() - t0);
    if (pr == PROC_OK) {
        take_guard(c, *reply);
        /* the worker's own split: any "..._s" number (a forward's "wall_s" is its compute) */
        const char *key;
        json_t *v;
        json_object_foreach(*reply, key, v) {
            size_t kl = strlen(key);
            if (json_is_number(v) && kl > 2 && strcmp(key + kl - 2, "_s") == 0)
                profile_add(c, p, op, strcmp(key, "wall_s") == 0 ? "compute_s" : key, json_number_value(v));
        }
    }
    return pr;
}

static const char *reply_msg(const json_t *rep) {
    const char *m = json_string_value(json_object_get(rep, "message"));
    return m ? m : "(no message)";
}

static void add_traceback(kbv_result *r, const json_t *rep) {
    const char *tb = json_string_value(json_object_get(rep, "traceback"));
    if (tb && *tb) result_add_error(r, "%s", tb);
}

/* The reference failed: the problem cannot be evaluated. */
static void problem_failure(eval_ctx *c, kbv_proc *p, const char *what, proc_result pr, json_t *rep, kbv_err *err) {
    kbv_result *r = c->r;
    r->status = KBV_PROBLEM_ERROR;
    char st[128];
    switch (pr) {
    case PROC_OK:
        result_add_error(r, "reference %s failed: %s", what, reply_msg(rep));
        add_traceback(r, rep);
        break;
    case PROC_TIMEOUT: result_add_error(r, "reference %s timed out after %.0f s", what, c->o->timeout_s); break;
    case PROC_DIED:
        proc_describe_status(p->wstatus, st, sizeof st);
        result_add_error(r, "reference worker %s during %s", p->killed_why[0] ? p->killed_why : p->exited ? st : "stopped answering", what);
        break;
    default: result_add_error(r, "reference %s: %s", what, err->msg); break;
    }
}

/* The candidate failed: map the failure to a verdict (the table at the top of this file). */
static void candidate_failure(eval_ctx *c, kbv_proc *p, const char *what, proc_result pr, json_t *rep, kbv_err *err) {
    kbv_result *r = c->r;
    char st[128];
    switch (pr) {
    case PROC_OK: {
        const char *kind = json_string_value(json_object_get(rep, "kind"));
        kind = kind ? kind : "";
        if (strcmp(kind, "load") == 0) r->status = KBV_COMPILE_ERROR;
        else if (strcmp(kind, "exit") == 0) {
            r->status = KBV_CRASH;
            result_add_flag(r, "worker_exit", "info", "the candidate raised SystemExit during %s", what);
        } else r->status = KBV_RUNTIME_ERROR;
        result_add_error(r, "candidate %s failed (%s): %s", what, kind, reply_msg(rep));
        add_traceback(r, rep);
        break;
    }
    case PROC_TIMEOUT:
        r->status = KBV_TIMEOUT;
        result_add_error(r, "candidate %s did not finish within %.0f s; worker killed", what,
                         strcmp(what, "load") == 0 ? c->o->load_timeout_s : c->o->timeout_s);
        break;
    case PROC_DIED:
        r->status = KBV_CRASH;
        if (p->killed_why[0]) {
            result_add_error(r, "candidate worker during %s: %s", what, p->killed_why);
        } else if (p->exited) {
            proc_describe_status(p->wstatus, st, sizeof st);
            result_add_error(r, "candidate worker %s during %s", st, what);
        } else {
            result_add_error(r, "candidate worker closed its control pipe during %s", what);
        }
        break;
    case PROC_PROTOCOL:
        r->status = KBV_CRASH;
        result_add_flag(r, "protocol_violation", "suspect", "the candidate's process wrote on kbv's control pipe: %s",
                        err->msg);
        result_add_error(r, "candidate worker broke the control protocol during %s: %s", what, err->msg);
        break;
    default:
        r->status = KBV_CRASH;
        result_add_error(r, "candidate %s: %s", what, err->msg);
        break;
    }
}

static json_t *cmd_path(const char *op, const char *path) { return json_pack("{s:s, s:s}", "op", op, "path", path); }


/* The last n lines of text (a pointer into it). */
static const char *tail_lines(const char *text, int n) {
    const char *p = text + strlen(text);
    while (p > text && p[-1] == '\n') p--;
    for (int lines = 0; p > text; p--)
        if (p[-1] == '\n' && ++lines == n) break;
    return p;
}

static const char *kDists[] = {"nominal", "normal", "uniform_shifted", "mixed_magnitude", "heavy_tailed"};
static const int kDistCode[] = {-1, KBV_DIST_NORMAL, KBV_DIST_UNIFORM_SHIFTED, KBV_DIST_MIXED_MAGNITUDE, KBV_DIST_HEAVY_TAILED};
static const char *kDomains[] = {"raw", "abs", "nominal_range", "nominal"};

static uint64_t case_seed(uint64_t run_seed, int i) { return kbv_derive_seed(run_seed, 0x100 + (uint64_t)i) & SEED_MASK; }

/* Read the outputs a reply describes into tensors. consume: delete each file once read.
 * keep (non-NULL): first hard-link each file into that folder and point the descriptor at
 * the link (the run's reference cache: ref_cache_record()). */
static int read_outputs_as(json_t *values, kbv_tensor **outs, int *n, const char *keep, int consume, long long *kept_bytes,
                           kbv_err *err);
static int read_outputs(const json_t *values, kbv_tensor **outs, int *n, kbv_err *err) {
    return read_outputs_as((json_t *)values, outs, n, NULL, 1, NULL, err);
}

static int read_outputs_as(json_t *values, kbv_tensor **outs, int *n, const char *keep, int consume, long long *kept_bytes,
                           kbv_err *err) {
    size_t k = json_array_size(values);
    *outs = calloc(k ? k : 1, sizeof **outs);
    *n = (int)k;
    if (!*outs) return kbv_seterr(err, "out of memory");
    for (size_t j = 0; j < k; j++) {
        const json_t *d = json_array_get(values, j);
        const char *kind = json_string_value(json_object_get(d, "kind"));
        if (kind && strcmp(kind, "tensor") == 0) {
            const char *path = json_string_value(json_object_get(d, "path"));
            if (!path || kbv_tensor_load(&(*outs)[j], path, err) < 0)
                return path ? -1 : kbv_seterr(err, "output %zu has no path", j);
            if (keep) {
                char link_to[PATH_MAX + 64];
                const char *base = strrchr(path, '/');
                snprintf(link_to, sizeof link_to, "%s/%s", keep, base ? base + 1 : path);
                unlink(link_to); /* an earlier domain's run of the same case */
                if (link(path, link_to) < 0)
                    return kbv_seterr(err, "keeping %s for reuse: %s", path, strerror(errno));
                if (kept_bytes) *kept_bytes += (long long)(*outs)[j].nbytes;
                if (consume) unlink(path);
                json_object_set_new((json_t *)d, "path", json_string(link_to));
                continue;
            }
            if (consume) unlink(path);
        } else {
            /* A number: keep it as a 0-d float64 tensor so one judge serves both. */
            int64_t none[1] = {0};
            if (kbv_tensor_alloc(&(*outs)[j], KBV_DT_F64, 0, none, err) < 0) return -1;
            ((double *)(*outs)[j].data)[0] = json_number_value(json_object_get(d, "value"));
        }
    }
    return 0;
}

static void free_outputs(kbv_tensor *outs, int n) {
    for (int j = 0; outs && j < n; j++) kbv_tensor_free(&outs[j]);
    free(outs);
}

/* Outputs of one run of one case. */
typedef struct run_out {
    kbv_tensor *t;
    int n;
    json_t *reply; /* the worker's reply (aliases, inputs_after, values) */
} run_out;

static void run_free(run_out *r) {
    free_outputs(r->t, r->n);
    json_decref(r->reply);
    memset(r, 0, sizeof *r);
}

/* dst = a deep copy of src's tensors (not its reply). */
static int copy_outputs(run_out *dst, const run_out *src) {
    dst->n = src->n;
    dst->t = calloc((size_t)src->n + 1, sizeof *dst->t);
    if (!dst->t) return -1;
    for (int j = 0; j < src->n; j++) {
        dst->t[j] = src->t[j];
        dst->t[j].mapped = 0;
        dst->t[j].data = malloc(src->t[j].nbytes ? src->t[j].nbytes : 1);
        if (!dst->t[j].data) return -1;
        memcpy(dst->t[j].data, src->t[j].data, src->t[j].nbytes);
    }
    return 0;
}

/* How many outputs a run returned: read, or (kbv check) left in the worker. */
static int out_count(const run_out *o) {
    json_t *count = json_object_get(o->reply, "count");
    return json_is_integer(count) ? (int)json_integer_value(count) : o->n;
}

/* Validity's facts about output k: from the output read, or from the worker's "facts" where
 * the output stayed in the worker (kbv check). 0, or -1 when the reply has none for k. */
static int out_facts(const run_out *o, int k, judge_facts *f) {
    if (k < o->n) return judge_facts_of(&o->t[k], f), 0;
    const json_t *e = json_array_get(json_object_get(o->reply, "facts"), (size_t)k);
    const char *v = json_string_value(json_object_get(e, "value"));
    if (!v) return -1;
    f->nonfinite = json_is_true(json_object_get(e, "nonfinite"));
    f->constant = json_is_true(json_object_get(e, "constant"));
    f->value = strtod(v, NULL);
    return 0;
}

/* Send a command that produces outputs; on success fill out. Returns the proc_result, and
 * on a failure reply leaves it in *fail_rep (caller frees). */
static proc_result run_cmd(eval_ctx *c, kbv_proc *p, json_t *cmd, double timeout, run_out *out, json_t **fail_rep, kbv_err *err) {
    json_t *rep = NULL;
    char op[32];
    snprintf(op, sizeof op, "%s", json_string_value(json_object_get(cmd, "op")) ?: "?");
    *fail_rep = NULL;
    proc_result pr = step(c, p, cmd, timeout, &rep, err);
    if (pr != PROC_OK) return pr;
    if (!json_is_true(json_object_get(rep, "ok"))) {
        *fail_rep = rep;
        return PROC_OK;
    }
    out->reply = rep;
    double t0 = kbv_now();
    if (json_object_get(rep, "values") &&
        read_outputs_as(json_object_get(rep, "values"), &out->t, &out->n, c->cache.keep, 1, &c->cache.bytes, err) < 0)
        return PROC_ERROR;
    profile_add(c, p, op, "load_s", kbv_now() - t0);
    return PROC_OK;
}

/* ---- the input plan ------------------------------------------------------------------ */

/* From the probe's findings and the problem's declarations (KBV_INPUTS), how each input is
 * made in a hidden case: "nominal" (taken from get_inputs()) or "gen" with its parameters. */
static json_t *make_plan(const json_t *probe, const json_t *decl) {
    json_t *plan = json_array();
    for (size_t j = 0; j < json_array_size(probe); j++) {
        const json_t *p = json_array_get(probe, j);
        char idx[16];
        snprintf(idx, sizeof idx, "%zu", j);
        const json_t *d = json_is_object(decl) ? json_object_get(decl, idx) : NULL;
        const char *kind = json_string_value(json_object_get(p, "kind"));
        json_t *e = json_pack("{s:i, s:s}", "index", (int)j, "probe_kind", kind ? kind : "?");
        const char *why = NULL;
        if (!kind || strcmp(kind, "tensor") != 0) why = "not a tensor";
        else if (!json_is_true(json_object_get(p, "consistent"))) why = "its shape or dtype changes with the seed";
        else if (json_is_true(json_object_get(d, "fixed"))) why = "declared fixed";
        else if (json_is_true(json_object_get(p, "fixed"))) why = "the same under every seed";
        else if (json_is_true(json_object_get(p, "nonfinite"))) why = "get_inputs() puts NaN or Inf in it";
        if (why) {
            json_object_set_new(e, "make", json_string("nominal"));
            json_object_set_new(e, "why", json_string(why));
            json_array_append_new(plan, e);
            continue;
        }
        const char *dts = json_string_value(json_object_get(p, "dtype"));
        kbv_dtype dt = kbv_dtype_from_name(dts);
        json_object_set_new(e, "make", json_string("gen"));
        json_object_set_new(e, "dtype", json_string(dts));
        json_object_set(e, "shape", json_object_get(p, "shape"));
        if (dt == KBV_DT_BOOL) {
            json_t *tf = json_object_get(p, "true_fraction");
            json_object_set_new(e, "p", json_real(tf ? json_number_value(tf) : 0.5));
        } else if (!kbv_dtype_is_float(dt)) {
            json_t *r = json_object_get(d, "int_range");
            double lo = json_is_array(r) ? json_number_value(json_array_get(r, 0)) : json_number_value(json_object_get(p, "min"));
            double hi = json_is_array(r) ? json_number_value(json_array_get(r, 1)) : json_number_value(json_object_get(p, "max"));
            json_object_set_new(e, "ilo", json_integer((json_int_t)lo));
            json_object_set_new(e, "ihi", json_integer((json_int_t)hi));
        } else {
            json_t *r = json_object_get(d, "range");
            const char *dom = json_string_value(json_object_get(d, "domain"));
            double lo = json_is_array(r) ? json_number_value(json_array_get(r, 0)) : json_number_value(json_object_get(p, "min"));
            double hi = json_is_array(r) ? json_number_value(json_array_get(r, 1)) : json_number_value(json_object_get(p, "max"));
            json_object_set_new(e, "lo", json_real(lo));
            json_object_set_new(e, "hi", json_real(hi));
            /* The first domain to try: declarations narrow it up front. */
            int first = json_is_array(r) ? KBV_DOM_RANGE : dom && strcmp(dom, "positive") == 0 ? KBV_DOM_ABS : KBV_DOM_RAW;
            json_object_set_new(e, "first_domain", json_integer(first));
            if (json_object_get(p, "zero_mask")) json_object_set(e, "zero_mask", json_object_get(p, "zero_mask"));
            if (json_is_true(json_object_get(p, "symmetric")) || json_is_true(json_object_get(d, "symmetric")))
                json_object_set_new(e, "symmetric", json_true());
        }
        json_array_append_new(plan, e);
    }
    return plan;
}

/* The case's input specs for domain dom (0..2; 3 means a fresh nominal draw). */
static json_t *case_specs(const eval_ctx *c, int ci, int dist, int dom) {
    json_t *specs = json_array();
    uint64_t k = kbv_derive_seed(c->r->seed, 0xC0FFEE00ULL + (uint64_t)ci);
    for (size_t j = 0; j < json_array_size(c->plan); j++) {
        const json_t *e = json_array_get(c->plan, j);
        const char *make = json_string_value(json_object_get(e, "make"));
        if (dist < 0 || dom >= 3 || !make || strcmp(make, "gen") != 0) {
            json_array_append_new(specs, json_pack("{s:s}", "kind", "nominal"));
            continue;
        }
        int first = (int)json_integer_value(json_object_get(e, "first_domain"));
        json_t *sp = json_pack("{s:s, s:O, s:O, s:[I,I], s:i, s:i, s:i, s:i}", "kind", "gen", "dtype",
                               json_object_get(e, "dtype"), "shape", json_object_get(e, "shape"), "key",
                               (json_int_t)(uint32_t)k, (json_int_t)(uint32_t)(k >> 32), "tag", ci, "input", (int)j,
                               "dist", dist, "domain", dom > first ? dom : first);
        const char *keys[] = {"lo", "hi", "ilo", "ihi", "p", "zero_mask", "symmetric"};
        for (size_t q = 0; q < sizeof keys / sizeof *keys; q++)
            if (json_object_get(e, keys[q])) json_object_set(sp, keys[q], json_object_get(e, keys[q]));
        json_array_append_new(specs, sp);
    }
    return specs;
}

/* The narrowest domain a case's generated inputs were drawn in: the fallback step dom, or an
 * input's declared range (first_domain) where that is narrower. */
static int effective_domain(const eval_ctx *c, int dom) {
    int d = dom;
    for (size_t j = 0; dom < 3 && j < json_array_size(c->plan); j++) {
        const json_t *e = json_array_get(c->plan, j);
        if (strcmp(json_string_value(json_object_get(e, "make")) ?: "", "gen") != 0) continue;
        int first = (int)json_integer_value(json_object_get(e, "first_domain"));
        if (first > d && first < 3) d = first;
    }
    return d;
}

static int plan_has_gen(const eval_ctx *c) {
    for (size_t j = 0; j < json_array_size(c->plan); j++)
        if (strcmp(json_string_value(json_object_get(json_array_get(c->plan, j), "make")) ?: "", "gen") == 0) return 1;
    return 0;
}

/* ---- one case ------------------------------------------------------------------------------ */

typedef struct ref_runs {
    run_out oracle, tf32, strict;
    json_t *prints;      /* the reference's input fingerprints */
    int mutates_inputs;  /* the reference itself changes its inputs */
} ref_runs;

static void ref_runs_free(ref_runs *rr) {
    run_free(&rr->oracle), run_free(&rr->tf32), run_free(&rr->strict);
    json_decref(rr->prints);
    memset(rr, 0, sizeof *rr);
}

static json_t *forward_cmd(const eval_ctx *c, const char *dir, int ci, const char *tag, const char *precision, int tf32,
                           int poison, long long poison_bytes) {
    char prefix[PATH_MAX + 64];
    snprintf(prefix, sizeof prefix, "%s/%s/case%d_%s_", c->scratch, dir, ci, tag);
    json_t *cmd = json_pack("{s:s, s:s, s:s}", "op", "forward", "prefix", prefix, "precision", precision);
    if (tf32 >= 0 && strcmp(c->r->device, "cuda") == 0) json_object_set_new(cmd, "tf32", json_boolean(tf32));
    if (poison >= 0) {
        json_object_set_new(cmd, "poison", json_integer(poison));
        json_object_set_new(cmd, "poison_bytes", json_integer(poison_bytes));
    }
    return cmd;
}

/* Make case ci's inputs (domain dom) in worker p. On success *prints (if non-NULL) gets their
 * fingerprints; a failure reply is left in *fail (caller frees). */
static proc_result gen_inputs(eval_ctx *c, kbv_proc *p, int ci, int dist, int dom, uint64_t seed, json_t **prints,
                              json_t **fail, kbv_err *err) {
    json_t *rep = NULL;
    *fail = NULL;
    proc_result pr = step(c, p, json_pack("{s:s, s:I, s:o}", "op", "gen_inputs", "seed", (json_int_t)seed, "inputs",
                                       case_specs(c, ci, dist, dom)), c->o->timeout_s, &rep, err);
    if (pr == PROC_OK && !json_is_true(json_object_get(rep, "ok"))) *fail = rep, rep = NULL;
    else if (pr == PROC_OK && prints) *prints = json_incref(json_object_get(rep, "fingerprints"));
    json_decref(rep);
    return pr;
}

/* Reference: inputs, oracle, baseline and strict runs for case ci in domain dom. Returns 0,
 * 1 when the problem failed (status set), -1 when kbv failed. */
static int reference_case(eval_ctx *c, kbv_proc *ref, int ci, int dist, int dom, uint64_t seed, ref_runs *rr, kbv_err *err) {
    json_t *fail = NULL;
    memset(rr, 0, sizeof *rr);
    proc_result pr = gen_inputs(c, ref, ci, dist, dom, seed, &rr->prints, &fail, err);
    if (pr != PROC_OK || fail) {
        problem_failure(c, ref, "input generation", pr, fail, err);
        json_decref(fail);
        return 1;
    }
    int cuda = strcmp(c->r->device, "cuda") == 0;
    int dirty = 0; /* the inputs may have been changed by the last run: make them again */
    /* The oracle: float64, or (once float64 has failed) the strict fp32 run. */
    if (!c->oracle_fallback) {
        json_t *cmd = forward_cmd(c, "ref", ci, "oracle", "float64", 0, -1, 0);
        if (!c->o->candidate) json_object_set_new(cmd, "save", json_false()); /* kbv check: facts only */
        pr = run_cmd(c, ref, cmd, c->o->timeout_s, &rr->oracle, &fail, err);
        dirty = fail || !json_equal(json_object_get(rr->oracle.reply, "inputs_after"), rr->prints);
        if (pr == PROC_OK && fail && dist >= 0) {
            /* On hidden inputs, first see whether the model itself accepts them. */
            json_decref(fail), fail = NULL;
            run_free(&rr->oracle);
            c->oracle_retry = 1;
        } else if (pr == PROC_OK && fail) {
            const char *kind = json_string_value(json_object_get(fail, "kind"));
            if (kind && strcmp(kind, "oracle") == 0) {
                c->oracle_fallback = 1;
                snprintf(c->r->oracle, sizeof c->r->oracle, "float32 with TF32 off (float64 failed: %.100s)", reply_msg(fail));
            } else {
                problem_failure(c, ref, "float64 oracle", pr, fail, err);
                json_decref(fail);
                return 1;
            }
            json_decref(fail), fail = NULL;
        } else if (pr != PROC_OK) {
            problem_failure(c, ref, "float64 oracle", pr, NULL, err);
            return pr == PROC_ERROR ? -1 : 1;
        }
    }
    /* Each run starts from the inputs as made: made again after a run that changed them. */
    const char *tags[2] = {"strict", "tf32"};
    run_out *outs[2] = {&rr->strict, &rr->tf32};
    for (int k = 0; k < (cuda ? 2 : 1); k++) {
        if (dirty) {
            pr = gen_inputs(c, ref, ci, dist, dom, seed, NULL, &fail, err);
            if (pr != PROC_OK || fail) {
                problem_failure(c, ref, "input generation", pr, fail, err);
                json_decref(fail);
                return 1;
            }
        }
        json_t *cmd = forward_cmd(c, "ref", ci, tags[k], "native", k, -1, 0);
        /* kbv check reads no outputs: they stay in the worker, which replies with the facts
         * validity needs (the strict run's stand in for a failed float64 oracle's). */
        if (!c->o->candidate) json_object_set_new(cmd, "save", json_false());
        pr = run_cmd(c, ref, cmd, c->o->timeout_s, outs[k], &fail, err);
        if (pr == PROC_OK && fail && dist >= 0 && strcmp(json_string_value(json_object_get(fail, "kind")) ?: "", "python") == 0) {
            /* A hidden input the reference rejects (e.g. a matrix that is not positive
             * definite) makes the case invalid in this domain, not the problem broken. */
            snprintf(c->invalid_why, sizeof c->invalid_why, "the reference raised: %.150s", reply_msg(fail));
            json_decref(fail);
            return 2;
        }
        if (pr != PROC_OK || fail) {
            problem_failure(c, ref, "forward", pr, fail, err);
            json_decref(fail);
            return pr == PROC_ERROR ? -1 : 1;
        }
        dirty = !json_equal(json_object_get(outs[k]->reply, "inputs_after"), rr->prints);
        if (dirty) rr->mutates_inputs = 1;
    }
    if (c->oracle_retry) { /* the model ran in fp32 on these inputs: float64 is what failed */
        c->oracle_retry = 0;
        c->oracle_fallback = 1;
        snprintf(c->r->oracle, sizeof c->r->oracle, "float32 with TF32 off (float64 failed on a hidden case)");
    }
    /* No TF32 on the CPU: the plain fp32 run is the baseline. After a float64 failure the
     * strict run doubles as the oracle. */
    if ((!cuda && copy_outputs(&rr->tf32, &rr->strict) < 0) ||
        (c->oracle_fallback && (run_free(&rr->oracle), copy_outputs(&rr->oracle, &rr->strict)) < 0))
        return kbv_seterr(err, "out of memory copying outputs"), -1;
    if (c->oracle_fallback) rr->oracle.reply = json_incref(rr->strict.reply); /* its facts (kbv check) */
    if (out_count(&rr->oracle) != out_count(&rr->strict)) {
        c->r->status = KBV_PROBLEM_ERROR;
        result_add_error(c->r, "the float64 oracle returned %d outputs, the model %d", out_count(&rr->oracle),
                         out_count(&rr->strict));
        return 1;
    }
    return 0;
}

/* Whether case rr's oracle outputs make a valid case (docs/correctness.md): 1 or 0 (why
 * filled), -1 when the worker's reply lacks their facts. The nominal case is always valid
 * and records whether its outputs are non-finite or constant, which then allows it. */
static int oracle_valid(eval_ctx *c, const ref_runs *rr, int nominal, char *why, size_t whylen) {
    judge_facts f;
    for (int k = 0; k < out_count(&rr->oracle); k++) {
        if (out_facts(&rr->oracle, k, &f) < 0) return -1;
        if (nominal) {
            c->nominal_nonfinite |= f.nonfinite;
            c->nominal_degenerate |= f.constant;
        } else if (!judge_valid_facts(&f, c->nominal_nonfinite, c->nominal_degenerate, why, whylen)) {
            return 0;
        }
    }
    return 1;
}

/* ---- the reference side, once per problem in a run (docs/results.md) ------------------
 * Within one `kbv run` every evaluation of a problem sees the same cases (their seeds derive
 * from the run's seed), so the first evaluation that gets through all of them keeps, per
 * case, the domain and seed the reference settled on (or why the case was skipped), its
 * input fingerprints, whether it changes its inputs, the oracle in use, and the three runs'
 * replies and output files (hard links to what the reference worker wrote). Later
 * evaluations of the problem take the cases from there instead of running the reference on
 * them. The folder lies in the scratch base under a "kbv-" name, which Landlock hides from
 * every worker (security.md); without Landlock the cache is not used at all. */
#define REF_CACHE_MAX_BYTES (4LL << 30)      /* a problem whose outputs take more is not kept */
#define REF_CACHE_RUN_MAX_BYTES (16LL << 30) /* nor anything more once the run's folder holds this */

static void ref_cache_open(eval_ctx *c) {
    if (!c->o->ref_cache || !c->o->candidate) return;
    const char *fs = json_string_value(json_object_get(c->r->sandbox, "filesystem"));
    if (!fs || strncmp(fs, "landlock", 8) != 0) {
        result_add_flag(c->r, "reference_not_reused", "info",
                        "the reference side was run for this candidate: without Landlock (sandbox: %s) kept reference outputs "
                        "would be readable by candidates", fs ? fs : "off");
        return;
    }
    char sha[65], index[PATH_MAX + 96];
    kbv_err e;
    if (kbv_sha256_file(c->o->problem, sha, &e) < 0) return;
    snprintf(c->cache.dir, sizeof c->cache.dir, "%s/%s", c->o->ref_cache, sha);
    snprintf(index, sizeof index, "%s/index.json", c->cache.dir);
    c->cache.loaded = json_load_file(index, 0, NULL);
    if (c->cache.loaded) {
        c->r->reference_reused = 1;
        return;
    }
    /* Room to keep this problem: the run's folder under its cap, and the file system (often
     * a tmpfs, i.e. memory) with twice a problem's cap free. */
    struct statvfs vfs;
    if (kbv_tree_bytes(c->o->ref_cache) > REF_CACHE_RUN_MAX_BYTES ||
        (statvfs(c->o->ref_cache, &vfs) == 0 && (long long)vfs.f_bavail * (long long)vfs.f_frsize < 2 * REF_CACHE_MAX_BYTES))
        return;
    snprintf(c->cache.tmp, sizeof c->cache.tmp, "%s.%ld", c->cache.dir, (long)getpid());
    if (mkdir(c->cache.tmp, 0700) < 0) {
        c->cache.tmp[0] = '\0';
        return;
    }
    c->cache.cases = json_object();
}

/* A reply as kept: its output files named where they will be once the folder is published
 * (read_outputs_as() linked them into cache.tmp, renamed to cache.dir on publishing). */
static json_t *published_reply(const eval_ctx *c, const json_t *reply) {
    json_t *r = json_deep_copy(reply), *values = json_object_get(r, "values"), *d;
    size_t j;
    json_array_foreach(values, j, d) {
        const char *path = json_string_value(json_object_get(d, "path")), *base = path ? strrchr(path, '/') : NULL;
        char p[PATH_MAX + 160];
        if (!base) continue;
        snprintf(p, sizeof p, "%s%s", c->cache.dir, base);
        json_object_set_new(d, "path", json_string(p));
    }
    return r;
}

/* Record case ci as it was decided (valid with rr, or skipped), if this evaluation keeps. */
static void ref_cache_record(eval_ctx *c, int ci, const kbv_case *kc, int dom, const ref_runs *rr) {
    if (!c->cache.cases) return;
    if (c->cache.bytes > REF_CACHE_MAX_BYTES) { /* too big to keep: run the reference each time */
        json_decref(c->cache.cases), c->cache.cases = NULL;
        return;
    }
    char key[16], seed[32];
    snprintf(key, sizeof key, "%d", ci);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)kc->seed);
    json_t *rec = json_pack("{s:b, s:i, s:s, s:s, s:s, s:s}", "skipped", kc->skipped, "dom", dom, "seed", seed, "domain",
                            kc->domain, "skip_reason", kc->skip_reason, "fallback_reason", kc->fallback_reason);
    if (!kc->skipped && rr) {
        /* After a float64 failure the oracle is a copy of the strict run; on the CPU the
         * baseline is: neither has files of its own. */
        json_object_set_new(rec, "prints", json_incref(rr->prints));
        json_object_set_new(rec, "mutates_inputs", json_boolean(rr->mutates_inputs));
        json_object_set_new(rec, "oracle_fallback", json_boolean(c->oracle_fallback));
        json_object_set_new(rec, "oracle", json_string(c->r->oracle));
        json_object_set_new(rec, "strict", published_reply(c, rr->strict.reply));
        json_object_set_new(rec, "tf32", strcmp(c->r->device, "cuda") == 0 ? published_reply(c, rr->tf32.reply) : json_null());
        json_object_set_new(rec, "float64", c->oracle_fallback ? json_null() : published_reply(c, rr->oracle.reply));
    }
    json_object_set_new(c->cache.cases, key, rec);
}

/* Case ci from the loaded index into kc, rr and *dom: 1, 0 when the index lacks it (the case
 * is then run as usual), -1 on an error (err set). */
static int ref_cache_take(eval_ctx *c, int ci, kbv_case *kc, ref_runs *rr, int *dom, kbv_err *err) {
    char key[16];
    snprintf(key, sizeof key, "%d", ci);
    const json_t *rec = json_object_get(json_object_get(c->cache.loaded, "cases"), key);
    memset(rr, 0, sizeof *rr);
    if (!rec) return 0;
    *dom = (int)json_integer_value(json_object_get(rec, "dom"));
    kc->seed = strtoull(json_string_value(json_object_get(rec, "seed")) ?: "0", NULL, 10);
    snprintf(kc->domain, sizeof kc->domain, "%s", json_string_value(json_object_get(rec, "domain")) ?: "raw");
    snprintf(kc->fallback_reason, sizeof kc->fallback_reason, "%s", json_string_value(json_object_get(rec, "fallback_reason")) ?: "");
    if (json_is_true(json_object_get(rec, "skipped"))) {
        kc->skipped = 1;
        snprintf(kc->skip_reason, sizeof kc->skip_reason, "%s", json_string_value(json_object_get(rec, "skip_reason")) ?: "");
        return 1;
    }
    rr->prints = json_incref(json_object_get(rec, "prints"));
    rr->mutates_inputs = json_is_true(json_object_get(rec, "mutates_inputs"));
    c->oracle_fallback = json_is_true(json_object_get(rec, "oracle_fallback"));
    snprintf(c->r->oracle, sizeof c->r->oracle, "%s", json_string_value(json_object_get(rec, "oracle")) ?: "float64");
    static const char *const names[3] = {"strict", "tf32", "float64"};
    run_out *outs[3] = {&rr->strict, &rr->tf32, &rr->oracle};
    for (int k = 0; k < 3; k++) {
        const json_t *rep = json_object_get(rec, names[k]);
        if (json_is_null(rep) || !rep) { /* a copy of the strict run */
            if (copy_outputs(outs[k], &rr->strict) < 0) return kbv_seterr(err, "out of memory copying outputs"), -1;
            outs[k]->reply = json_incref(rr->strict.reply);
            continue;
        }
        outs[k]->reply = json_deep_copy(rep);
        if (read_outputs_as(json_object_get(outs[k]->reply, "values"), &outs[k]->t, &outs[k]->n, NULL, 0, NULL, err) < 0)
            return -1;
    }
    return 1;
}

/* After every case: publish what was recorded (the first evaluation to finish wins). */
static void ref_cache_publish(eval_ctx *c) {
    if (!c->cache.cases || !c->cache.tmp[0]) return;
    char index[PATH_MAX + 128];
    snprintf(index, sizeof index, "%s/index.json", c->cache.tmp);
    json_t *idx = json_pack("{s:O}", "cases", c->cache.cases);
    if (idx && json_dump_file(idx, index, JSON_COMPACT) == 0 && rename(c->cache.tmp, c->cache.dir) == 0) c->cache.tmp[0] = '\0';
    json_decref(idx);
}

static void ref_cache_close(eval_ctx *c) {
    if (c->cache.tmp[0]) kbv_rmtree(c->cache.tmp); /* not published: incomplete, too big, or another's won */
    json_decref(c->cache.loaded), json_decref(c->cache.cases);
    memset(&c->cache, 0, sizeof c->cache);
}

/* Judge output k of a candidate's run against case rr's oracle, with the tolerance
 * calibrated on PyTorch's own error there (docs/correctness.md). */
static void judge_output(const eval_ctx *c, const ref_runs *rr, int k, const kbv_tensor *t, judge_calib *cal, judge_result *jr) {
    judge_calibrate(&rr->oracle.t[k], &rr->tf32.t[k], &rr->strict.t[k], cal);
    if (c->oracle_fallback) { /* the oracle is itself an fp32 run: allow fp32 reordering */
        cal->floor *= 10;
        cal->tol_norm = JUDGE_K * cal->tf32.norm_rel + cal->floor;
    }
    judge_calibrated(&rr->oracle.t[k], &rr->strict.t[k], &rr->tf32.t[k], cal, t, jr);
}

/* ---- semantic detectors: what a failed case's outputs show (docs/hacks.md) ------------- */

/* Elements of a whose bytes are all one of the poison bytes pb and whose value is not the
 * oracle's: memory the run left as the poison (or the allocator's fill) put it. One-byte
 * elements are skipped (0x01 is a valid bool). */
static long long poisoned(const kbv_tensor *a, const kbv_tensor *oracle, const unsigned char *pb, int npb) {
    size_t es = kbv_dtype_size(a->dtype);
    int64_t n = kbv_tensor_numel(a);
    if (es < 2 || !oracle || kbv_tensor_numel(oracle) != n) return 0;
    long long hits = 0;
    const unsigned char *p = a->data;
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *e = p + (size_t)i * es;
        for (int k = 0; k < npb; k++) {
            size_t j = 0;
            while (j < es && e[j] == pb[k]) j++;
            if (j < es) continue;
            double v = kbv_tensor_get(a, i), o = kbv_tensor_get(oracle, i);
            if (!(v == o) && !(isnan(v) && isnan(o))) hits++;
            break;
        }
    }
    return hits;
}

static int all_equal(const kbv_tensor *t) {
    size_t es = kbv_dtype_size(t->dtype);
    if (es == 0 || t->nbytes < 2 * es) return 0;
    for (size_t i = es; i + es <= t->nbytes; i += es)
        if (memcmp(t->data, (const unsigned char *)t->data + i, es) != 0) return 0;
    return 1;
}

/* A failed case: name what the outputs show. */
/* cfp[k], ofp[k]: fingerprints of the candidate's output k and of the oracle's (0 past the
 * oracle's outputs). */
static void semantic_findings(eval_ctx *c, const kbv_case *kc, const ref_runs *rr, const run_out *c1, const run_out *c2,
                              const json_t *cand_prints, const uint64_t *cfp, const uint64_t *ofp) {
    kbv_result *r = c->r;
    for (int k = 0; k < c1->n && k < rr->oracle.n && k < EVAL_MAX_SEEN; k++) {
        /* The same output for inputs whose reference outputs differ: a constant. */
        for (int q = 0; q < c->seen[k]; q++)
            if (c->seen_cand[k][q] == cfp[k] && c->seen_ref[k][q] != ofp[k]) {
                result_add_finding(r, "constant_output", "hack", json_pack("{s:s, s:i}", "case", kc->distribution, "output", k),
                                   "case %s: output %d is the same as on an earlier case, where the reference's outputs differ",
                                   kc->distribution, k);
                break;
            }
    }
    /* glibc's perturbation (0x7f / 0xfe in new allocations, 0x80 / 0x01 in freed memory), the
     * GPU's poisoned cache blocks (0x7f / 0xfe), and AddressSanitizer's malloc fill (0xbe) in
     * sanitizer builds */
    static const unsigned char run0[3] = {0x7f, 0x80, 0xbe}, run1[3] = {0xfe, 0x01, 0xbe};
    for (int k = 0; k < c1->n; k++) {
        const kbv_tensor *t = &c1->t[k];
        const kbv_tensor *o = k < rr->oracle.n ? &rr->oracle.t[k] : NULL;
        long long u = poisoned(t, o, run0, 3);
        if (k < c2->n) u += poisoned(&c2->t[k], o, run1, 3);
        if (u > 0)
            result_add_finding(r, "unwritten_elements", "hack", json_pack("{s:s, s:i, s:I}", "case", kc->distribution, "output", k, "elements", (json_int_t)u),
                               "case %s, output %d: %lld element(s) still held the poison kbv put in free memory", kc->distribution, k, u);
        char hx[17], rx[17] = "";
        snprintf(hx, sizeof hx, "%016llx", (unsigned long long)cfp[k]);
        if (k < rr->strict.n) /* where the reference is itself the identity, so is an honest answer */
            snprintf(rx, sizeof rx, "%016llx", (unsigned long long)gen_fingerprint_host(rr->strict.t[k].data, rr->strict.t[k].nbytes));
        for (size_t j = 0; strcmp(hx, rx) != 0 && j < json_array_size(cand_prints); j++)
            if (json_is_string(json_array_get(cand_prints, j)) && strcmp(json_string_value(json_array_get(cand_prints, j)), hx) == 0)
                result_add_finding(r, "identity_output", "hack", json_pack("{s:s, s:i, s:i}", "case", kc->distribution, "output", k, "input", (int)j),
                                   "case %s: output %d is input %zu unchanged, where the reference's output differs", kc->distribution, k, j);
        if (all_equal(t) && k < rr->oracle.n && !all_equal(&rr->oracle.t[k]))
            result_add_finding(r, "constant_output", "hack", json_pack("{s:s, s:i}", "case", kc->distribution, "output", k),
                               "case %s: output %d is one value everywhere; the reference's is not", kc->distribution, k);
    }
    /* Half-precision-sized errors on the problem's own inputs; on hidden inputs alone the
     * same error size is as often a wrong formula that fits the nominal data. */
    if (kc->klass == JUDGE_HALF && strcmp(kc->distribution, "nominal") == 0)
        result_add_finding(r, "precision_downgrade", "hack",
                           json_pack("{s:s, s:f, s:f}", "case", kc->distribution, "norm_rel_err", kc->norm_rel_err, "bound", kc->tol_norm),
                           "case %s: the error (%.3g) is that of half-precision arithmetic, above the fp32/TF32 bound %.3g",
                           kc->distribution, kc->norm_rel_err, kc->tol_norm);
}

/* Judge the candidate's runs of one case against the reference's; fills kc. */
static void judge_case(eval_ctx *c, kbv_case *kc, const ref_runs *rr, const run_out *c1, const run_out *c2,
                       const json_t *cand_prints) {
    kc->evaluated = 1, kc->passed = 1, kc->klass = JUDGE_FP32;
    kc->atol = kc->rtol = 0;
#define FAIL(...)                                                                \
    do {                                                                         \
        if (kc->passed) snprintf(kc->detail, sizeof kc->detail, __VA_ARGS__);    \
        kc->passed = 0;                                                          \
    } while (0)
    if (!json_equal(cand_prints, rr->prints)) {
        FAIL("the candidate's process made different inputs from the same recipe (it changed how get_inputs() or torch's RNG behave)");
        result_add_flag(c->r, "input_generation_tampered", "suspect", "case %s: input fingerprints differ from the reference worker's",
                        kc->distribution);
    }
    if (c1->n != rr->oracle.n) FAIL("%d outputs, expected %d", c1->n, rr->oracle.n);
    if (c2->n != c1->n) FAIL("the second run returned %d outputs, the first %d", c2->n, c1->n);
    for (int k = 0; kc->passed && k < c1->n && k < rr->oracle.n; k++) {
        judge_calib cal;
        judge_result jr;
        judge_output(c, rr, k, &c1->t[k], &cal, &jr);
        if (jr.err.max_abs > kc->max_abs_err) kc->max_abs_err = jr.err.max_abs;
        if (jr.err.max_rel > kc->max_rel_err) kc->max_rel_err = jr.err.max_rel;
        if (jr.err.norm_rel > kc->norm_rel_err || k == 0) {
            kc->norm_rel_err = jr.err.norm_rel;
            kc->tol_norm = cal.tol_norm;
            kc->baseline_norm_rel_err = cal.tf32.norm_rel;
            kc->strict_norm_rel_err = cal.strict.norm_rel;
        }
        if ((int)jr.klass > kc->klass) kc->klass = (int)jr.klass;
        if (!jr.passed) {
            FAIL("output %d: %s", k, jr.reason);
            break;
        }
        /* Two runs under different poison must agree: to 1% of the tolerance where PyTorch's
         * own fp32 result is exact (an elementwise op has no order to vary: a difference is
         * unwritten memory, a race or added noise). Where it rounds (a reduction), an honest
         * kernel's atomics reorder a sum, and two orders differ by about as much as each
         * differs from the exact sum: there the second run must pass the tolerance itself and
         * the runs agree within it (docs/correctness.md says why no tighter limit holds). */
        if (k < c2->n) {
            judge_err d;
            if (c2->t[k].dtype != c1->t[k].dtype || c2->t[k].nbytes != c1->t[k].nbytes) FAIL("output %d: the second run returned a different dtype or shape", k);
            else {
                judge_error(&c1->t[k], &c2->t[k], &d);
                int exact = !(cal.strict.norm_rel > 0);
                double lim = exact ? 0.01 * cal.tol_norm : cal.tol_norm;
                int differ = d.nonfinite_mismatch || d.norm_rel > lim;
                judge_result jr2 = {.passed = 1};
                if (!exact && !differ) /* under the first run's calibration (judge_output's, fallback included) */
                    judge_calibrated(&rr->oracle.t[k], &rr->strict.t[k], &rr->tf32.t[k], &cal, &c2->t[k], &jr2);
                if (differ || !jr2.passed) {
                    if (differ) FAIL("output %d: two runs differ (relative %.3g > %.3g): elements left unwritten, or a race", k, d.norm_rel, lim);
                    else FAIL("output %d: the second run on the same inputs fails: %s", k, jr2.reason);
                    result_add_finding(c->r, "nondeterministic_output", "suspect",
                                       json_pack("{s:s, s:i, s:f, s:f}", "case", kc->distribution, "output", k, "difference", d.norm_rel, "limit", lim),
                                       "case %s, output %d: two runs on the same inputs differ (relative %.3g): uninitialised memory or a race",
                                       kc->distribution, k, d.norm_rel);
                }
            }
        }
        /* Strides as the reference's: a view in another layout is reported, not failed. */
        int same = rr->tf32.t[k].ndim == c1->t[k].ndim;
        for (int d = 0; same && d < c1->t[k].ndim; d++)
            same = c1->t[k].shape[d] <= 1 || c1->t[k].strides[d] == rr->tf32.t[k].strides[d];
        if (!same) result_add_flag(c->r, "stride_mismatch", "info", "output %d has other strides than the reference's", k);
    }
    /* Inputs unchanged, no aliasing the reference does not do. */
    const json_t *after = json_object_get(c1->reply, "inputs_after");
    if (!rr->mutates_inputs && after && !json_equal(after, cand_prints)) {
        for (size_t j = 0; j < json_array_size(after); j++)
            if (!json_equal(json_array_get(after, j), json_array_get(cand_prints, j))) {
                FAIL("input %zu was modified by the call (fingerprint %s, was %s)", j,
                     json_string_value(json_array_get(after, j)) ?: "?", json_string_value(json_array_get(cand_prints, j)) ?: "?");
                result_add_finding(c->r, "input_mutation", "hack",
                                   json_pack("{s:s, s:i, s:O, s:O}", "case", kc->distribution, "input", (int)j, "before",
                                             json_array_get(cand_prints, j), "after", json_array_get(after, j)),
                                   "case %s: the call changed input %zu", kc->distribution, j);
                break;
            }
    }
    const json_t *ca = json_object_get(c1->reply, "aliases"), *ra = json_object_get(rr->strict.reply, "aliases");
    for (size_t q = 0; q < json_array_size(ca); q++) {
        int found = 0;
        for (size_t r2 = 0; r2 < json_array_size(ra); r2++) found |= json_equal(json_array_get(ca, q), json_array_get(ra, r2));
        if (!found) {
            FAIL("output %lld shares memory with input %lld; the reference's does not",
                 (long long)json_integer_value(json_array_get(json_array_get(ca, q), 0)),
                 (long long)json_integer_value(json_array_get(json_array_get(ca, q), 1)));
            break;
        }
    }
    if (!kc->passed && kc->klass < JUDGE_HALF) kc->klass = JUDGE_WRONG;
    /* Every output hashed once: the semantic detectors and the constant-output memory share it. */
    uint64_t *cfp = calloc((size_t)c1->n + 1, sizeof *cfp), *ofp = calloc((size_t)c1->n + 1, sizeof *ofp);
    for (int k = 0; cfp && ofp && k < c1->n; k++) {
        cfp[k] = gen_fingerprint_host(c1->t[k].data, c1->t[k].nbytes);
        if (k < rr->oracle.n) ofp[k] = gen_fingerprint_host(rr->oracle.t[k].data, rr->oracle.t[k].nbytes);
    }
    if (cfp && ofp) {
        if (!kc->passed) semantic_findings(c, kc, rr, c1, c2, cand_prints, cfp, ofp);
        for (int k = 0; k < c1->n && k < rr->oracle.n && k < EVAL_MAX_SEEN; k++)
            if (c->seen[k] < EVAL_MAX_SEEN_CASES) {
                c->seen_cand[k][c->seen[k]] = cfp[k];
                c->seen_ref[k][c->seen[k]] = ofp[k];
                c->seen[k]++;
            }
    }
    free(cfp), free(ofp);
#undef FAIL
}

static long long out_bytes(const run_out *r) {
    long long b = 0;
    for (int k = 0; k < r->n; k++) b += (long long)r->t[k].nbytes;
    return b;
}

/* Candidate: same inputs, two runs under different poison. Returns 0 when judged, 1 when the
 * candidate failed (status set). */
static int candidate_case(eval_ctx *c, kbv_proc *cand, int ci, int dist, int dom, uint64_t seed, const ref_runs *rr,
                          kbv_case *kc, kbv_err *err) {
    run_out r[2];
    memset(r, 0, sizeof r);
    json_t *prints = NULL, *fail = NULL;
    static const int poisons[2] = {0x80, 0x01}; /* new memory holds 0x7f / 0xfe bytes (CPU and GPU) */
    int rc = 0;
    double t_cand = kbv_now();
    for (int k = 0; k < 2; k++) {
        proc_result pr = gen_inputs(c, cand, ci, dist, dom, seed, k ? NULL : &prints, &fail, err);
        if (pr != PROC_OK || fail) {
            candidate_failure(c, cand, "input generation", pr, fail, err);
            json_decref(fail);
            rc = 1;
            break;
        }
        char tag[16];
        snprintf(tag, sizeof tag, "run%d", k);
        pr = run_cmd(c, cand, forward_cmd(c, "cand", ci, tag, "native", 1, poisons[k], 2 * out_bytes(&rr->strict)),
                     c->o->timeout_s, &r[k], &fail, err);
        if (pr != PROC_OK || fail) {
            candidate_failure(c, cand, "forward", pr == PROC_ERROR ? PROC_PROTOCOL : pr, fail, err);
            json_decref(fail);
            rc = 1;
            break;
        }
    }
    if (!rc) {
        double t_judge = kbv_now();
        kc->t_candidate_s = t_judge - t_cand;
        judge_case(c, kc, rr, &r[0], &r[1], prints);
        kc->t_judge_s = kbv_now() - t_judge;
    }
    run_free(&r[0]), run_free(&r[1]);
    json_decref(prints);
    return rc;
}

static int start_and_load(eval_ctx *c, kbv_proc *p, const char *role, int candidate, json_t **load_reply, proc_result *prp,
                          json_t **fail, kbv_err *err) {
    json_t *hello = NULL, *rep = NULL;
    *fail = NULL;
    if (start_worker(c, p, role, c->r->device, &hello, err) < 0) return -1;
    const char *s;
    if (!candidate) {
        if ((s = json_string_value(json_object_get(hello, "python"))))
            snprintf(c->r->python, sizeof c->r->python, "%.*s", (int)strcspn(s, " "), s);
        if ((s = json_string_value(json_object_get(hello, "torch")))) snprintf(c->r->torch, sizeof c->r->torch, "%s", s);
        if ((s = json_string_value(json_object_get(hello, "gpu")))) snprintf(c->r->gpu, sizeof c->r->gpu, "%s", s);
    }
    json_decref(hello);
    proc_result pr = step(c, p, cmd_path("load_problem", c->r->problem.path), c->o->timeout_s, &rep, err);
    if (pr == PROC_OK && json_is_true(json_object_get(rep, "ok")) && candidate) {
        json_decref(rep), rep = NULL;
        /* The source first, statically (its findings are at most suspect). */
        pr = step(c, p, cmd_path("inspect", c->r->candidate.path), c->o->timeout_s, &rep, err);
        if (pr == PROC_OK && json_is_true(json_object_get(rep, "ok"))) {
            json_t *ins = json_object_get(rep, "inspect");
            json_decref(c->r->inspect);
            c->r->inspect = json_incref(ins);
            const json_t *fs = json_object_get(ins, "findings");
            for (size_t i = 0; i < json_array_size(fs); i++) {
                const json_t *f = json_array_get(fs, i);
                const char *id = json_string_value(json_object_get(f, "id")), *sev = json_string_value(json_object_get(f, "severity"));
                if (id && sev && strcmp(sev, "hack") != 0)
                    result_add_finding(c->r, id, sev, json_pack("{s:O}", "line", json_object_get(f, "line")), "%s",
                                       json_string_value(json_object_get(f, "detail")) ?: "");
            }
        }
        if (pr != PROC_OK) {
            *prp = pr;
            *fail = rep;
            return 1;
        }
        json_decref(rep), rep = NULL;
        progress(c, "%s", "loading (and compiling) the candidate");
        pr = step(c, p, cmd_path("load_candidate", c->r->candidate.path), c->o->load_timeout_s, &rep, err);
    }
    *prp = pr;
    if (pr == PROC_OK && json_is_true(json_object_get(rep, "ok"))) {
        if (load_reply) *load_reply = rep;
        else json_decref(rep);
        return 0;
    }
    *fail = rep;
    return 1;
}

static int build(eval_ctx *c, kbv_proc *p, const char *klass, proc_result *prp, json_t **fail, kbv_err *err) {
    json_t *rep = NULL;
    *fail = NULL;
    *prp = step(c, p, json_pack("{s:s, s:s, s:I}", "op", "build", "class", klass, "seed", (json_int_t)c->r->build_seed),
                c->o->timeout_s, &rep, err);
    if (*prp == PROC_OK && json_is_true(json_object_get(rep, "ok"))) {
        /* What the model holds after construction (weights, caches, workspaces). */
        const json_t *pb = json_object_get(rep, "persistent_bytes"), *tb = json_object_get(rep, "torch_persistent_bytes");
        int cand = strcmp(klass, "ModelNew") == 0;
        if (json_is_integer(pb)) *(cand ? &c->r->memory.pers_cand : &c->r->memory.pers_ref) = json_integer_value(pb);
        if (json_is_integer(tb)) *(cand ? &c->r->memory.torch_pers_cand : &c->r->memory.torch_pers_ref) = json_integer_value(tb);
        json_decref(rep);
        return 0;
    }
    *fail = rep;
    return 1;
}

static void finish_candidate(eval_ctx *c, kbv_proc *cand, int failed) {
    kbv_result *r = c->r;
    if (failed) proc_kill(cand);
    else proc_finish(cand, 5.0);
    free(r->candidate_stdout), free(r->candidate_stderr);
    r->candidate_stdout = proc_capture_text(&cand->out);
    r->candidate_stderr = proc_capture_text(&cand->err);
    if (failed && r->status == KBV_CRASH && r->candidate_stderr && *r->candidate_stderr)
        result_add_error(r, "last lines of the candidate's stderr:\n%s", tail_lines(r->candidate_stderr, 30));
    if (cand->out.total > cand->out.head.len + cand->out.tail_len)
        result_add_flag(r, "output_truncated", "info", "the candidate wrote %zu bytes on stdout; kept the first and last",
                        cand->out.total);
}

static int has_hack(const kbv_result *r) {
    for (int i = 0; i < r->nflags; i++)
        if (strcmp(r->flags[i].severity, "hack") == 0) return 1;
    return 0;
}

/* ---- timing (docs/timing.md) ------------------------------------------------------------- */

/* A judged case whose reference outputs are kept for the timed-output re-checks. */
typedef struct kept_case {
    ref_runs rr;
    int ci, dist, dom;
    uint64_t seed;
} kept_case;

enum { ARM_CAND, ARM_REF, ARM_STRICT, ARM_COMPILE, ARM_COUNT };
/* The largest difference between the two workers' medians in 16 A/A runs of a 5.5 us call on
 * the H200 (2026-12-01/02; BENCHMARKS.md): 4 steps of the 32 ns event clock. */
#define PROCESS_OFFSET_NS 128.0
static const char *kArmWhat[ARM_COUNT] = {"candidate", "reference (TF32 on)", "reference (fp32 strict)", "torch.compile(reference)"};

/* One bench command. Returns 0 with *rep, 1 when the worker failed (*fail or pr says how). */
static int bench_step(eval_ctx *c, kbv_proc *p, json_t *cmd, double timeout, json_t **rep, json_t **fail, proc_result *pr,
                      kbv_err *err) {
    *rep = *fail = NULL;
    *pr = step(c, p, cmd, timeout, rep, err);
    if (*pr != PROC_OK) return 1;
    if (!json_is_true(json_object_get(*rep, "ok"))) {
        *fail = *rep, *rep = NULL;
        return 1;
    }
    return 0;
}

static json_t *bench_cmd(int arm, double warmup, const char *save, int prime, long long fresh) {
    json_t *cmd = json_pack("{s:s, s:s, s:i}", "op", "bench", "arm", arm == ARM_COMPILE ? "compile" : "model", "n", 1);
    if (prime) json_object_set_new(cmd, "prime", json_true());
    if (fresh >= 0) json_object_set_new(cmd, "fresh", json_integer(fresh));
    json_object_set_new(cmd, "tf32", json_boolean(arm != ARM_STRICT));
    if (warmup > 0) json_object_set_new(cmd, "warmup_s", json_real(warmup));
    if (save) json_object_set_new(cmd, "save_prefix", json_string(save));
    return cmd;
}

/* A cache keyed on the inputs' content: a candidate much faster, against the reference, on a
 * hidden case's own values (repeated in every such round) than on values drawn like them that
 * no call has seen. Both kinds of round come from the same distribution, and each round runs
 * both arms on the same values, so an honest kernel whose speed depends on the data shows no
 * gap. Flags when the speedup on seen values is more than 1.5 times the speedup on new ones and
 * their interquartile ranges do not overlap, after at least 5 rounds of each (docs/hacks.md). */
static void value_cache_check(eval_ctx *c, const double *ref, const double *cand, const unsigned char *fresh, int n) {
    kbv_perf *pf = &c->r->perf;
    double *q[2] = {malloc(sizeof(double) * (size_t)(n > 0 ? n : 1)), malloc(sizeof(double) * (size_t)(n > 0 ? n : 1))};
    int m[2] = {0, 0};
    if (!q[0] || !q[1]) {
        free(q[0]), free(q[1]);
        return;
    }
    for (int i = 0; i < n; i++)
        if (ref[i] > 0 && cand[i] > 0) q[fresh[i] ? 1 : 0][m[fresh[i] ? 1 : 0]++] = ref[i] / cand[i];
    pf->fresh_rounds = m[1];
    if (m[0] >= 1 && m[1] >= 1) {
        pf->speedup_seen = stats_median(q[0], (size_t)m[0]);
        pf->speedup_fresh = stats_median(q[1], (size_t)m[1]);
    }
    if (m[0] >= 5 && m[1] >= 5 && pf->speedup_seen > 1.5 * pf->speedup_fresh &&
        stats_quantile(q[1], (size_t)m[1], 0.75) < stats_quantile(q[0], (size_t)m[0], 0.25)) {
        result_add_finding(c->r, "value_cache", "hack",
                           json_pack("{s:i, s:i, s:f, s:f}", "seen_rounds", m[0], "fresh_rounds", m[1], "speedup_seen", pf->speedup_seen,
                                     "speedup_fresh", pf->speedup_fresh),
                           "%.3gx PyTorch's speed on input values it had been called with before, %.3gx on new ones (medians of %d and %d "
                           "rounds): its result comes from a cache keyed on the inputs' content",
                           pf->speedup_seen, pf->speedup_fresh, m[0], m[1]);
        c->r->status = KBV_HACK;
    }
    free(q[0]), free(q[1]);
}

/* Re-check a timed output against the oracle of the set it was computed on. */
static int recheck(eval_ctx *c, const kept_case *kept, int nkept, const json_t *rep, char *why, size_t whylen, kbv_err *err) {
    int set = (int)json_integer_value(json_object_get(rep, "set"));
    if (set < 0 || set >= nkept) return snprintf(why, whylen, "timed output names no input set"), 0;
    const ref_runs *rr = &kept[set].rr;
    kbv_tensor *t = NULL;
    int n = 0, ok = 1;
    if (read_outputs(json_object_get(rep, "values"), &t, &n, err) < 0) {
        snprintf(why, whylen, "%s", err->msg);
        ok = 0;
    } else if (n != rr->oracle.n) {
        snprintf(why, whylen, "the timed call returned %d outputs, expected %d", n, rr->oracle.n);
        ok = 0;
    }
    for (int k = 0; ok && k < n; k++) {
        judge_calib cal;
        judge_result jr;
        judge_output(c, rr, k, &t[k], &cal, &jr);
        if (!jr.passed) {
            snprintf(why, whylen, "set %d, output %d: %s", set, k, jr.reason);
            ok = 0;
        }
    }
    free_outputs(t, n);
    return ok;
}

static void audit_result(eval_ctx *c, json_t *rep, int cand, const json_t *names) {
    kbv_result *r = c->r;
    json_object_del(rep, "ok");
    long long peak = json_integer_value(json_object_get(rep, "peak_bytes"));
    long long tpeak = json_is_integer(json_object_get(rep, "torch_peak_bytes")) ? json_integer_value(json_object_get(rep, "torch_peak_bytes")) : -1;
    if (cand) r->audit_cand = json_incref(rep), r->memory.peak_cand = peak, r->memory.torch_peak_cand = tpeak;
    else r->audit_ref = json_incref(rep), r->memory.peak_ref = peak, r->memory.torch_peak_ref = tpeak;
    if (!cand) return;
    if (!json_is_true(json_object_get(rep, "markers")) || json_integer_value(json_object_get(rep, "dropped")) > 0)
        result_add_flag(r, "audit_incomplete", "suspect", "the CUPTI trace of the candidate's call is incomplete (markers %s, %lld records dropped)",
                        json_is_true(json_object_get(rep, "markers")) ? "seen" : "missing",
                        (long long)json_integer_value(json_object_get(rep, "dropped")));
    long long after = json_integer_value(json_object_get(rep, "after_stop"));
    long long other = json_integer_value(json_object_get(rep, "other_stream"));
    if (after > 0) {
        const json_t *k0 = json_array_get(json_object_get(rep, "after_stop_kernels"), 0);
        result_add_flag(r, "work_after_stop", "hack",
                        "%lld kernel(s) of the candidate's call ran past the timed window's stop (e.g. %s, %lld ns after it): its time misses work",
                        after, json_string_value(json_object_get(k0, "name")) ?: "?", (long long)json_integer_value(json_object_get(k0, "ns_after_stop")));
        r->status = KBV_HACK;
    }
    /* Library policy (docs/hacks.md): library kernels inside an authored fusion are fine; a
     * call whose kernels are all library kernels is the library's speed, not the candidate's. */
    long long nk = json_integer_value(json_object_get(rep, "kernels_per_call"));
    long long na = json_integer_value(json_object_get(rep, "authored_kernels"));
    const char *sev = c->o->library_only ? c->o->library_only : "hack";
    if (nk > 0 && na == 0 && json_array_size(names) > 0)
        result_add_finding(r, "unused_kernel", sev, json_pack("{s:O, s:I}", "defined", names, "kernels_per_call", (json_int_t)nk),
                           "the candidate defines %zu kernel(s) (e.g. %s) but the call launched none of them", json_array_size(names),
                           json_string_value(json_array_get(names, 0)));
    else if (nk > 0 && na == 0)
        result_add_finding(r, "library_only", sev, json_pack("{s:I, s:I}", "kernels_per_call", (json_int_t)nk, "library_ns",
                                                             (json_int_t)json_integer_value(json_object_get(rep, "library_ns"))),
                           "every kernel of the call is a library kernel (%lld); none is the candidate's own", nk);
    if (strcmp(sev, "hack") == 0 && (result_has_flag(r, "unused_kernel") || result_has_flag(r, "library_only"))) r->status = KBV_HACK;
    if (after == 0 && other > 0) {
        result_add_flag(r, "other_stream", "info", "%lld kernel(s) ran on streams other than kbv's (the legacy default stream of a plain <<<...>>> launch counts) and finished before the stop", other);
    }
}

/* Bytes a call must move at least: every input read once, every output written once. */
static long long min_bytes(const eval_ctx *c, const kept_case *k) {
    long long b = 0;
    const json_t *probe = json_object_get(c->r->inputs, "probe");
    for (size_t j = 0; j < json_array_size(probe); j++) {
        const json_t *e = json_array_get(probe, j);
        kbv_dtype dt = kbv_dtype_from_name(json_string_value(json_object_get(e, "dtype")));
        if (dt == KBV_DT_INVALID) continue;
        long long n = 1;
        const json_t *sh = json_object_get(e, "shape");
        for (size_t d = 0; d < json_array_size(sh); d++) n *= json_integer_value(json_array_get(sh, d));
        b += n * (long long)kbv_dtype_size(dt);
    }
    for (int q = 0; q < k->rr.strict.n; q++) b += (long long)k->rr.strict.t[q].nbytes;
    return b;
}

/* A time below what the memory system allows is impossible: the work was not done in the
 * timed call. An excessive speedup alone is only information. */
static void roofline(eval_ctx *c, const kept_case *k, double peak_gbs) {
    kbv_result *r = c->r;
    const kbv_perf *pf = &r->perf;
    if (!pf->measured) return;
    long long bytes = min_bytes(c, k);
    if (peak_gbs > 0 && bytes > 0) {
        double floor_ms = (double)bytes / (peak_gbs * 1e9) * 1e3;
        if (pf->cand.median < floor_ms)
            result_add_finding(r, "impossible_time", "hack",
                               json_pack("{s:I, s:f, s:f, s:f}", "bytes", (json_int_t)bytes, "peak_gbs", peak_gbs, "floor_ms", floor_ms,
                                         "median_ms", pf->cand.median),
                               "%.4g ms is below the %.4g ms it takes just to move the call's %lld bytes at %.0f GB/s",
                               pf->cand.median, floor_ms, bytes, peak_gbs);
    }
    if (pf->speedup.value > 10)
        result_add_finding(r, "excessive_speedup", "info", json_pack("{s:f}", "speedup", pf->speedup.value),
                           "%.1fx faster than PyTorch: worth a look (not a verdict)", pf->speedup.value);
}

/* Time a verified candidate against the reference (both workers alive). Returns 0 (perf
 * filled, or perf.note says why not), 1 when the candidate failed (status set), -1 when kbv
 * failed. */
static int run_timing(eval_ctx *c, kbv_proc *ref, kbv_proc *cand, kept_case *kept, int nkept, kbv_err *err) {
    kbv_result *r = c->r;
    kbv_perf *pf = &r->perf;
    int cuda = strcmp(r->device, "cuda") == 0;
    double t_start = kbv_now(), to = c->o->timeout_s;
    json_t *rep = NULL, *fail = NULL;
    proc_result pr;
    kbv_proc *procs[ARM_COUNT] = {cand, ref, ref, ref};
    double peak_gbs = 0;
    int fresh_ok = 1; /* both workers can draw values no call has seen */
    snprintf(pf->clock, sizeof pf->clock, "%s", cuda ? "cuda_events" : "cpu_monotonic");
    if (nkept == 0) {
        snprintf(pf->note, sizeof pf->note, "no judged case to time on");
        return 0;
    }
    progress(c, "%s", "timing: setting up the input sets");
    json_t *sets = json_array();
    for (int k = 0; k < nkept; k++)
        json_array_append_new(sets, json_pack("{s:o, s:I}", "inputs", case_specs(c, kept[k].ci, kept[k].dist, kept[k].dom),
                                              "seed", (json_int_t)kept[k].seed));
    for (int side = 0; side < 2; side++) {
        kbv_proc *p = side ? cand : ref;
        json_t *setup = json_pack("{s:s, s:O}", "op", "bench_setup", "sets", sets);
        if (c->fresh_ci >= 0)
            json_object_set_new(setup, "fresh", json_pack("{s:o, s:I}", "inputs", case_specs(c, c->fresh_ci, c->fresh_dist, c->fresh_dom),
                                                          "seed", (json_int_t)c->fresh_seed));
        if (bench_step(c, p, setup, to, &rep, &fail, &pr, err)) {
            json_decref(sets);
            goto failed_side;
        }
        if (json_is_number(json_object_get(rep, "peak_gbs"))) peak_gbs = json_number_value(json_object_get(rep, "peak_gbs"));
        fresh_ok &= json_is_true(json_object_get(rep, "fresh"));
        pf->slots[side] = (int)json_integer_value(json_object_get(rep, "slots"));
        json_decref(rep), rep = NULL;
        continue;
    failed_side:
        if (side) {
            candidate_failure(c, cand, "timing setup", pr, fail, err);
            json_decref(fail);
            return 1;
        }
        snprintf(pf->note, sizeof pf->note, "the reference failed to set up timing: %s", fail ? reply_msg(fail) : err->msg);
        json_decref(fail);
        return 0;
    }
    json_decref(sets);

    /* The audit: one call each under CUPTI, kept out of the timed samples. */
    double t_audit = kbv_now();
    if (cuda) {
        progress(c, "%s", "timing: CUPTI audit of one call each");
        /* The candidate's own kernels, as the static inspection at load time named them. */
        json_t *names = json_array();
        json_array_extend(names, json_object_get(r->inspect, "kernels"));
        json_array_extend(names, json_object_get(r->inspect, "triton_kernels"));
        for (int side = 0; side < 2; side++) {
            kbv_proc *p = side ? cand : ref;
            json_t *cmd = json_pack("{s:s, s:o}", "op", "audit", "authored", side ? json_incref(names) : json_array());
            if (bench_step(c, p, cmd, to, &rep, &fail, &pr, err) == 0) {
                audit_result(c, rep, side, names);
                json_decref(rep), rep = NULL;
                continue;
            }
            const char *kind = json_string_value(json_object_get(fail, "kind")) ?: "";
            if (side && strcmp(kind, "audit") != 0) {
                json_decref(names);
                candidate_failure(c, cand, "audited call", pr, fail, err);
                json_decref(fail);
                return 1;
            }
            result_add_flag(r, "audit_unavailable", "info", "no CUPTI audit of the %s: %s", side ? "candidate" : "reference",
                            fail ? reply_msg(fail) : err->msg);
            json_decref(fail), fail = NULL;
            if (!side && pr != PROC_OK) {
                json_decref(names);
                snprintf(pf->note, sizeof pf->note, "the reference worker failed during the audit");
                return 0;
            }
        }
        json_decref(names);
        r->phase_s[PHASE_AUDIT] = kbv_now() - t_audit;
        if (r->status == KBV_HACK) {
            snprintf(pf->note, sizeof pf->note, "not timed: the audit found work outside the timed window");
            return 0;
        }
    }

    /* Memoization probe: same addresses, new values (without a version bump) -> the output
     * must change wherever the reference's does. */
    if (nkept == 2) {
        int differ = 0;
        for (int k = 0; k < kept[0].rr.oracle.n && k < kept[1].rr.oracle.n; k++)
            differ |= gen_fingerprint_host(kept[0].rr.oracle.t[k].data, kept[0].rr.oracle.t[k].nbytes) !=
                      gen_fingerprint_host(kept[1].rr.oracle.t[k].data, kept[1].rr.oracle.t[k].nbytes);
        if (differ) {
            if (bench_step(c, cand, json_pack("{s:s}", "op", "memo_probe"), to, &rep, &fail, &pr, err)) {
                candidate_failure(c, cand, "the memoization probe", pr, fail, err);
                json_decref(fail);
                return 1;
            }
            if (json_equal(json_object_get(rep, "before"), json_object_get(rep, "after"))) {
                result_add_finding(r, "output_memoization", "hack", json_pack("{s:O}", "outputs", json_object_get(rep, "after")),
                                   "new values written into the same input tensors left the output unchanged: it was cached");
                r->status = KBV_HACK;
            }
            json_decref(rep), rep = NULL;
            if (r->status == KBV_HACK) {
                snprintf(pf->note, sizeof pf->note, "not timed: the candidate caches its outputs");
                return 0;
            }
        }
    }

    /* Warm-up: until clocks and caches settle (and torch.compile has compiled). */
    int arms[ARM_COUNT], narms = 0;
    arms[narms++] = ARM_CAND, arms[narms++] = ARM_REF;
    if (cuda) arms[narms++] = ARM_STRICT;
    if (c->o->compile_baseline) arms[narms++] = ARM_COMPILE;
    progress(c, "%s", "timing: warm-up");
    double warm_max_ms = 0;
    for (int a = 0; a < narms; a++) {
        double w = cuda ? (a == 0 ? 0.3 : 0.2) : 0.05;
        if (bench_step(c, procs[arms[a]], bench_cmd(arms[a], w, NULL, 0, -1), arms[a] == ARM_COMPILE ? c->o->load_timeout_s : to, &rep, &fail, &pr, err)) {
            if (arms[a] == ARM_CAND) {
                candidate_failure(c, cand, "timing warm-up", pr, fail, err);
                json_decref(fail);
                return 1;
            }
            if (arms[a] == ARM_COMPILE) {
                snprintf(pf->note, sizeof pf->note, "torch.compile baseline failed: %.200s", fail ? reply_msg(fail) : err->msg);
                json_decref(fail), fail = NULL;
                narms--;
                if (pr != PROC_OK) return 0;
                continue;
            }
            snprintf(pf->note, sizeof pf->note, "the reference failed in timing: %.200s", fail ? reply_msg(fail) : err->msg);
            json_decref(fail);
            return 0;
        }
        pf->held[arms[a] == ARM_CAND] = (int)json_integer_value(json_object_get(rep, "held"));
        double wm = json_number_value(json_object_get(rep, "warmup_last_ms"));
        if (wm > warm_max_ms) warm_max_ms = wm;
        json_decref(rep), rep = NULL;
    }
    /* A fixed cost of running first after the other worker (cold code, mappings) is about
     * 0.1 us: worth an extra untimed call per sample only for short calls. */
    pf->primed = cuda && (c->o->prime == 1 || (c->o->prime < 0 && warm_max_ms < 2.0));

    /* Rounds in random order; stop on the noise of the headline ratio. */
    enum { MAX_ROUNDS = 5000 };
    double *ms[ARM_COUNT];
    for (int a = 0; a < ARM_COUNT; a++) ms[a] = calloc(MAX_ROUNDS, sizeof(double));
    double *ratio = calloc(MAX_ROUNDS, sizeof(double));
    /* value_cache_check's rounds: the reference's and the candidate's times, and whether the
     * values were new */
    double *dref = calloc(MAX_ROUNDS, sizeof(double)), *dcand = calloc(MAX_ROUNDS, sizeof(double));
    unsigned char *dnew = calloc(MAX_ROUNDS, 1);
    int rc = 0, n = 0, nd = 0;
    long long nround = 0;
    if (!ratio || !dref || !dcand || !dnew || !ms[0] || !ms[1] || !ms[2] || !ms[3]) {
        rc = kbv_seterr(err, "out of memory");
        goto out;
    }
    /* With the budget left to kbv, a GPU run whose CI is still wider than 2% at 10 s (a few
     * rounds of a call of tens of ms) goes on to 30 s: the target is a CI of at most 2% for
     * calls of 100 us and more. A --time-budget given is a hard cap. */
    int auto_budget = !(c->o->time_budget_s > 0);
    stats_stop_rule rule = {.min_samples = 10, .max_samples = MAX_ROUNDS, .min_time_s = cuda ? 0.5 : 0.2,
                            .max_time_s = !auto_budget ? c->o->time_budget_s : cuda ? 10 : 2,
                            .target = cuda ? 0.005 : 0.01,
                            .extend_time_s = auto_budget && cuda ? 30 : 0, .extend_target = 0.01,
                            .resamples = 2000, .seed = r->seed ^ 0xA1}; /* perf_ratio's, below */
    uint64_t rng = kbv_mix64(r->seed ^ 0x7137);
    char save[PATH_MAX + 32];
    /* The budget counts the rounds, not the re-checks of timed outputs against the oracle
     * (seconds each for outputs of hundreds of MiB): t_rounds moves forward by their time. */
    double t_rounds = kbv_now();
    stats_stop stop = STATS_CONTINUE;
    progress(c, "%s", "timing: interleaved rounds");
    /* The headline stops on its own rule; value_cache_check's rounds go on (up to twice the
     * budget) until it has 5 of each kind, so that a slow machine does not leave it blind. */
    int nseen = 0, nnew = 0;
    while (stop == STATS_CONTINUE ||
           (fresh_ok && (nseen < 5 || nnew < 5) && r->status != KBV_HACK && kbv_now() - t_rounds < 2 * rule.max_time_s)) {
        int order[ARM_COUNT];
        for (int a = 0; a < narms; a++) order[a] = arms[a];
        for (int a = narms - 1; a > 0; a--) { /* Fisher-Yates */
            rng = kbv_mix64(rng);
            int j = (int)(rng % (uint64_t)(a + 1)), t = order[a];
            order[a] = order[j], order[j] = t;
        }
        /* Two rounds in six run the candidate and the reference on a hidden case's inputs
         * instead of the rotation, for value_cache_check only: one on that case's own values
         * (the same in every such round: values the call has seen), one on values drawn like
         * them that no call has seen. A cache keyed on the inputs' content is fast on the first
         * and slow on the second; an honest kernel runs both alike (same distribution). */
        int phase = (int)(nround % 6);
        int kind = fresh_ok && phase == 2 ? 1 : fresh_ok && phase == 5 ? 2 : 0; /* 0 headline, 1 seen, 2 new */
        if (stop != STATS_CONTINUE) kind = nseen <= nnew ? 1 : 2; /* the headline is done */
        long long fresh = kind == 1 ? 0 : kind == 2 ? nround : -1;
        int fresh_all = kind > 0; /* every arm ran on the hidden case's values */
        int check = kind == 0 && (n % 16 == 0 || n % 16 == 1); /* consecutive rounds: both value sets */
        double dms[ARM_COUNT] = {0};
        nround++;
        for (int q = 0; q < narms; q++) {
            int a = order[q];
            if (kind && a != ARM_CAND && a != ARM_REF) continue;
            snprintf(save, sizeof save, "%s/cand/timed%d_", c->scratch, n);
            if (bench_step(c, procs[a], bench_cmd(a, 0, a == ARM_CAND && check ? save : NULL, pf->primed, fresh), to, &rep, &fail, &pr, err)) {
                if (a == ARM_CAND) {
                    candidate_failure(c, cand, "a timed call", pr, fail, err);
                    rc = 1;
                } else {
                    snprintf(pf->note, sizeof pf->note, "the %s failed in timing: %.200s", kArmWhat[a], fail ? reply_msg(fail) : err->msg);
                }
                json_decref(fail);
                goto out;
            }
            json_t *v = json_array_get(json_object_get(rep, "ms"), 0);
            if (kind) dms[a] = v ? json_number_value(v) : 0;
            else ms[a][n] = v ? json_number_value(v) : 0;
            if (fresh >= 0 && !json_is_true(json_object_get(rep, "fresh"))) fresh_all = 0;
            if (json_is_true(json_object_get(rep, "fresh_failed"))) fresh_ok = 0; /* no more such rounds */
            pf->throttled += (int)json_integer_value(json_object_get(rep, "throttled"));
            pf->cushion_expired += (int)json_integer_value(json_object_get(rep, "cushion_expired"));
            if (a == ARM_CAND && check) {
                char why[300];
                double t_check = kbv_now();
                pf->rechecks++;
                if (!recheck(c, kept, nkept, rep, why, sizeof why, err)) {
                    pf->rechecks_failed++;
                    result_add_flag(r, "timed_output_mismatch", "hack", "a timed call's output is wrong (round %d): %s", n, why);
                    r->status = KBV_HACK;
                }
                t_rounds += kbv_now() - t_check;
            }
            json_decref(rep), rep = NULL;
        }
        if (kind) {
            if (fresh_all && dms[ARM_REF] > 0 && dms[ARM_CAND] > 0 && nd < MAX_ROUNDS) {
                dref[nd] = dms[ARM_REF], dcand[nd] = dms[ARM_CAND], dnew[nd] = kind == 2, nd++;
                nseen += kind == 1, nnew += kind == 2;
            }
            if (r->status == KBV_HACK) break;
            double el = kbv_now() - t_rounds;
            if (stop == STATS_CONTINUE && el >= rule.max_time_s) stop = stats_should_stop(&rule, ratio, (size_t)n, el, &pf->noise);
            continue;
        }
        ratio[n] = ms[ARM_REF][n] > 0 && ms[ARM_CAND][n] > 0 ? ms[ARM_REF][n] / ms[ARM_CAND][n] : 0;
        if (ratio[n] > 0) n++;
        if (r->status == KBV_HACK) break;
        double el = kbv_now() - t_rounds;
        if (n < 50 || n % 8 == 0) stop = stats_should_stop(&rule, ratio, (size_t)n, el, &pf->noise);
        else if (el >= stats_time_cap(&rule)) stop = STATS_STOP_MAX_TIME;
    }
    /* The last two timed outputs are checked too: consecutive samples hold the two value sets,
     * so an output kept from an earlier call cannot match both, however few rounds ran. */
    for (int last = 0; last < 2 && r->status != KBV_HACK; last++) {
        snprintf(save, sizeof save, "%s/cand/timed_last%d_", c->scratch, last);
        if (bench_step(c, cand, bench_cmd(ARM_CAND, 0, save, pf->primed, -1), to, &rep, &fail, &pr, err)) {
            candidate_failure(c, cand, "a timed call", pr, fail, err);
            json_decref(fail);
            rc = 1;
            goto out;
        }
        char why[300];
        pf->rechecks++;
        if (!recheck(c, kept, nkept, rep, why, sizeof why, err)) {
            pf->rechecks_failed++;
            result_add_flag(r, "timed_output_mismatch", "hack", "the last timed call's output is wrong: %s", why);
            r->status = KBV_HACK;
        }
        json_decref(rep), rep = NULL;
    }
    pf->rounds = n;
    snprintf(pf->stop, sizeof pf->stop, "%s", stop == STATS_STOP_CONVERGED ? "converged" : stop == STATS_STOP_MAX_SAMPLES ? "max_samples"
                                               : stop == STATS_STOP_MAX_TIME ? "max_time" : "stopped");
    /* Rounds without the headline pair were overwritten by the next: ms[*][0..n) are paired. */
    perf_times(ms[ARM_CAND], n, &pf->cand);
    perf_times(ms[ARM_REF], n, &pf->ref);
    perf_ratio(ms[ARM_REF], ms[ARM_CAND], n, r->seed ^ 0xA1, &pf->speedup);
    if (cuda) {
        perf_times(ms[ARM_STRICT], n, &pf->ref_strict);
        perf_ratio(ms[ARM_STRICT], ms[ARM_CAND], n, r->seed ^ 0xA2, &pf->speedup_strict);
    }
    for (int a = 0; a < narms; a++)
        if (arms[a] == ARM_COMPILE) {
            perf_times(ms[ARM_COMPILE], n, &pf->ref_compile);
            perf_ratio(ms[ARM_COMPILE], ms[ARM_CAND], n, r->seed ^ 0xA3, &pf->speedup_compile);
        }
    pf->measured = pf->speedup.measured;
    /* Two worker processes running the same code differ on a short call by up to
     * PROCESS_OFFSET_NS, whatever the interleaving and the placements (BENCHMARKS.md, "A/A
     * at 5.5 us"): a per-process constant that the per-round bootstrap cannot see. */
    if (cuda && pf->measured) {
        double shorter = pf->cand.median < pf->ref.median ? pf->cand.median : pf->ref.median;
        pf->process_offset = shorter > 0 ? PROCESS_OFFSET_NS * 1e-6 / shorter : 0;
        if (pf->process_offset > 0.01)
            result_add_flag(r, "short_call", "info",
                            "at %.3g us, two processes running the same code differ by up to %.2g us (%.1f%%), which the CI "
                            "does not include: read speedups within that of each other as equal",
                            shorter * 1e3, PROCESS_OFFSET_NS * 1e-3, 100 * pf->process_offset);
    }
    value_cache_check(c, dref, dcand, dnew, nd);
    if (c->o->keep_samples) {
        json_decref(r->samples);
        r->samples = json_object();
        static const char *const keys[ARM_COUNT] = {[ARM_CAND] = "candidate", [ARM_REF] = "reference", [ARM_STRICT] = "reference_strict",
                                                    [ARM_COMPILE] = "reference_compile"};
        for (int a = 0; a < narms; a++) {
            json_t *v = json_array();
            for (int i = 0; i < n; i++) json_array_append_new(v, json_real(ms[arms[a]][i]));
            json_object_set_new(r->samples, keys[arms[a]], v);
        }
    }
    roofline(c, &kept[0], peak_gbs);

    /* Graph replay: device time with launch overhead gone, where the call can be captured. */
    if (cuda && r->status != KBV_HACK) {
        progress(c, "%s", "timing: CUDA graph replay");
        enum { GRAPH_ROUNDS = 30 };
        double g[2][GRAPH_ROUNDS];
        int ok = 1;
        for (int i = 0; i < GRAPH_ROUNDS && ok; i++)
            for (int side = 0; side < 2 && ok; side++) {
                kbv_proc *p = side ? ref : cand;
                json_t *cmd = json_pack("{s:s, s:s, s:i, s:b, s:b}", "op", "bench", "arm", "graph", "n", 1, "tf32", 1, "prime", pf->primed);
                if (bench_step(c, p, cmd, to, &rep, &fail, &pr, err)) {
                    snprintf(pf->graph_note, sizeof pf->graph_note, "%s: %.160s", side ? "reference" : "candidate",
                             fail ? reply_msg(fail) : err->msg);
                    if (!side && pr != PROC_OK) {
                        candidate_failure(c, cand, "graph replay", pr, fail, err);
                        rc = 1;
                    }
                    json_decref(fail), fail = NULL;
                    ok = 0;
                    break;
                }
                json_t *v = json_array_get(json_object_get(rep, "ms"), 0);
                g[side][i] = v ? json_number_value(v) : 0;
                pf->graphs[!side] = (int)json_integer_value(json_object_get(rep, "graphs"));
                json_decref(rep), rep = NULL;
            }
        if (ok) {
            /* The first replay of each follows its capture (the worker replays each graph
             * once untimed to upload it, but the capture leaves other state cold): drop it. */
            perf_times(g[0] + 1, GRAPH_ROUNDS - 1, &pf->cand_graph);
            perf_times(g[1] + 1, GRAPH_ROUNDS - 1, &pf->ref_graph);
            perf_ratio(g[1] + 1, g[0] + 1, GRAPH_ROUNDS - 1, r->seed ^ 0xA4, &pf->speedup_graph);
        }
    }
    /* The timer's floor: kbv's empty kernel timed the same way (flush, cushion, event pair),
     * in the reference's worker. A call this short is at the limit of what kbv can resolve;
     * beside the audit's empty_kernel_ns it gives the timer's overhead (BENCHMARKS.md). */
    if (cuda) {
        enum { EMPTY_SAMPLES = 30 };
        double e[EMPTY_SAMPLES];
        int ne = 0;
        if (bench_step(c, ref, json_pack("{s:s, s:s, s:i}", "op", "bench", "arm", "empty", "n", EMPTY_SAMPLES), to, &rep, &fail, &pr, err) == 0) {
            json_t *v, *ems = json_object_get(rep, "ms");
            size_t i;
            json_array_foreach(ems, i, v) if (ne < EMPTY_SAMPLES && json_number_value(v) > 0) e[ne++] = json_number_value(v);
            perf_times(e, ne, &pf->empty);
        }
        json_decref(fail), fail = NULL;
        json_decref(rep), rep = NULL;
    }
out:
    json_decref(rep);
    for (int a = 0; a < ARM_COUNT; a++) free(ms[a]);
    free(ratio), free(dref), free(dcand), free(dnew);
    pf->time_s = kbv_now() - t_start;
    return rc;
}

static void run_verified(eval_ctx *c, kbv_err *err) {
    kbv_result *r = c->r;
    kbv_proc ref, cand;
    json_t *rep = NULL, *fail = NULL;
    proc_result pr;
    int ref_up = 0, cand_up = 0, cand_failed = 0, nkept = 0;
    kept_case kept[2];
    memset(&ref, 0, sizeof ref), memset(&cand, 0, sizeof cand), memset(kept, 0, sizeof kept);
    double t_phase = kbv_now();
    progress(c, "starting the reference worker (%s)", r->device);
    if (kbv_gpulock_set(&c->lock, 1, err) < 0) goto internal;
    int s = start_and_load(c, &ref, "reference", 0, &rep, &pr, &fail, err);
    if (s < 0) goto internal;
    ref_up = 1;
    if (s > 0) {
        problem_failure(c, &ref, "load", pr, fail, err);
        goto done;
    }
    json_t *decl = json_incref(json_object_get(rep, "constraints"));
    json_decref(rep), rep = NULL;
    if (build(c, &ref, "Model", &pr, &fail, err)) {
        json_decref(decl);
        problem_failure(c, &ref, "Model construction", pr, fail, err);
        goto done;
    }
    /* Probe get_inputs() under three seeds and plan the inputs. */
    char prefix[PATH_MAX + 32];
    snprintf(prefix, sizeof prefix, "%s/inputs/zeros", c->scratch);
    json_t *seeds = json_array();
    for (int k = 0; k < 3; k++) json_array_append_new(seeds, json_integer((json_int_t)(kbv_derive_seed(r->seed, 0x9000u + (unsigned)k) & 0xffffffffu)));
    pr = step(c, &ref, json_pack("{s:s, s:o, s:s}", "op", "probe", "seeds", seeds, "mask_prefix", prefix), c->o->timeout_s, &rep, err);
    if (pr != PROC_OK || !json_is_true(json_object_get(rep, "ok"))) {
        json_decref(decl);
        problem_failure(c, &ref, "get_inputs() probe", pr, rep, err);
        goto done;
    }
    c->plan = make_plan(json_object_get(rep, "inputs"), decl);
    json_decref(decl);
    r->inputs = json_pack("{s:O, s:O}", "probe", json_object_get(rep, "inputs"), "plan", c->plan);
    json_decref(rep), rep = NULL;
    r->phase_s[PHASE_REFERENCE] = kbv_now() - t_phase, t_phase = kbv_now();

    if (!c->o->candidate) goto cases; /* kbv check: the reference side only */
    progress(c, "starting the candidate worker (%s)", r->device);
    if (kbv_gpulock_set(&c->lock, 0, err) < 0) goto internal; /* compiling needs no GPU */
    s = start_and_load(c, &cand, "candidate", 1, NULL, &pr, &fail, err);
    if (s < 0) {
        r->status = KBV_CRASH;
        result_add_error(r, "%s", err->msg);
        goto done;
    }
    cand_up = 1;
    if (kbv_gpulock_set(&c->lock, 1, err) < 0) goto internal;
    if (s > 0 || build(c, &cand, "ModelNew", &pr, &fail, err)) {
        candidate_failure(c, &cand, s > 0 ? "load" : "ModelNew construction", pr, fail, err);
        json_decref(fail), fail = NULL;
        cand_failed = 1;
        goto done;
    }
    r->phase_s[PHASE_CANDIDATE_LOAD] = kbv_now() - t_phase, t_phase = kbv_now();
cases:;
    if (c->o->candidate) {
        /* Same names and shapes but other values under the same seed: give the candidate
         * the reference's weights, before its first call (docs/correctness.md). */
        char wprefix[PATH_MAX + 32];
        snprintf(wprefix, sizeof wprefix, "%s/inputs/weight", c->scratch);
        pr = step(c, &ref, json_pack("{s:s, s:s}", "op", "save_state", "prefix", wprefix), c->o->timeout_s, &rep, err);
        if (pr != PROC_OK || !json_is_true(json_object_get(rep, "ok"))) {
            problem_failure(c, &ref, "state_dict()", pr, rep, err);
            goto done;
        }
        json_t *state = json_incref(json_object_get(rep, "state"));
        json_decref(rep), rep = NULL;
        pr = step(c, &cand, json_pack("{s:s, s:o}", "op", "load_state", "state", state), c->o->timeout_s, &rep, err);
        if (pr != PROC_OK || !json_is_true(json_object_get(rep, "ok"))) {
            candidate_failure(c, &cand, "loading the reference's weights", pr, rep, err);
            cand_failed = 1;
            goto done;
        }
        r->weights_matched = json_is_true(json_object_get(rep, "matched"));
        r->weights_loaded = json_is_true(json_object_get(rep, "loaded"));
        if (r->weights_loaded)
            result_add_flag(r, "weights_loaded", "info",
                            "%lld of the candidate's state_dict entries had other values than the reference's under the same seed; the reference's were loaded into it",
                            (long long)json_integer_value(json_object_get(rep, "differing")));
        json_decref(rep), rep = NULL;
    }
    int hidden = plan_has_gen(c);
    snprintf(r->oracle, sizeof r->oracle, "float64");
    ref_cache_open(c);
    for (int di = 0; di < 5 && !cand_failed && r->status != KBV_PROBLEM_ERROR; di++) {
        for (int si = 0; si < c->o->ncases; si++) {
            int ci = di * c->o->ncases + si;
            kbv_case *kc = result_add_case(r);
            if (!kc) goto internal;
            snprintf(kc->distribution, sizeof kc->distribution, "%s", kDists[di]);
            kc->seed = case_seed(r->seed, ci);
            if (di > 0 && !hidden) {
                kc->skipped = 1;
                snprintf(kc->skip_reason, sizeof kc->skip_reason, "no input can be generated (all are fixed, scalars or vary in shape)");
                continue;
            }
            progress(c, "case %s", kDists[di]);
            /* a case boundary: a waiting timer gets the GPU here */
            if (kbv_gpulock_set(&c->lock, 0, err) < 0 || kbv_gpulock_set(&c->lock, 1, err) < 0) goto internal;
            ref_runs rr;
            int dom = di == 0 ? 3 : 0, valid = 0;
            double t_ref = kbv_now();
            char why[200] = "";
            int taken = c->cache.loaded ? ref_cache_take(c, ci, kc, &rr, &dom, err) : 0;
            if (taken < 0) {
                ref_runs_free(&rr);
                goto internal;
            }
            if (taken) valid = !kc->skipped;
            c->cache.keep = c->cache.cases ? c->cache.tmp : NULL; /* this evaluation records */
            for (; !taken && dom < 4; dom++) {
                uint64_t seed = dom == 3 && di > 0 ? (kbv_mix64(kc->seed ^ 0xF00D) & SEED_MASK) : kc->seed;
                int rc = reference_case(c, &ref, ci, kDistCode[di], dom, seed, &rr, err);
                if (rc == -1 || rc == 1) ref_runs_free(&rr);
                if (rc < 0) goto internal;
                if (rc == 2) { /* the reference rejected these inputs: try the next domain */
                    c->oracle_retry = 0;
                    snprintf(why, sizeof why, "%s", c->invalid_why);
                    ref_runs_free(&rr);
                    continue;
                }
                if (rc > 0) goto done;
                valid = oracle_valid(c, &rr, di == 0, why, sizeof why);
                if (valid < 0) {
                    ref_runs_free(&rr);
                    kbv_seterr(err, "the reference worker's reply has no facts for an output it kept");
                    goto internal;
                }
                if (di == 0) break;
                if (valid) {
                    kc->seed = seed;
                    break;
                }
                ref_runs_free(&rr);
            }
            c->cache.keep = NULL;
            if (!taken) {
                snprintf(kc->domain, sizeof kc->domain, "%s", kDomains[effective_domain(c, dom < 4 ? dom : 3)]);
                if (!valid) {
                    kc->skipped = 1;
                    snprintf(kc->skip_reason, sizeof kc->skip_reason, "no domain gave a valid reference output (last: %s)", why);
                } else if (di > 0 && dom > 0) { /* why the domain before this one was not valid */
                    snprintf(kc->fallback_reason, sizeof kc->fallback_reason, "%s in domain %s", why,
                             kDomains[effective_domain(c, dom - 1)]);
                }
                ref_cache_record(c, ci, kc, dom, valid ? &rr : NULL);
            }
            kc->t_reference_s = kbv_now() - t_ref;
            if (!valid) continue;
            if (!c->o->candidate) {
                ref_runs_free(&rr);
                continue;
            }
            if (candidate_case(c, &cand, ci, kDistCode[di], dom, kc->seed, &rr, kc, err)) {
                ref_runs_free(&rr);
                cand_failed = 1;
                break;
            }
            if (kc->passed && di > 0 && c->fresh_ci < 0)
                c->fresh_ci = ci, c->fresh_dist = kDistCode[di], c->fresh_dom = dom, c->fresh_seed = kc->seed;
            /* The first two passed cases are the timing's input sets (their oracles re-check
             * the timed outputs). */
            if (kc->passed && nkept < 2 && !rr.mutates_inputs) {
                kept[nkept].rr = rr;
                kept[nkept].ci = ci, kept[nkept].dist = kDistCode[di], kept[nkept].dom = dom, kept[nkept].seed = kc->seed;
                nkept++;
            } else {
                ref_runs_free(&rr);
            }
        }
    }
    r->phase_s[PHASE_CASES] = kbv_now() - t_phase;
    if (!cand_failed && r->status != KBV_PROBLEM_ERROR) ref_cache_publish(c);
    if (r->status == KBV_PROBLEM_ERROR || cand_failed) goto done;
    if (!c->o->candidate) {
        r->status = KBV_PROBLEM_OK;
        goto done;
    }
    /* The verdict: nominal first, then the hidden distributions. */
    r->status = KBV_VERIFIED;
    r->klass = JUDGE_FP32;
    for (int i = 0; i < r->ncases; i++) {
        const kbv_case *kc = &r->cases[i];
        if (kc->skipped || !kc->evaluated) continue;
        if (kc->klass > r->klass) r->klass = kc->klass;
        if (kc->passed) continue;
        if (strcmp(kc->distribution, "nominal") == 0) r->status = KBV_INCORRECT;
        else if (r->status == KBV_VERIFIED) r->status = KBV_OVERFIT;
    }
    if (r->status == KBV_OVERFIT && !has_hack(r))
        result_add_finding(r, "distribution_sniffing", "suspect", NULL,
                           "correct on the problem's own inputs, wrong on hidden ones: the kernel fits the test distribution");
    if (has_hack(r)) r->status = KBV_HACK;
    if (r->status == KBV_VERIFIED && c->o->timing) {
        if (kbv_gpulock_set(&c->lock, 2, err) < 0) goto internal; /* nothing else on the GPU while timing */
        double t_timing = kbv_now();
        int t = run_timing(c, &ref, &cand, kept, nkept, err); /* the lock is released at done: */
        r->phase_s[PHASE_TIMING] = kbv_now() - t_timing - (r->phase_s[PHASE_AUDIT] > 0 ? r->phase_s[PHASE_AUDIT] : 0);
        if (t < 0) goto internal;
        cand_failed = t > 0;
        if (!cand_failed && has_hack(r)) r->status = KBV_HACK;
    } else if (!c->o->timing) {
        snprintf(r->perf.note, sizeof r->perf.note, "timing off (--no-timing)");
    } else {
        snprintf(r->perf.note, sizeof r->perf.note, "not timed: only verified candidates are");
    }
    goto done;
internal:
    if (!err->msg[0]) kbv_seterr(err, "out of memory");
    r->status = KBV_PROBLEM_ERROR;
    result_add_error(r, "kbv failed: %s", err->msg);
done:
    ref_cache_close(c);
    kbv_gpulock_set(&c->lock, 0, NULL);
    json_decref(rep), json_decref(fail);
    for (int k = 0; k < nkept; k++) ref_runs_free(&kept[k].rr);
    if (cand_up) finish_candidate(c, &cand, cand_failed || r->status != KBV_VERIFIED), proc_free(&cand);
    (void)0;
    if (ref_up) {
        if (r->status == KBV_PROBLEM_ERROR) {
            proc_kill(&ref);
            r->reference_stderr = proc_capture_text(&ref.err);
        } else {
            proc_finish(&ref, 5.0);
        }
        proc_free(&ref);
    }
}

/* KernelBench's protocol, in one process: fills r->standard (and, when it is the only
 * protocol, the status and cases). */
static void run_standard(eval_ctx *c, int only, kbv_err *err) {
    kbv_result *r = c->r;
    kbv_standard *st = &r->standard;
    kbv_proc w;
    json_t *fail = NULL, *rep = NULL;
    proc_result pr;
    st->ran = 1, st->trials = 5;
    kbv_result *target = r;
    kbv_status saved = r->status;
    progress(c, "%s", "standard protocol: KernelBench's check in one process");
    int s = start_and_load(c, &w, "standard", 1, NULL, &pr, &fail, err);
    if (s < 0) {
        st->status = KBV_CRASH;
        snprintf(st->detail, sizeof st->detail, "%s", err->msg);
        return;
    }
    char prefix[PATH_MAX + 32];
    snprintf(prefix, sizeof prefix, "%s/std/t", c->scratch);
    if (s == 0) {
        if (kbv_gpulock_set(&c->lock, 2, err) < 0) { /* its trials and timing alone on the GPU */
            st->status = KBV_CRASH;
            snprintf(st->detail, sizeof st->detail, "%s", err->msg);
            proc_kill(&w), proc_free(&w);
            return;
        }
        int tt = c->o->timing ? c->o->standard_trials : 0;
        pr = step(c, &w, json_pack("{s:s, s:s, s:i, s:i}", "op", "standard", "prefix", prefix, "trials", st->trials, "time_trials", tt),
                  c->o->timeout_s * (st->trials + (tt > 0)), &rep, err);
        kbv_gpulock_set(&c->lock, 0, NULL);
        if (pr != PROC_OK || !json_is_true(json_object_get(rep, "ok"))) fail = rep, rep = NULL;
    }
    if (fail || pr != PROC_OK) {
        const char *kind = json_string_value(json_object_get(fail, "kind"));
        if (kind && strcmp(kind, "problem") == 0 && only) problem_failure(c, &w, "standard check", pr, fail, err);
        else {
            candidate_failure(c, &w, s > 0 ? "load" : "standard check", pr, fail, err);
        }
        st->status = r->status;
        snprintf(st->detail, sizeof st->detail, "%s", reply_msg(fail));
        if (!only) r->status = saved; /* the verified verdict stands; the errors say what happened */
        json_decref(fail);
        proc_kill(&w), proc_free(&w);
        return;
    }
    json_t *trials = json_object_get(rep, "trials"), *tm = json_object_get(rep, "time_ms");
    if (tm) {
        st->timed = 1;
        st->time_ref_ms = json_number_value(json_object_get(tm, "reference"));
        st->time_cand_ms = json_number_value(json_object_get(tm, "candidate"));
        st->time_trials = (int)json_integer_value(json_object_get(tm, "trials"));
    }
    st->correct = 1;
    for (size_t t = 0; t < json_array_size(trials); t++) {
        const json_t *tr = json_array_get(trials, t);
        kbv_tensor *ro = NULL, *no = NULL;
        int rn = 0, nn = 0, pass = 1;
        char why[200] = "";
        if (read_outputs(json_object_get(tr, "ref"), &ro, &rn, err) < 0 || read_outputs(json_object_get(tr, "new"), &no, &nn, err) < 0) {
            pass = 0;
            snprintf(why, sizeof why, "%s", err->msg);
        } else if (rn != nn) {
            pass = 0;
            snprintf(why, sizeof why, "%d outputs, expected %d", nn, rn);
        }
        double tol = 0, worst = 0;
        for (int k = 0; pass && k < rn; k++) {
            tol = c->o->standard_tol > 0 ? c->o->standard_tol
                  : (ro[k].dtype == KBV_DT_F16 || ro[k].dtype == KBV_DT_BF16) ? 1e-2 : 1e-4;
            double m;
            pass = judge_kernelbench_allclose(&ro[k], &no[k], tol, &m, why, sizeof why);
            if (m > worst) worst = m;
        }
        st->tolerance = tol > 0 ? tol : (c->o->standard_tol > 0 ? c->o->standard_tol : 1e-4);
        if (worst > st->max_abs_err) st->max_abs_err = worst;
        st->trials_passed += pass;
        if (!pass && st->correct) snprintf(st->detail, sizeof st->detail, "trial %zu: %s", t, why);
        st->correct &= pass;
        if (only) {
            kbv_case *kc = result_add_case(target);
            if (kc) {
                snprintf(kc->distribution, sizeof kc->distribution, "nominal");
                snprintf(kc->domain, sizeof kc->domain, "kernelbench");
                kc->seed = (uint64_t)json_integer_value(json_object_get(tr, "seed"));
                kc->evaluated = 1, kc->passed = pass, kc->max_abs_err = worst, kc->atol = kc->rtol = st->tolerance;
                if (!pass) snprintf(kc->detail, sizeof kc->detail, "%s", why);
            }
        }
        free_outputs(ro, rn), free_outputs(no, nn);
    }
    json_decref(rep);
    st->status = st->correct ? KBV_VERIFIED : KBV_INCORRECT;
    if (only) {
        r->status = st->status;
        finish_candidate(c, &w, !st->correct);
    } else {
        proc_finish(&w, 5.0);
    }
    proc_free(&w);
}

int eval_inspect(const eval_opts *o, const char *path, json_t **out, kbv_err *err) {
    eval_ctx c = {.o = o, .fresh_ci = -1, .lock = KBV_GPULOCK_OFF};
    kbv_result r;
    result_init(&r);
    c.r = &r;
    *out = NULL;
    snprintf(r.device, sizeof r.device, "cpu");
    char abs[PATH_MAX];
    if (kbv_abspath(path, abs, sizeof abs, err) < 0) return -1;
    if (access(abs, R_OK) < 0) return kbv_seterr(err, "%s: %s", path, strerror(errno));
    if (kbv_mkscratch(o->scratch_base, c.scratch, sizeof c.scratch, err) < 0) return -1;
    int rc = -1;
    kbv_proc p;
    json_t *hello = NULL, *rep = NULL;
    memset(&p, 0, sizeof p);
    if (start_worker(&c, &p, "inspect", "cpu", &hello, err) == 0) {
        proc_result pr = step(&c, &p, cmd_path("inspect", abs), o->timeout_s, &rep, err);
        if (pr == PROC_OK && json_is_true(json_object_get(rep, "ok"))) {
            *out = json_incref(json_object_get(rep, "inspect"));
            rc = 0;
        } else if (pr == PROC_OK) {
            kbv_seterr(err, "%s: %s", path, reply_msg(rep));
        } else if (!err->msg[0]) {
            kbv_seterr(err, "the inspecting worker failed");
        }
        proc_finish(&p, 5.0);
        proc_free(&p);
    }
    json_decref(hello), json_decref(rep);
    if (c.env) free_env(&c);
    kbv_rmtree(c.scratch);
    result_free(&r);
    return rc;
}

static void identify(kbv_file_id *f, const char *path) {
    kbv_err e;
    if (kbv_abspath(path, f->path, sizeof f->path, &e) < 0) snprintf(f->path, sizeof f->path, "%s", path);
    kbv_stem(path, f->name, sizeof f->name);
    if (kbv_sha256_file(f->path, f->sha256, &e) < 0) f->sha256[0] = '\0';
}

const char *eval_device(const char *device) {
    if (strcmp(device, "auto") != 0) return device;
    return access("/dev/nvidiactl", F_OK) == 0 ? "cuda" : "cpu";
}

int eval_run(const eval_opts *o, kbv_result *r, kbv_err *err) {
    double t0 = kbv_now();
    eval_ctx c = {.o = o, .r = r, .fresh_ci = -1, .lock = KBV_GPULOCK_OFF};
    identify(&r->problem, o->problem);
    if (o->candidate) identify(&r->candidate, o->candidate);
    snprintf(r->protocol, sizeof r->protocol, "%s", o->protocol == EVAL_BOTH ? "both" : o->protocol == EVAL_STANDARD ? "standard" : "verified");
    if (o->have_seed) r->seed = o->seed;
    else if (kbv_random_u64(&r->seed) < 0) return kbv_seterr(err, "cannot draw a random seed");
    r->build_seed = kbv_derive_seed(r->seed, 0xB111D) & SEED_MASK;
    if (access(o->worker, X_OK) < 0) return kbv_seterr(err, "worker %s: %s (run make)", o->worker, strerror(errno));
    kbv_err why = {{0}};
    char hash[65];
    if (!r->problem.sha256[0]) {
        r->status = KBV_PROBLEM_ERROR;
        kbv_sha256_file(o->problem, hash, &why); /* why it could not be read: "PATH: reason" */
        result_add_error(r, "problem %s", why.msg);
        r->wall_s = kbv_now() - t0;
        return 0;
    }
    if (kbv_mkscratch(o->scratch_base, c.scratch, sizeof c.scratch, err) < 0) return -1;
    int rc = 0;
    char sub[PATH_MAX + 16];
    const char *subs[] = {"inputs", "ref", "cand", "std"};
    for (int i = 0; i < 4; i++) {
        snprintf(sub, sizeof sub, "%s/%s", c.scratch, subs[i]);
        if (mkdir(sub, 0700) < 0) {
            rc = kbv_seterr(err, "%s: %s", sub, strerror(errno));
            goto out;
        }
    }
    /* Resolve the device: "auto" is cuda where an NVIDIA driver is present. A worker that
     * then finds no usable GPU fails to start, and kbv says so (exit status 4). */
    snprintf(r->device, sizeof r->device, "%s", eval_device(o->device));
    if (o->candidate && !r->candidate.sha256[0]) {
        /* Nothing to run: still a verdict, and the problem is not at fault. */
        r->status = KBV_COMPILE_ERROR;
        kbv_sha256_file(o->candidate, hash, &why);
        result_add_error(r, "candidate %s", why.msg);
        goto out;
    }
    if (strcmp(r->device, "cuda") == 0 && kbv_gpulock_open(&c.lock, o->gpu_lock, err) < 0) {
        rc = -1;
        goto out;
    }
    if (o->protocol & EVAL_VERIFIED) {
        run_verified(&c, err);
        if (r->status == KBV_PROBLEM_ERROR && strncmp(r->errors.data ? r->errors.data : "", "kbv failed", 10) == 0) {
            rc = -1;
            goto out;
        }
        if (r->status == KBV_PROBLEM_ERROR) goto out;
    }
    if ((o->protocol & EVAL_STANDARD) && o->candidate) {
        double t_std = kbv_now();
        run_standard(&c, o->protocol == EVAL_STANDARD, err);
        r->phase_s[PHASE_STANDARD] = kbv_now() - t_std;
    }
out:
    if (c.lock.main_fd >= 0) r->phase_s[PHASE_GPU_WAIT] = c.lock.waited_s;
    kbv_gpulock_close(&c.lock);
    json_decref(c.plan);
    if (c.env) free_env(&c);
    if (c.scratch[0] && !o->keep_scratch) kbv_rmtree(c.scratch);
    else if (c.scratch[0]) fprintf(stderr, "kbv: scratch kept in %s\n", c.scratch);
    r->wall_s = kbv_now() - t0;
    return rc;
}
