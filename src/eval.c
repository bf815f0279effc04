/* eval.c -- orchestrate one evaluation (see eval.h).
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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "judge.h"
#include "proc.h"
#include "tensor.h"

#define SEED_MASK 0x7fffffffffffffffULL /* torch seeds are taken as signed 64-bit here */

void eval_opts_default(eval_opts *o) {
    memset(o, 0, sizeof *o);
    o->device = "auto";
    o->timeout_s = 300;
    o->load_timeout_s = 600;
    o->start_timeout_s = 120;
    o->ncases = 3;
    o->capture_cap = 256 * 1024;
}

/* One output of one case: where the reference's lives, in memory. */
typedef struct ref_case {
    json_t *inputs;     /* input descriptors (for the candidate's forward) */
    kbv_tensor *outs;   /* reference outputs */
    json_t *scalars;    /* non-tensor outputs, by position (JSON null where a tensor) */
    int nouts;
} ref_case;

typedef struct eval_ctx {
    const eval_opts *o;
    kbv_result *r;
    char scratch[PATH_MAX];
    char **env;
    int nenv;
    ref_case *cases;
} eval_ctx;

static void progress(const eval_ctx *c, const char *fmt, const char *arg) {
    if (!c->o->verbose) return;
    fprintf(stderr, "kbv: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
}

/* The worker's environment: a fixed, small set (docs/security.md will say why each). */
static int build_env(eval_ctx *c, kbv_err *err) {
    static const char *pass[] = {"PATH", "LANG", "LC_ALL", "CUDA_VISIBLE_DEVICES", "CUDA_HOME", "LD_LIBRARY_PATH",
                                 "TORCH_CUDA_ARCH_LIST", "CC", "CXX", "MAX_JOBS", "ASAN_OPTIONS", "UBSAN_OPTIONS"};
    c->env = calloc(32, sizeof *c->env);
    if (!c->env) return kbv_seterr(err, "out of memory");
    for (size_t i = 0; i < sizeof pass / sizeof *pass; i++) {
        const char *v = getenv(pass[i]);
        if (v && asprintf(&c->env[c->nenv], "%s=%s", pass[i], v) >= 0) c->nenv++;
    }
    char cache[PATH_MAX];
    if (c->o->cache_dir) snprintf(cache, sizeof cache, "%s", c->o->cache_dir);
    else if (getenv("XDG_CACHE_HOME")) snprintf(cache, sizeof cache, "%s/kbv/torch_extensions", getenv("XDG_CACHE_HOME"));
    else if (getenv("HOME")) snprintf(cache, sizeof cache, "%s/.cache/kbv/torch_extensions", getenv("HOME"));
    else snprintf(cache, sizeof cache, "%s/torch_extensions", c->scratch);
    /* mkdir -p */
    for (char *p = cache + 1; *p; p++)
        if (*p == '/') *p = '\0', mkdir(cache, 0755), *p = '/';
    mkdir(cache, 0755);
    if (!getenv("PATH")) asprintf(&c->env[c->nenv++], "PATH=/usr/local/bin:/usr/bin:/bin");
    if (asprintf(&c->env[c->nenv++], "TORCH_EXTENSIONS_DIR=%s", cache) < 0 ||
        asprintf(&c->env[c->nenv++], "HOME=%s", c->scratch) < 0 ||
        asprintf(&c->env[c->nenv++], "TMPDIR=%s", c->scratch) < 0 ||
        asprintf(&c->env[c->nenv++], "PYTHONHASHSEED=0") < 0 ||
        asprintf(&c->env[c->nenv++], "PYTHONDONTWRITEBYTECODE=1") < 0)
        return kbv_seterr(err, "out of memory");
    return 0;
}

static void free_env(eval_ctx *c) {
    for (int i = 0; i < c->nenv; i++) free(c->env[i]);
    free(c->env);
}

static int start_worker(eval_ctx *c, kbv_proc *p, const char *role, const char *device, json_t **hello, kbv_err *err) {
    char *argv[] = {(char *)c->o->worker, "--device", (char *)device, "--role", (char *)role, NULL};
    if (proc_spawn(p, argv, c->env, c->scratch, c->o->capture_cap, err) < 0) return -1;
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
    return -1;
}

/* Send cmd, collect the reply. Returns the proc_result; *reply set only for PROC_OK. */
static proc_result step(kbv_proc *p, json_t *cmd, double timeout, json_t **reply, kbv_err *err) {
    proc_result pr = proc_request(p, cmd, timeout, reply, err);
    json_decref(cmd);
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
        result_add_error(r, "reference worker %s during %s", p->exited ? st : "stopped answering", what);
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
        if (p->exited) {
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

static uint64_t case_seed(uint64_t run_seed, int i) { return kbv_mix64(run_seed + 0x100 + (uint64_t)i) & SEED_MASK; }

/* Make each nominal case's inputs in the reference worker (issue #3 moves this to C). */
static int eval_make_cases(eval_ctx *c, kbv_proc *ref, kbv_err *err) {
    for (int i = 0; i < c->o->ncases; i++) {
        kbv_case *kc = result_add_case(c->r);
        if (!kc) return kbv_seterr(err, "out of memory");
        snprintf(kc->distribution, sizeof kc->distribution, "nominal");
        kc->seed = case_seed(c->r->seed, i);
        char prefix[PATH_MAX + 32];
        snprintf(prefix, sizeof prefix, "%s/inputs/case%d_in", c->scratch, i);
        json_t *rep;
        proc_result pr = step(ref, json_pack("{s:s, s:s, s:I}", "op", "make_inputs", "prefix", prefix, "seed",
                                             (json_int_t)kc->seed), c->o->timeout_s, &rep, err);
        if (pr != PROC_OK || !json_is_true(json_object_get(rep, "ok"))) {
            problem_failure(c, ref, "get_inputs()", pr, rep, err);
            json_decref(rep);
            return 1;
        }
        c->cases[i].inputs = json_incref(json_object_get(rep, "values"));
        json_decref(rep);
    }
    return 0;
}

/* Read a worker's output descriptors into tensors (and delete the files). */
static int read_outputs(const json_t *values, kbv_tensor **outs, json_t **scalars, int *n, kbv_err *err) {
    size_t k = json_array_size(values);
    *outs = calloc(k ? k : 1, sizeof **outs);
    *scalars = json_array();
    *n = (int)k;
    if (!*outs || !*scalars) return kbv_seterr(err, "out of memory");
    for (size_t j = 0; j < k; j++) {
        const json_t *d = json_array_get(values, j);
        const char *kind = json_string_value(json_object_get(d, "kind"));
        if (kind && strcmp(kind, "tensor") == 0) {
            const char *path = json_string_value(json_object_get(d, "path"));
            json_array_append_new(*scalars, json_null());
            if (!path || kbv_tensor_load(&(*outs)[j], path, err) < 0)
                return path ? -1 : kbv_seterr(err, "output %zu has no path", j);
            unlink(path);
        } else {
            json_array_append(*scalars, json_object_get(d, "value"));
        }
    }
    return 0;
}

static void free_outputs(kbv_tensor *outs, int n) {
    for (int j = 0; outs && j < n; j++) kbv_tensor_free(&outs[j]);
    free(outs);
}

static int run_reference(eval_ctx *c, const char *device, uint64_t build_seed, kbv_err *err) {
    kbv_proc ref;
    json_t *hello = NULL, *rep = NULL;
    int rc = 0;
    progress(c, "starting the reference worker (%s)", device);
    if (start_worker(c, &ref, "reference", device, &hello, err) < 0) return -1;
    const char *s;
    if ((s = json_string_value(json_object_get(hello, "python")))) snprintf(c->r->python, sizeof c->r->python, "%.*s", (int)strcspn(s, " "), s);
    if ((s = json_string_value(json_object_get(hello, "torch")))) snprintf(c->r->torch, sizeof c->r->torch, "%s", s);
    if ((s = json_string_value(json_object_get(hello, "gpu")))) snprintf(c->r->gpu, sizeof c->r->gpu, "%s", s);
    json_decref(hello);
    proc_result pr = step(&ref, cmd_path("load_problem", c->r->problem.path), c->o->timeout_s, &rep, err);
    if (pr != PROC_OK || !json_is_true(json_object_get(rep, "ok"))) {
        problem_failure(c, &ref, "load", pr, rep, err);
        goto done;
    }
    json_decref(rep), rep = NULL;
    pr = step(&ref, json_pack("{s:s, s:s, s:I}", "op", "build", "class", "Model", "seed", (json_int_t)build_seed),
              c->o->timeout_s, &rep, err);
    if (pr != PROC_OK || !json_is_true(json_object_get(rep, "ok"))) {
        problem_failure(c, &ref, "Model construction", pr, rep, err);
        goto done;
    }
    json_decref(rep), rep = NULL;
    progress(c, "%s", "making inputs and reference outputs");
    if (eval_make_cases(c, &ref, err) != 0) goto done;
    for (int i = 0; i < c->o->ncases; i++) {
        char prefix[PATH_MAX + 32];
        snprintf(prefix, sizeof prefix, "%s/ref/case%d_out", c->scratch, i);
        pr = step(&ref, json_pack("{s:s, s:s, s:O}", "op", "forward", "prefix", prefix, "inputs", c->cases[i].inputs),
                  c->o->timeout_s, &rep, err);
        if (pr != PROC_OK || !json_is_true(json_object_get(rep, "ok"))) {
            problem_failure(c, &ref, "forward", pr, rep, err);
            goto done;
        }
        ref_case *rc_ = &c->cases[i];
        if (read_outputs(json_object_get(rep, "values"), &rc_->outs, &rc_->scalars, &rc_->nouts, err) < 0) {
            c->r->status = KBV_PROBLEM_ERROR;
            result_add_error(c->r, "reading the reference outputs: %s", err->msg);
            goto done;
        }
        json_decref(rep), rep = NULL;
    }
done:
    json_decref(rep);
    if (c->r->status == KBV_PROBLEM_ERROR) {
        proc_kill(&ref);
        c->r->reference_stderr = proc_capture_text(&ref.err);
    } else {
        proc_finish(&ref, 5.0);
    }
    proc_free(&ref);
    return rc;
}

/* The last n lines of text (a pointer into it). */
static const char *tail_lines(const char *text, int n) {
    const char *p = text + strlen(text);
    while (p > text && p[-1] == '\n') p--;
    for (int lines = 0; p > text; p--)
        if (p[-1] == '\n' && ++lines == n) break;
    return p;
}

static void judge_case(eval_ctx *c, int i, kbv_tensor *outs, json_t *scalars, int n) {
    kbv_case *kc = &c->r->cases[i];
    ref_case *rc = &c->cases[i];
    kc->evaluated = 1;
    kc->passed = 1;
    if (n != rc->nouts) {
        kc->passed = 0;
        snprintf(kc->detail, sizeof kc->detail, "%d outputs, expected %d", n, rc->nouts);
        return;
    }
    for (int j = 0; j < n; j++) {
        json_t *rs = json_array_get(rc->scalars, (size_t)j), *cs = json_array_get(scalars, (size_t)j);
        if (!json_is_null(rs) || !json_is_null(cs)) {
            if (!json_equal(rs, cs)) {
                kc->passed = 0;
                snprintf(kc->detail, sizeof kc->detail, "output %d: scalar differs from the reference's", j);
            }
            continue;
        }
        judge_tol tol = judge_default_tol(rc->outs[j].dtype);
        judge_cmp cmp;
        judge_compare(&rc->outs[j], &outs[j], tol, &cmp);
        if (cmp.max_abs_err > kc->max_abs_err) kc->max_abs_err = cmp.max_abs_err;
        if (cmp.max_rel_err > kc->max_rel_err) kc->max_rel_err = cmp.max_rel_err;
        if (tol.atol > kc->atol) kc->atol = tol.atol;
        if (tol.rtol > kc->rtol) kc->rtol = tol.rtol;
        if (!cmp.passed && kc->passed) {
            kc->passed = 0;
            snprintf(kc->detail, sizeof kc->detail, "output %d: %s", j, cmp.reason);
        }
    }
}

static void run_candidate(eval_ctx *c, const char *device, uint64_t build_seed, kbv_err *err) {
    kbv_proc cand;
    json_t *hello = NULL, *rep = NULL;
    kbv_result *r = c->r;
    progress(c, "starting the candidate worker (%s)", device);
    if (start_worker(c, &cand, "candidate", device, &hello, err) < 0) {
        r->status = KBV_CRASH;
        result_add_error(r, "%s", err->msg);
        return;
    }
    json_decref(hello);
    const char *what = "load";
    proc_result pr = step(&cand, cmd_path("load_problem", r->problem.path), c->o->timeout_s, &rep, err);
    if (pr == PROC_OK && json_is_true(json_object_get(rep, "ok"))) {
        json_decref(rep), rep = NULL;
        progress(c, "%s", "loading (and compiling) the candidate");
        pr = step(&cand, cmd_path("load_candidate", r->candidate.path), c->o->load_timeout_s, &rep, err);
    }
    if (pr == PROC_OK && json_is_true(json_object_get(rep, "ok"))) {
        json_decref(rep), rep = NULL;
        what = "ModelNew construction";
        pr = step(&cand, json_pack("{s:s, s:s, s:I}", "op", "build", "class", "ModelNew", "seed", (json_int_t)build_seed),
                  c->o->timeout_s, &rep, err);
    }
    int failed = !(pr == PROC_OK && json_is_true(json_object_get(rep, "ok")));
    for (int i = 0; !failed && i < c->o->ncases; i++) {
        json_decref(rep), rep = NULL;
        char prefix[PATH_MAX + 32];
        snprintf(prefix, sizeof prefix, "%s/cand/case%d_out", c->scratch, i);
        what = "forward";
        progress(c, "running case %s", r->cases[i].distribution);
        pr = step(&cand, json_pack("{s:s, s:s, s:O}", "op", "forward", "prefix", prefix, "inputs", c->cases[i].inputs),
                  c->o->timeout_s, &rep, err);
        failed = !(pr == PROC_OK && json_is_true(json_object_get(rep, "ok")));
        if (failed) break;
        kbv_tensor *outs = NULL;
        json_t *scalars = NULL;
        int n = 0;
        if (read_outputs(json_object_get(rep, "values"), &outs, &scalars, &n, err) < 0) {
            r->status = KBV_RUNTIME_ERROR;
            result_add_error(r, "reading the candidate's outputs: %s", err->msg);
            free_outputs(outs, n), json_decref(scalars);
            failed = 2;
            break;
        }
        judge_case(c, i, outs, scalars, n);
        free_outputs(outs, n), json_decref(scalars);
    }
    if (failed == 1) candidate_failure(c, &cand, what, pr, rep, err);
    json_decref(rep);
    if (failed) proc_kill(&cand);
    else proc_finish(&cand, 5.0);
    r->candidate_stdout = proc_capture_text(&cand.out);
    r->candidate_stderr = proc_capture_text(&cand.err);
    if (failed && r->status == KBV_CRASH && r->candidate_stderr && *r->candidate_stderr)
        result_add_error(r, "last lines of the candidate's stderr:\n%s", tail_lines(r->candidate_stderr, 30));
    if (cand.out.total > cand.out.head.len + (cand.out.tail_len))
        result_add_flag(r, "output_truncated", "info", "the candidate wrote %zu bytes on stdout; kept the first and last",
                        cand.out.total);
    proc_free(&cand);
    if (failed) return;
    r->status = KBV_VERIFIED;
    for (int i = 0; i < r->ncases; i++)
        if (!r->cases[i].passed) r->status = KBV_INCORRECT;
}

static void identify(kbv_file_id *f, const char *path) {
    kbv_err e;
    if (kbv_abspath(path, f->path, sizeof f->path, &e) < 0) snprintf(f->path, sizeof f->path, "%s", path);
    kbv_stem(path, f->name, sizeof f->name);
    if (kbv_sha256_file(f->path, f->sha256, &e) < 0) f->sha256[0] = '\0';
}

int eval_run(const eval_opts *o, kbv_result *r, kbv_err *err) {
    double t0 = kbv_now();
    eval_ctx c = {.o = o, .r = r};
    identify(&r->problem, o->problem);
    identify(&r->candidate, o->candidate);
    if (o->have_seed) r->seed = o->seed;
    else if (kbv_random_u64(&r->seed) < 0) return kbv_seterr(err, "cannot draw a random seed");
    r->build_seed = kbv_mix64(r->seed ^ 0xB111D) & SEED_MASK;
    if (access(o->worker, X_OK) < 0) return kbv_seterr(err, "worker %s: %s (run make)", o->worker, strerror(errno));
    if (!r->problem.sha256[0]) {
        r->status = KBV_PROBLEM_ERROR;
        result_add_error(r, "problem %s: cannot read it: %s", o->problem, strerror(errno));
        r->wall_s = kbv_now() - t0;
        return 0;
    }
    if (kbv_mkscratch(o->scratch_base, c.scratch, sizeof c.scratch, err) < 0) return -1;
    int rc = 0;
    char sub[PATH_MAX + 16];
    const char *subs[] = {"inputs", "ref", "cand"};
    for (int i = 0; i < 3; i++) {
        snprintf(sub, sizeof sub, "%s/%s", c.scratch, subs[i]);
        if (mkdir(sub, 0700) < 0) {
            rc = kbv_seterr(err, "%s: %s", sub, strerror(errno));
            goto out;
        }
    }
    if (build_env(&c, err) < 0 || !(c.cases = calloc((size_t)o->ncases, sizeof *c.cases))) {
        rc = err->msg[0] ? -1 : kbv_seterr(err, "out of memory");
        goto out;
    }
    /* Resolve the device: "auto" is cuda where an NVIDIA driver is present. A worker that
     * then finds no usable GPU fails to start, and kbv says so (exit status 4). */
    char device[16];
    snprintf(device, sizeof device, "%s", strcmp(o->device, "auto") == 0 ? "cpu" : o->device);
    if (strcmp(o->device, "auto") == 0 && access("/dev/nvidiactl", F_OK) == 0) snprintf(device, sizeof device, "cuda");
    snprintf(r->device, sizeof r->device, "%s", device);
    if (run_reference(&c, device, r->build_seed, err) < 0) {
        rc = -1;
        goto out;
    }
    if (r->status == KBV_PROBLEM_ERROR) goto out;
    if (!r->candidate.sha256[0]) {
        r->status = KBV_COMPILE_ERROR;
        result_add_error(r, "candidate %s: cannot read it", o->candidate);
        goto out;
    }
    /* Reference outputs are in kbv's memory only from here on: remove their folder. */
    snprintf(sub, sizeof sub, "%s/ref", c.scratch);
    kbv_rmtree(sub);
    run_candidate(&c, device, r->build_seed, err);
out:
    for (int i = 0; c.cases && i < o->ncases; i++) {
        json_decref(c.cases[i].inputs), json_decref(c.cases[i].scalars);
        free_outputs(c.cases[i].outs, c.cases[i].nouts);
    }
    free(c.cases);
    if (c.env) free_env(&c);
    if (c.scratch[0] && !o->keep_scratch) kbv_rmtree(c.scratch);
    else if (c.scratch[0]) fprintf(stderr, "kbv: scratch kept in %s\n", c.scratch);
    r->wall_s = kbv_now() - t0;
    return rc;
}
