/* session.c -- the worker processes of one evaluation: start one, send a step and decode its
 * reply, read the outputs it wrote, load and build, and map a worker's failure to a failure
 * kind (the table in eval.c's opening comment).
 *
 * Every reply passes reply_decode() here (reply.h) and nowhere else: what this file hands on
 * is typed and validated. What a step's reply means for the verdict is left to cases.c,
 * timing.c and standard.c; the status itself to verdict.c.
 */
#include "evalctx.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto.h"
#include "sandbox.h"

void eval_progress(const eval_ctx *c, const char *fmt, const char *arg) {
    if (!c->o->verbose) return;
    fprintf(stderr, "kbv: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
}

/* The worker's environment: a fixed, small set (docs/security.md says why each). home is
 * its HOME, TMPDIR and working folder; cache its compile cache. */
static int build_env(eval_ctx *c, const char *home, const char *cache, kbv_err *err) {
    static const char *pass[] = {
        "PATH", "LANG", "LC_ALL",   "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_HOME", "LD_LIBRARY_PATH", "TORCH_CUDA_ARCH_LIST",
        "CC",   "CXX",  "MAX_JOBS", "ASAN_OPTIONS",         "UBSAN_OPTIONS"};
    if (c->env) session_free_env(c);
    c->env = calloc(32, sizeof *c->env);
    if (!c->env) return kbv_seterr(err, "out of memory");
    for (size_t i = 0; i < sizeof pass / sizeof *pass; i++) {
        const char *v = getenv(pass[i]);
        if (v && asprintf(&c->env[c->nenv], "%s=%s", pass[i], v) >= 0) c->nenv++;
    }
    if (!getenv("PATH") && asprintf(&c->env[c->nenv], "PATH=/usr/local/bin:/usr/bin:/bin") >= 0) c->nenv++;
    const char *fixed[][2] = {{"TORCH_EXTENSIONS_DIR", cache}, {"HOME", home},
                              {"TMPDIR", home},                {"PYTHONHASHSEED", "0"},
                              {"PYTHONDONTWRITEBYTECODE", "1"}, {"KBV_BUILD", c->o->build_fast ? "fast" : "stock"}};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        if (asprintf(&c->env[c->nenv], "%s=%s", fixed[i][0], fixed[i][1]) < 0) return kbv_seterr(err, "out of memory");
        c->nenv++;
    }
    return 0;
}

void session_free_env(eval_ctx *c) {
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

int session_cache_base(const eval_opts *o, const char *scratch, char *out, size_t n) {
    if (o->cache_dir) snprintf(out, n, "%s", o->cache_dir);
    else if (getenv("XDG_CACHE_HOME")) snprintf(out, n, "%s/kbv/torch_extensions", getenv("XDG_CACHE_HOME"));
    else if (getenv("HOME")) snprintf(out, n, "%s/.cache/kbv/torch_extensions", getenv("HOME"));
    else return snprintf(out, n, "%s/torch_extensions", scratch ? scratch : "/nonexistent"), 0;
    return 1;
}

/* The compile cache of a role: one folder per candidate (by its bytes), so that no candidate
 * can write what another loads. */
void session_cache_folder(const char *base, const char *sha, char *out, size_t n) { snprintf(out, n, "%s/%.16s", base, sha); }

static void cache_dir(const eval_ctx *c, const char *role, char *out, size_t n) {
    char base[PATH_MAX];
    session_cache_base(c->o, c->scratch, base, sizeof base);
    const char *sha = c->r->candidate.sha256;
    if (strcmp(role, "reference") == 0 || !sha[0]) snprintf(out, n, "%s/reference", base);
    else session_cache_folder(base, sha, out, n);
    make_dirs(out);
}

/* The sandbox of a worker in role (docs/security.md): writes only in its own folder and its
 * compile cache; reads only of the system's and Python's folders (sandbox.c), its problem
 * file, its candidate's file and the shared inputs; for a candidate, no reads of the
 * reference's outputs, the results database or other evaluations' scratch folders even
 * where these lie beneath a readable folder, and no capabilities. */
static int worker_sandbox(eval_ctx *c, const char *role, const char *home, const char *cache, kbv_sandbox *sb, kbv_err *err) {
    kbv_sandbox_spec sp = {.enable = c->o->sandbox, .gpu = strcmp(c->r->device, "cuda") == 0, .worker = c->o->worker};
    char ref[PATH_MAX + 8], std[PATH_MAX + 8], dbx[3][PATH_MAX + 16], base[PATH_MAX], inputs[PATH_MAX + 8];
    char src_dir[sizeof c->r->candidate.path];
    int cand = strcmp(role, "reference") != 0;
    sp.writable[sp.nwritable++] = cand ? home : c->scratch; /* the reference also writes the shared inputs (weights) */
    sp.writable[sp.nwritable++] = cache;
    /* kbv's precompiled headers (docs/build.md), beside the candidates' folders: read only */
    char pch[PATH_MAX + 8];
    if (c->o->build_fast && cand && session_cache_base(c->o, c->scratch, pch, PATH_MAX)) {
        strcat(pch, "/pch");
        if (access(pch, R_OK) == 0) sp.readable[sp.nreadable++] = pch;
    }
    if (c->o->pycache[0]) sp.readable[sp.nreadable++] = c->o->pycache; /* kbv's bytecode tree: read only */
    if (c->r->problem.path[0]) sp.readable[sp.nreadable++] = c->r->problem.path;
    if (cand) {
        if (c->r->candidate.path[0]) {
            sp.readable[sp.nreadable++] = c->r->candidate.path;
            snprintf(src_dir, sizeof src_dir, "%s", c->r->candidate.path);
            char *slash = strrchr(src_dir, '/');
            if (slash && slash != src_dir) *slash = '\0', sp.source_dir = src_dir; /* a module beside it may be imported */
        }
        snprintf(inputs, sizeof inputs, "%s/inputs", c->scratch);
        sp.readable[sp.nreadable++] = inputs;
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
    long long budget = cand ? session_scratch_budget(c) : 0; /* a file larger than its budget never fits */
    sp.max_file_bytes = budget > 0 && budget < (64LL << 30) ? budget : 64LL << 30;
    sp.max_data_bytes = c->o->max_memory_bytes;
    sp.max_memcg_bytes = c->o->max_memory_bytes;
    sp.max_cpu_s = 6 * 3600;
    sp.max_procs = 4096;
    return sandbox_prepare(sb, &sp, err);
}
/* Whether a worker of sandbox sb gets kbv's bytecode tree (session_prepare_pycache): only one
 * that Landlock keeps from writing it, since bytecode is code and the reference worker reads
 * the tree too. */
static int gets_pycache(const eval_ctx *c, const kbv_sandbox *sb) { return c->o->pycache[0] && sb->ruleset_fd >= 0; }

/* The candidate's worker's confinement in the result: sandbox_describe's, its memory cgroup
 * and its folder's budget; the most its folders held (measured) stays from a worker before. */
static void describe_candidate(eval_ctx *c, const kbv_sandbox *sb, const kbv_proc *p, long long budget) {
    json_int_t peak = json_integer_value(json_object_get(c->r->sandbox, "scratch_peak_bytes"));
    json_t *o = sandbox_describe(sb, p->namespaces);
    json_object_set_new(o, "memory_cgroup", sandbox_memcg_describe(&p->memcg));
    /* where its Python's bytecode came from: kbv's tree (session_prepare_pycache), or the
     * installed packages' own (compiled from source where they have none) */
    json_object_set_new(o, "pycache", gets_pycache(c, sb) ? json_string(c->o->pycache) : json_null());
    json_object_set_new(o, "scratch_budget_bytes", budget > 0 ? json_integer((json_int_t)budget) : json_null());
    json_object_set_new(o, "scratch_peak_bytes", json_integer(peak));
    json_decref(c->r->sandbox);
    c->r->sandbox = o;
}

/* The most a watched worker's folder held, as measured so far, into the result. */
static void record_scratch_peak(eval_ctx *c, const kbv_proc *p) {
    if (!p->scratch.dir[0] || !c->r->sandbox) return;
    if (p->scratch.peak > json_integer_value(json_object_get(c->r->sandbox, "scratch_peak_bytes")))
        json_object_set_new(c->r->sandbox, "scratch_peak_bytes", json_integer((json_int_t)p->scratch.peak));
}

static void profile_add(eval_ctx *c, const kbv_proc *p, const char *op, const char *key, double s);

int session_start(eval_ctx *c, kbv_proc *p, const char *role, const char *device, kbv_err *err) {
    char *argv[] = {(char *)c->o->worker, "--device", (char *)device, "--role", (char *)role, NULL, NULL};
    if (c->o->sandbox && strcmp(role, "reference") == 0 && !sandbox_skips("dumpable")) argv[5] = "--private";
    const char *dir = strcmp(role, "reference") == 0 ? "ref" : strcmp(role, "candidate") == 0 ? "cand" : strcmp(role, "standard") == 0 ? "std" : NULL;
    char home[PATH_MAX + 8], cache[PATH_MAX];
    snprintf(home, sizeof home, "%s%s%s", c->scratch, dir ? "/" : "", dir ? dir : "");
    cache_dir(c, role, cache, sizeof cache);
    kbv_sandbox sb;
    if (build_env(c, home, cache, err) < 0 || worker_sandbox(c, role, home, cache, &sb, err) < 0) return -1;
    if (gets_pycache(c, &sb) && c->nenv < 31 && asprintf(&c->env[c->nenv], "KBV_PYCACHE=%s", c->o->pycache) >= 0) c->nenv++;
    double t0 = kbv_now();
    int rc = proc_spawn(p, argv, c->env, home, c->o->capture_cap, &sb, err);
    if (rc == 0) snprintf(p->role, sizeof p->role, "%s", role);
    int runs_candidate = strcmp(role, "candidate") == 0 || strcmp(role, "standard") == 0;
    long long budget = runs_candidate ? session_scratch_budget(c) : 0;
    if (rc == 0 && runs_candidate) proc_watch_scratch(p, home, budget);
    if (rc == 0 && strcmp(role, "reference") != 0) describe_candidate(c, &sb, p, budget);
    sandbox_free(&sb);
    if (rc < 0) return -1;
    json_t *msg = NULL;
    kbv_reply hello;
    memset(&hello, 0, sizeof hello);
    proc_result pr = proc_request(p, NULL, c->o->start_timeout_s, &msg, err);
    if (pr == PROC_OK && reply_decode_hello(msg, &hello, err) < 0) pr = PROC_PROTOCOL;
    json_decref(msg);
    if (pr == PROC_OK && hello.ok) {
        /* its start (python, torch's import, the device) as a step of its own */
        profile_add(c, p, "start", "s", kbv_now() - t0);
        double cpu = proc_cpu_seconds(p);
        if (cpu >= 0) profile_add(c, p, "start", "cpu_s", cpu);
        if (strcmp(role, "reference") == 0) {
            const char *s = hello.hello.python;
            if (s[0]) snprintf(c->r->python, sizeof c->r->python, "%.*s", (int)strcspn(s, " "), s);
            if (hello.hello.torch[0]) snprintf(c->r->torch, sizeof c->r->torch, "%s", hello.hello.torch);
            if (hello.hello.gpu[0]) snprintf(c->r->gpu, sizeof c->r->gpu, "%s", hello.hello.gpu);
        }
        reply_free(&hello);
        return 0;
    }
    char st[128] = "";
    if (pr == PROC_DIED) proc_describe_status(p->wstatus, st, sizeof st);
    if (pr == PROC_OK) {
        kbv_seterr(err, "%s worker failed to start: %s", role, hello.message);
    } else if (pr == PROC_DIED) {
        kbv_seterr(err, "%s worker %s before it was ready", role, st);
    } else {
        kbv_wraperr(err, "%s worker did not start", role);
    }
    reply_free(&hello);
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

/* Add seconds s to field key of the step profile's entry "role.op" (r->steps). */
static void profile_add(eval_ctx *c, const kbv_proc *p, const char *op, const char *key, double s) {
    char name[64];
    snprintf(name, sizeof name, "%s.%s", p->role[0] ? p->role : "worker", op ? op : "?");
    if (!c->r->steps) c->r->steps = json_object();
    json_t *e = json_object_get(c->r->steps, name);
    if (!e) json_object_set_new(c->r->steps, name, e = json_pack("{s:i, s:f}", "n", 0, "s", 0.0));
    if (!e) return;
    if (strcmp(key, "s") == 0) json_object_set_new(e, "n", json_integer(json_integer_value(json_object_get(e, "n")) + 1));
    double v = json_number_value(json_object_get(e, key)) + s;
    if (strcmp(key, "cpu_s") == 0) v = round(v * 1000) / 1000; /* (the kernel counts in ticks of 10 ms) */
    json_object_set_new(e, key, json_real(v));
}

proc_result session_step(eval_ctx *c, kbv_proc *p, json_t *cmd, double timeout, kbv_reply *rep, kbv_err *err) {
    char op[32];
    snprintf(op, sizeof op, "%s", json_string_value(json_object_get(cmd, "op")) ?: "?");
    memset(rep, 0, sizeof *rep);
    json_t *msg = NULL;
    /* A nonce from the kernel's random source (not the run seed: splitmix is invertible), which
     * the reply must carry: a line another writer on fd 4 put ahead of the worker's answers no
     * command, and every reply after it would answer the command before its own. */
    char nonce[17];
    uint64_t nv = 0;
    if (getrandom(&nv, sizeof nv, 0) != (ssize_t)sizeof nv) nv = kbv_mix64((uint64_t)(kbv_now() * 1e9) ^ (uint64_t)getpid());
    snprintf(nonce, sizeof nonce, "%016llx", (unsigned long long)nv);
    if (json_object_set_new(cmd, "nonce", json_string(nonce)) < 0) {
        json_decref(cmd);
        kbv_seterr(err, "out of memory");
        return PROC_ERROR;
    }
    /* The worker's CPU time over the command (its builds' compilers included), for every
     * command but timing's (bench: kbv's clock around those calls stays as it was). */
    double cpu0 = strncmp(op, "bench", 5) != 0 ? proc_cpu_seconds(p) : -1;
    /* Shared GPU work holds the lock for this command only (util.h); the wait for it is not
     * the command's time. */
    if (kbv_gpulock_enter(&c->lock, err) < 0) {
        json_decref(cmd);
        return PROC_ERROR;
    }
    double t0 = kbv_now();
    proc_result pr = proc_request(p, cmd, timeout, &msg, err);
    double t1 = kbv_now();
    kbv_gpulock_leave(&c->lock);
    json_decref(cmd);
    double cpu1 = cpu0 >= 0 ? proc_cpu_seconds(p) : -1;
    record_scratch_peak(c, p);
    profile_add(c, p, op, "s", t1 - t0);
    if (cpu0 >= 0 && cpu1 >= cpu0) profile_add(c, p, op, "cpu_s", cpu1 - cpu0);
    if (pr != PROC_OK) return pr;
    int rc = reply_decode(op, msg, rep, err);
    json_decref(msg);
    if (rc == 0 && strcmp(rep->nonce, nonce) != 0) {
        kbv_seterr(err, "a reply that does not answer the %s command (%s nonce): another writer on the control pipe, or replies out of step", op,
                   rep->nonce[0] ? "another" : "no");
        reply_free(rep);
        rc = -1;
    }
    if (rc < 0) return PROC_PROTOCOL;
    /* What the worker's guard saw (src/worker/guard.h) becomes a finding, whichever worker saw
     * it (the candidate's, or the standard protocol's): the verdict counts them all. */
    for (int i = 0; i < rep->nguard; i++)
        result_add_finding(c->r, rep->guard[i].id,
                           json_pack("{s:s, s:s, s:s}", "worker", p->role, "step", rep->guard[i].step, "detail", rep->guard[i].detail), "%s",
                           rep->guard[i].detail);
    /* the worker's own split (a forward's "wall_s" is its compute) */
    for (int i = 0; i < rep->ntimes; i++)
        profile_add(c, p, op, strcmp(rep->times[i].key, "wall_s") == 0 ? "compute_s" : rep->times[i].key, rep->times[i].s);
    return PROC_OK;
}

int session_call(eval_ctx *c, kbv_proc *p, json_t *cmd, double timeout, kbv_reply *rep, proc_result *pr, kbv_err *err) {
    *pr = session_step(c, p, cmd, timeout, rep, err);
    return *pr == PROC_OK && rep->ok ? 0 : 1;
}

const char *session_reply_msg(const kbv_reply *rep) { return rep && rep->message[0] ? rep->message : "(no message)"; }

static void add_traceback(kbv_result *r, const kbv_reply *rep) {
    if (rep && rep->traceback && *rep->traceback) result_add_error(r, "%s", rep->traceback);
}

/* Whether a candidate's folder (its worker's, the standard protocol's) holds more than its
 * budget now: 1 with how much. */
static int candidate_over_budget(const eval_ctx *c, char *why, size_t n) {
    static const char *const dirs[] = {"cand", "std"};
    long long budget = session_scratch_budget(c);
    for (int i = 0; budget > 0 && i < 2; i++) {
        char dir[PATH_MAX + 8];
        proc_usage u;
        snprintf(dir, sizeof dir, "%s/%s", c->scratch, dirs[i]);
        if (proc_tree_usage(dir, &u) == 0 && proc_usage_over(&u, budget, why, n)) return 1;
    }
    return 0;
}

/* A worker failed while kbv's own resources were exhausted: kbv's failure, said so (1);
 * unless a candidate's folder holds more than its budget: then the candidate's (2). */
static int exhausted_failure(eval_ctx *c, const char *who, const char *what) {
    char why[400], over[200];
    if (!session_exhausted(c, why, sizeof why)) return 0;
    if (candidate_over_budget(c, over, sizeof over)) {
        result_add_error(c->r, "%s %s failed while %s: the candidate's worker %s", who, what, why, over);
        return 2;
    }
    result_add_error(c->r, "%s %s failed while %s: kbv's own exhaustion, not a verdict (kbv run --resume runs it again)", who, what, why);
    return 1;
}

/* The candidate's worker went past one of its limits: its folder's budget (kbv killed it for
 * that, or finds it over now that a step failed: ENOSPC, EDQUOT, EFBIG or anything else), or
 * its memory cgroup's, where the kernel's OOM killer ended it. 1 with the error added. */
static int limit_failure(eval_ctx *c, kbv_proc *p, const char *what, proc_result pr) {
    if (p->scratch.over || proc_scratch_measure(p)) {
        record_scratch_peak(c, p);
        result_add_error(c->r, "candidate worker during %s: it %s%s", what, p->scratch.why, p->scratch.over ? "; kbv killed it" : "");
        return 1;
    }
    sandbox_memcg_read(&p->memcg);
    if (pr != PROC_DIED || p->memcg.oom_kills <= 0) return 0;
    char st[128] = "stopped answering";
    if (p->exited) proc_describe_status(p->wstatus, st, sizeof st);
    result_add_error(c->r, "candidate worker %s during %s: the kernel's OOM killer ended it at its memory cgroup's limit of %.2f GiB (--max-memory; %s %lld)",
                     st, what, (double)p->memcg.limit_bytes / (double)(1LL << 30), p->memcg.version == 2 ? "memory.events oom_kill" : "memory.oom_control oom_kill",
                     p->memcg.oom_kills);
    return 1;
}

/* kbv itself failed during a worker's step (PROC_ERROR: no memory or descriptor left, a system
 * call of kbv's): kbv's failure, whichever worker it talked to. */
static kbv_failure own_failure(eval_ctx *c, const char *who, const char *what, const kbv_err *err) {
    result_add_error(c->r, "kbv failed during %s %s: %s (kbv's own failure, not a verdict; kbv run --resume runs it again)", who, what, err->msg);
    return FAILURE_KBV;
}

kbv_failure session_problem_failure(eval_ctx *c, kbv_proc *p, const char *what, proc_result pr, const kbv_reply *rep, kbv_err *err) {
    kbv_result *r = c->r;
    char st[128];
    int x = exhausted_failure(c, "the reference's", what);
    if (x) return x == 1 ? FAILURE_KBV : FAILURE_LIMIT;
    if (pr == PROC_ERROR) return own_failure(c, "the reference's", what, err);
    switch (pr) {
    case PROC_OK:
        result_add_error(r, "reference %s failed: %s", what, session_reply_msg(rep));
        add_traceback(r, rep);
        break;
    case PROC_TIMEOUT: result_add_error(r, "reference %s timed out after %.0f s", what, c->o->timeout_s); break;
    case PROC_DIED:
        proc_describe_status(p->wstatus, st, sizeof st);
        result_add_error(r, "reference worker %s during %s", p->killed_why[0] ? p->killed_why : p->exited ? st : "stopped answering", what);
        sandbox_memcg_read(&p->memcg);
        if (p->memcg.oom_kills > 0)
            result_add_error(r, "the kernel's OOM killer ended the reference's worker at its memory cgroup's limit of %.2f GiB (--max-memory)",
                             (double)p->memcg.limit_bytes / (double)(1LL << 30));
        break;
    default: result_add_error(r, "reference %s: %s", what, err->msg); break;
    }
    return FAILURE_PROBLEM;
}

kbv_failure session_candidate_failure(eval_ctx *c, kbv_proc *p, const char *what, proc_result pr, const kbv_reply *rep, kbv_err *err) {
    kbv_result *r = c->r;
    kbv_failure f = FAILURE_CRASH;
    char st[128];
    if (limit_failure(c, p, what, pr)) return FAILURE_LIMIT;
    int x = exhausted_failure(c, "the candidate's", what);
    if (x) return x == 1 ? FAILURE_KBV : FAILURE_LIMIT;
    if (pr == PROC_ERROR) return own_failure(c, "the candidate's", what, err);
    switch (pr) {
    case PROC_OK: {
        const char *kind = rep ? rep->kind : "";
        if (strcmp(kind, "load") == 0) f = FAILURE_COMPILE;
        else if (strcmp(kind, "exit") == 0) {
            f = FAILURE_CRASH;
            result_add_finding(r, FIND_WORKER_EXIT, NULL, "the candidate raised SystemExit during %s", what);
        } else f = FAILURE_RUNTIME;
        result_add_error(r, "candidate %s failed (%s): %s", what, kind, session_reply_msg(rep));
        add_traceback(r, rep);
        break;
    }
    case PROC_TIMEOUT:
        f = FAILURE_TIMEOUT;
        result_add_error(r, "candidate %s did not finish within %.0f s; worker killed", what,
                         strcmp(what, "load") == 0 ? c->o->load_timeout_s : c->o->timeout_s);
        break;
    case PROC_DIED:
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
        result_add_finding(r, FIND_PROTOCOL_VIOLATION, NULL, "the candidate's process wrote on kbv's control pipe: %s", err->msg);
        result_add_error(r, "candidate worker broke the control protocol during %s: %s", what, err->msg);
        break;
    default: result_add_error(r, "candidate %s: %s", what, err->msg); break;
    }
    return f;
}

/* ---- outputs ------------------------------------------------------------------------------- */

int session_exhausted(const eval_ctx *c, char *why, size_t n) {
    struct statvfs v;
    if (!c->scratch[0] || statvfs(c->scratch, &v) < 0) return 0;
    long long avail = (long long)v.f_bavail * (long long)v.f_frsize, size = (long long)v.f_blocks * (long long)v.f_frsize;
    long long files = (long long)v.f_favail;
    if (avail >= (64LL << 20) && avail >= size / 200 && (v.f_files == 0 || files >= 64)) return 0;
    snprintf(why, n, "kbv's scratch file system (%s) has %lld MiB and %lld inodes free", kbv_scratch_base(c->o->scratch_base), avail >> 20, files);
    return 1;
}

long long session_scratch_budget(const eval_ctx *c) {
    if (c->o->max_scratch_bytes >= 0) return c->o->max_scratch_bytes;
    if (!c->probe.ninputs) return 16LL << 30;
    long long in = 0;
    for (int j = 0; j < c->probe.ninputs; j++) {
        const reply_probe_input *x = &c->probe.inputs[j];
        kbv_dtype dt = kbv_dtype_from_name(x->dtype);
        if (!x->is_tensor || dt == KBV_DT_INVALID) continue;
        long long n = (long long)kbv_dtype_size(dt);
        for (int d = 0; d < x->ndim && n > 0; d++) n = x->shape[d] > 0 && n <= (1LL << 50) / x->shape[d] ? n * x->shape[d] : 0;
        if (n > 0 && in < (1LL << 50)) in += n;
    }
    return (4LL << 30) + 16 * (in < (1LL << 50) ? in : 1LL << 50);
}

long long session_max_file_bytes(const eval_ctx *c) { return c->o->max_memory_bytes > 0 ? c->o->max_memory_bytes : 64LL << 30; }

int session_read_outputs(reply_values *values, const out_spec *spec, kbv_tensor **outs, int *n, kbv_err *err) {
    int k = values->n;
    *outs = calloc(k ? (size_t)k : 1, sizeof **outs);
    *n = k;
    if (!*outs) return kbv_seterr(err, "out of memory");
    for (int j = 0; j < k; j++) {
        reply_value *d = &values->v[j];
        if (d->is_tensor) {
            char path[PATH_MAX];
            if (spec->prefix) { /* the name kbv made, and no other */
                if (snprintf(path, sizeof path, "%s%d.kbt", spec->prefix, j) >= (int)sizeof path) return kbv_seterr(err, "output path too long");
                if (strcmp(path, d->path) != 0) return kbv_seterr(err, "output %d names a file kbv did not name for it", j);
            } else {
                snprintf(path, sizeof path, "%s", d->path);
            }
            long long cap = spec->like ? (j < spec->nlike ? (long long)spec->like[j].nbytes : 0) : spec->max_bytes;
            errno = 0;
            int rc = kbv_tensor_load_capped(&(*outs)[j], path, cap, err);
            if (rc == -1 && (errno == EMFILE || errno == ENFILE || errno == ENOMEM)) rc = -3; /* kbv could not open it: its own exhaustion */
            if (rc == -2 && spec->consume) unlink(path);
            if (rc < 0) {
                if (rc == -3) return -3;
                if (rc == -2 && spec->like && j < spec->nlike)
                    kbv_seterr(err, "output %d holds more data than the reference's (%lld bytes): not read", j, cap);
                else if (rc == -2 && spec->like) kbv_seterr(err, "output %d: the reference returns %d output(s)", j, spec->nlike);
                return rc;
            }
            if (spec->keep) {
                char link_to[PATH_MAX + 64];
                const char *base = strrchr(path, '/');
                snprintf(link_to, sizeof link_to, "%s/%s", spec->keep, base ? base + 1 : path);
                unlink(link_to); /* an earlier domain's run of the same case */
                if (link(path, link_to) < 0) return kbv_seterr(err, "keeping %s for reuse: %s", path, strerror(errno));
                if (spec->kept_bytes) *spec->kept_bytes += (long long)(*outs)[j].nbytes;
                if (spec->consume) unlink(path);
                snprintf(d->path, sizeof d->path, "%s", link_to);
                continue;
            }
            if (spec->consume) unlink(path);
        } else {
            /* A number: keep it as a 0-d float64 tensor so one judge serves both. */
            int64_t none[1] = {0};
            if (kbv_tensor_alloc(&(*outs)[j], KBV_DT_F64, 0, none, err) < 0) return -1;
            ((double *)(*outs)[j].data)[0] = d->value;
        }
    }
    return 0;
}

void session_free_outputs(kbv_tensor *outs, int n) {
    for (int j = 0; outs && j < n; j++) kbv_tensor_free(&outs[j]);
    free(outs);
}

void run_free(run_out *r) {
    session_free_outputs(r->t, r->n);
    reply_free(&r->rep);
    memset(r, 0, sizeof *r);
}

int run_copy_outputs(run_out *dst, const run_out *src) {
    dst->n = src->n;
    dst->t = calloc((size_t)src->n + 1, sizeof *dst->t);
    if (!dst->t) return -1;
    for (int j = 0; j < src->n; j++) {
        if (kbv_tensor_copy(&dst->t[j], &src->t[j]) < 0) return -1;
    }
    /* the facts of outputs left in the worker (kbv check) */
    reply_free(&dst->rep);
    dst->rep.has_count = src->rep.has_count, dst->rep.count = src->rep.count;
    if (src->rep.nfacts) {
        dst->rep.facts = calloc((size_t)src->rep.nfacts, sizeof *dst->rep.facts);
        if (!dst->rep.facts) return -1;
        memcpy(dst->rep.facts, src->rep.facts, sizeof *dst->rep.facts * (size_t)src->rep.nfacts);
        dst->rep.nfacts = src->rep.nfacts;
    }
    return 0;
}

int run_out_count(const run_out *o) { return o->rep.has_count ? (int)o->rep.count : o->n; }

int run_out_facts(const run_out *o, int k, judge_facts *f) {
    if (k < o->n) return judge_facts_of(&o->t[k], f), 0;
    if (k >= o->rep.nfacts) return -1;
    f->nonfinite = o->rep.facts[k].nonfinite;
    f->constant = o->rep.facts[k].constant;
    f->value = o->rep.facts[k].value;
    return 0;
}

void ref_runs_free(ref_runs *rr) {
    run_free(&rr->oracle), run_free(&rr->tf32), run_free(&rr->strict);
    reply_prints_free(&rr->prints);
    free(rr->calib);
    memset(rr, 0, sizeof *rr);
}

proc_result session_run(eval_ctx *c, kbv_proc *p, json_t *cmd, double timeout, const kbv_tensor *like, int nlike, run_out *out, kbv_reply *fail,
                        kbv_err *err) {
    char op[32], prefix[PATH_MAX];
    snprintf(op, sizeof op, "%s", json_string_value(json_object_get(cmd, "op")) ?: "?");
    snprintf(prefix, sizeof prefix, "%s", json_string_value(json_object_get(cmd, "prefix")) ?: "");
    memset(fail, 0, sizeof *fail);
    kbv_reply rep;
    proc_result pr = session_step(c, p, cmd, timeout, &rep, err);
    if (pr != PROC_OK) return pr;
    if (!rep.ok) {
        *fail = rep;
        return PROC_OK;
    }
    out->rep = rep;
    double t0 = kbv_now();
    out_spec spec = {.prefix = prefix,
                     .like = like,
                     .nlike = nlike,
                     .max_bytes = session_max_file_bytes(c),
                     .keep = c->cache.keep,
                     .consume = 1,
                     .kept_bytes = &c->cache.bytes};
    if (out->rep.values.present) {
        int rc = session_read_outputs(&out->rep.values, &spec, &out->t, &out->n, err);
        if (rc < 0) {
            out->oversize = rc == -2, out->kbv_side = rc == -3;
            return PROC_ERROR;
        }
    }
    profile_add(c, p, op, "load_s", kbv_now() - t0);
    return PROC_OK;
}

/* ---- loading ------------------------------------------------------------------------------- */

static json_t *cmd_path(const char *op, const char *path) { return json_pack("{s:s, s:s}", "op", op, "path", path); }

int session_load(eval_ctx *c, kbv_proc *p, const char *role, int candidate, kbv_reply *load, proc_result *prp, kbv_reply *fail, kbv_err *err) {
    kbv_reply rep;
    memset(fail, 0, sizeof *fail);
    if (load) memset(load, 0, sizeof *load);
    if (session_start(c, p, role, c->r->device, err) < 0) return -1;
    proc_result pr = session_step(c, p, cmd_path("load_problem", c->r->problem.path), c->o->timeout_s, &rep, err);
    if (pr == PROC_OK && rep.ok && candidate) {
        reply_free(&rep);
        /* The source first, statically (its findings are at most suspect). */
        pr = session_step(c, p, cmd_path("inspect", c->r->candidate.path), c->o->timeout_s, &rep, err);
        if (pr == PROC_OK && rep.ok) {
            json_decref(c->r->inspect);
            c->r->inspect = json_incref(rep.inspect.doc);
            for (int i = 0; i < rep.inspect.nfindings; i++)
                if (finding_catalog[rep.inspect.findings[i].id].severity != SEV_HACK)
                    result_add_finding(c->r, rep.inspect.findings[i].id, json_pack("{s:I}", "line", (json_int_t)rep.inspect.findings[i].line), "%s",
                                       rep.inspect.findings[i].detail);
            free(c->kernels);
            c->kernels = rep.inspect.kernels, c->nkernels = rep.inspect.nkernels;
            rep.inspect.kernels = NULL, rep.inspect.nkernels = 0;
        }
        if (pr != PROC_OK) {
            *prp = pr;
            *fail = rep;
            return 1;
        }
        reply_free(&rep);
        eval_progress(c, "%s", "loading (and compiling) the candidate");
        pr = session_step(c, p, cmd_path("load_candidate", c->r->candidate.path), c->o->load_timeout_s, &rep, err);
    }
    *prp = pr;
    if (pr == PROC_OK && rep.ok) {
        if (load) *load = rep;
        else reply_free(&rep);
        return 0;
    }
    if (pr == PROC_OK) *fail = rep;
    return 1;
}

int session_build(eval_ctx *c, kbv_proc *p, int candidate, proc_result *prp, kbv_reply *fail, kbv_err *err) {
    kbv_reply rep;
    memset(fail, 0, sizeof *fail);
    *prp = session_step(
        c, p, json_pack("{s:s, s:s, s:I}", "op", "build", "model", candidate ? "candidate" : "reference", "seed", (json_int_t)c->r->build_seed),
        c->o->timeout_s, &rep, err);
    if (*prp == PROC_OK && rep.ok) {
        /* What the model holds after construction (weights, caches, workspaces). */
        if (rep.has_persistent) *(candidate ? &c->r->memory.pers_cand : &c->r->memory.pers_ref) = rep.persistent_bytes;
        if (rep.has_torch_persistent) *(candidate ? &c->r->memory.torch_pers_cand : &c->r->memory.torch_pers_ref) = rep.torch_persistent_bytes;
        reply_free(&rep);
        return 0;
    }
    if (*prp == PROC_OK) *fail = rep;
    return 1;
}

/* The last n lines of text (a pointer into it). */
static const char *tail_lines(const char *text, int n) {
    const char *p = text + strlen(text);
    while (p > text && p[-1] == '\n') p--;
    for (int lines = 0; p > text; p--)
        if (p[-1] == '\n' && ++lines == n) break;
    return p;
}

void session_finish_candidate(eval_ctx *c, kbv_proc *cand, int failed) {
    kbv_result *r = c->r;
    /* Its folder once more: what a step too short for the once-a-second watch left there. */
    if (proc_scratch_measure(cand) && c->failure == FAILURE_NONE) {
        c->failure = FAILURE_LIMIT, failed = 1;
        result_add_error(r, "candidate worker at its end: it %s", cand->scratch.why);
    }
    record_scratch_peak(c, cand);
    if (failed) proc_kill(cand);
    else proc_finish(cand, 5.0);
    free(r->candidate_stdout), free(r->candidate_stderr);
    r->candidate_stdout = proc_capture_text(&cand->out);
    r->candidate_stderr = proc_capture_text(&cand->err);
    if (failed && c->failure == FAILURE_CRASH && r->candidate_stderr && *r->candidate_stderr)
        result_add_error(r, "last lines of the candidate's stderr:\n%s", tail_lines(r->candidate_stderr, 30));
    if (cand->out.total > cand->out.head.len + cand->out.tail_len)
        result_add_finding(r, FIND_OUTPUT_TRUNCATED, NULL, "the candidate wrote %zu bytes on stdout; kept the first and last", cand->out.total);
}

/* Start kbv-worker --build-pch beneath the shared compile cache: its pid in *pid, 0 or -1 (err
 * set). nicer: how much nicer than kbv it runs, in a process group of its own (its compilers
 * too: kill(-pid) stops them all); 0: as kbv, in kbv's group. */
int session_spawn_pch(const eval_opts *o, int nicer, pid_t *pid, kbv_err *err) {
    char base[PATH_MAX], root[PATH_MAX + 8];
    if (!session_cache_base(o, NULL, base, sizeof base))
        return kbv_seterr(err, "the compile cache is per evaluation (no --cache-dir, HOME or XDG_CACHE_HOME): no shared precompiled header");
    snprintf(root, sizeof root, "%s/pch", base);
    make_dirs(root);
    /* kbv's own step, no candidate's: the worker run with no sandbox and no candidate, its
     * output on kbv's own (building takes minutes the first time) */
    char *argv[] = {(char *)o->worker, "--build-pch", root, NULL};
    fflush(NULL); /* nothing buffered is written twice */
    *pid = fork();
    if (*pid < 0) return kbv_seterr(err, "fork: %s", strerror(errno));
    if (*pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives kbv */
        if (nicer) setpgid(0, 0);         /* in the background: a group of its own, which kbv stops whole */
        if (nicer && kbv_nicer(nicer) < 0) fprintf(stderr, "kbv: --build-pch at kbv's own priority (setpriority: %s)\n", strerror(errno));
        execv(o->worker, argv);
        fprintf(stderr, "kbv: %s --build-pch: %s\n", o->worker, strerror(errno));
        _exit(127);
    }
    if (nicer) setpgid(*pid, *pid); /* as the child does: whichever runs first, kill(-pid) finds the group */
    return 0;
}

int session_pch_status(const eval_opts *o, int st, kbv_err *err) {
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return kbv_seterr(err, "%s --build-pch failed (its output above)", o->worker);
    return 0;
}

int session_prepare_pch(const eval_opts *o, kbv_err *err) {
    pid_t pid;
    if (session_spawn_pch(o, 0, &pid, err) < 0) return -1;
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return kbv_seterr(err, "waitpid: %s", strerror(errno));
    return session_pch_status(o, st, err);
}

void session_prepare_pycache(eval_opts *o) {
    char base[PATH_MAX], root[PATH_MAX + 16];
    o->pycache[0] = '\0';
    if (o->pycache_mode < 0 || !o->sandbox || sandbox_skips("landlock") || !session_cache_base(o, NULL, base, sizeof base)) return;
    snprintf(root, sizeof root, "%s/pycache", base);
    make_dirs(root);
    /* kbv's own step, no candidate's: the worker with no sandbox; its notes go to kbv's stderr */
    char *argv[] = {(char *)o->worker, "--build-pycache", root, o->pycache_mode > 0 ? "always" : NULL, NULL};
    kbv_buf out, notes;
    kbv_buf_init(&out), kbv_buf_init(&notes);
    kbv_err e = {{0}};
    fflush(NULL);
    int rc = kbv_run_cmd(argv, &out, &notes, &e);
    if (notes.len) fwrite(notes.data, 1, notes.len, stderr);
    size_t n = out.data ? strcspn(out.data, "\n") : 0;
    if (rc != 0)
        fprintf(stderr, "kbv: no bytecode tree for the workers (%s --build-pycache failed: %s); they compile their modules\n", o->worker,
                rc < 0 ? e.msg : "its output above");
    else if (n > 0 && out.data[0] == '/' && n < sizeof o->pycache)
        snprintf(o->pycache, sizeof o->pycache, "%.*s", (int)n, out.data);
    kbv_buf_free(&out), kbv_buf_free(&notes);
}

int session_scratch_folders(const char *scratch, kbv_err *err) {
    static const char *const subs[] = {"inputs", "ref", "cand", "std"};
    for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) {
        char sub[PATH_MAX + 16];
        snprintf(sub, sizeof sub, "%s/%s", scratch, subs[i]);
        if (mkdir(sub, 0700) < 0) return kbv_seterr(err, "%s: %s", sub, strerror(errno));
    }
    return 0;
}
