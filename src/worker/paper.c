/* paper.c -- KernelBench-Verified's protocol as its paper published it (paper, paper_time,
 * paper_memory).
 *
 * kbv's --protocol paper reproduces the published harness so that its verdicts and speedups
 * can be compared with kbv's: the reference and the candidate built side by side in this
 * worker under the same seed, trials on the same uncloned inputs, input variants that scale a
 * fresh get_inputs() draw, the mean of CUDA events against the reference timed with TF32 on
 * and off, and torch's peak memory over one call. The outputs are saved for kbv to compare;
 * the worker decides nothing. The two models live from the first paper command to the
 * worker's end, as they do in the published harness's one evaluation.
 */
#include "paper.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../gpu/gpu.h"
#include "../proto.h"
#include "device.h"
#include "fail.h"
#include "guard.h"
#include "inputs.h"
#include "loader.h"
#include "model.h"
#include "values.h"

#define PAPER_SEED   42 /* the published seed_num: weights, trial seeds, timing inputs */
#define PAPER_WARMUP 3  /* the published num_warmup */

/* [0] the problem's Model, [1] the candidate's class, built by the first paper command. */
static PyObject *models[2];

/* torch's flags as the published harness leaves them: matmul precision 'highest' (TF32 off)
 * or, for the TF32 baseline, 'high'; cuDNN's allow_tf32 at torch's default (on). 0, or -1
 * with the Python error pending. */
static int paper_flags(worker *w, int tf32) {
    PyObject *r = PyObject_CallMethod(w->dl.torch, "set_float32_matmul_precision", "s", tf32 ? "high" : "highest");
    int set = r != NULL;
    Py_XDECREF(r);
    PyObject *backends = set ? PyObject_GetAttrString(w->dl.torch, "backends") : NULL;
    PyObject *cudnn = backends ? PyObject_GetAttrString(backends, "cudnn") : NULL;
    int rc = cudnn && PyObject_SetAttrString(cudnn, "allow_tf32", Py_True) == 0 ? 0 : -1;
    Py_XDECREF(cudnn), Py_XDECREF(backends);
    guard_flags_rebase(); /* kbv's own setting is not the candidate's change */
    return rc;
}

/* Both models, under the same seed before each (the published order: Model, then the
 * candidate's). NULL, or a failure reply. */
static json_t *paper_models(worker *w) {
    const char *cls[2] = {"Model", w->loader->class_name};
    for (int m = 0; m < 2; m++) {
        if (models[m]) continue;
        int at_init = 0;
        guard_reference(m == 0);
        models[m] = construct(w, m, PAPER_SEED, &at_init);
        guard_reference(0);
        if (!models[m]) {
            char what[200];
            snprintf(what, sizeof what, "%s(*get_init_inputs())", cls[m]);
            return fail_python(m && !at_init ? "python" : "problem", at_init ? "get_init_inputs()" : what);
        }
    }
    return NULL;
}

/* get_inputs() under seed, its floating tensors multiplied by scale (integer and bool
 * tensors and other values as they are; scale 1 leaves every value alone), on the device,
 * as call arguments. Unlike the published harness, no input is cast to float32: kbv keeps
 * the problem's dtypes. A new tuple, or NULL with the Python error pending. */
static PyObject *paper_args(worker *w, unsigned long long seed, double scale) {
    PyObject *xs = nominal_inputs(w, seed);
    PyObject *args = xs ? PyTuple_New(PyList_GET_SIZE(xs)) : NULL;
    PyObject *factor = args ? PyFloat_FromDouble(scale) : NULL;
    for (Py_ssize_t j = 0; factor && j < PyList_GET_SIZE(xs); j++) {
        PyObject *v = PyList_GET_ITEM(xs, j), *scaled = NULL;
        int fl = 0;
        if (scale != 1.0 && PyObject_IsInstance(v, w->dl.tensor_type) == 1) {
            PyObject *f = PyObject_CallMethod(v, "is_floating_point", NULL);
            fl = f ? PyObject_IsTrue(f) : -1;
            Py_XDECREF(f);
        }
        if (fl < 0 || PyErr_Occurred()) {
            Py_CLEAR(args);
            break;
        }
        if (fl) scaled = PyNumber_Multiply(v, factor);
        PyObject *d = fl && !scaled ? NULL : to_device(w, scaled ? scaled : v);
        Py_XDECREF(scaled);
        if (!d) {
            Py_CLEAR(args);
            break;
        }
        PyTuple_SET_ITEM(args, j, d);
    }
    Py_XDECREF(factor), Py_XDECREF(xs);
    return args;
}

/* KernelBench's trial seeds: torch seeded with 42, then one torch.randint(0, 2**32 - 1) per
 * trial; seeds[i] gets draw first + i. 0, or -1 with the Python error pending. The standard
 * command draws them so too (standard.c). */
int kernelbench_trial_seeds(worker *w, long long first, long long n, long long *seeds) {
    if (seed_torch(w, PAPER_SEED) < 0) return -1;
    for (long long t = 0; t < first + n; t++) {
        PyObject *ri = PyObject_CallMethod(w->dl.torch, "randint", "LL(i)", 0LL, 4294967295LL, 1);
        PyObject *item = ri ? PyObject_CallMethod(ri, "item", NULL) : NULL;
        long long s = item ? PyLong_AsLongLong(item) : 0;
        Py_XDECREF(item), Py_XDECREF(ri);
        if (!item || PyErr_Occurred()) return -1;
        if (t >= first) seeds[t - first] = s;
    }
    return 0;
}

/* One model's call on args, its outputs saved as PREFIX<j>.kbt: the "values" array, or NULL
 * and *fail (kind "problem" for the reference). */
static json_t *paper_call(worker *w, int m, PyObject *args, const char *prefix, json_t **fail) {
    kbv_err err;
    char what[200];
    const char *kind = m ? "python" : "problem";
    guard_reference(m == 0);
    PyObject *out = PyObject_CallObject(models[m], args);
    guard_reference(0);
    if (out && w->cuda && gpu_sync(&err) < 0) {
        Py_DECREF(out);
        *fail = proto_fail(m ? "cuda" : "problem", err.msg, NULL);
        return NULL;
    }
    if (!out) {
        snprintf(what, sizeof what, "%s forward", m ? w->loader->class_name : "Model");
        *fail = fail_python(kind, what);
        return NULL;
    }
    char why[300];
    PyObject *seq = output_seq(w, out, why, sizeof why);
    if (!seq) {
        *fail = proto_fail(m ? "output" : "problem", why, NULL);
        return NULL;
    }
    json_t *saved = save_values(w, seq, prefix, m ? "output" : "problem", "forward output");
    Py_DECREF(seq);
    if (!json_is_true(json_object_get(saved, "ok"))) {
        *fail = saved;
        return NULL;
    }
    json_t *values = json_incref(json_object_get(saved, "values"));
    json_decref(saved);
    return values;
}

/* paper {prefix, first, trials, scale}: the published check on draws first .. first+trials-1
 * of KernelBench's trial seeds: per draw get_inputs() under its seed, scaled by scale, the
 * reference then the candidate on the same inputs, under torch's default flags. Both outputs
 * of each are saved as PREFIX<i>_ref_<j>.kbt and PREFIX<i>_new_<j>.kbt; kbv compares them. */
json_t *cmd_paper(worker *w, const json_t *cmd) {
    const char *prefix;
    long long first, trials;
    kbv_err err;
    if (proto_get_str(cmd, "prefix", &prefix, &err) < 0 || proto_get_int(cmd, "first", &first, &err) < 0 ||
        proto_get_int(cmd, "trials", &trials, &err) < 0)
        return proto_fail("protocol", err.msg, NULL);
    const json_t *sv = json_object_get(cmd, "scale");
    if (!json_is_number(sv)) return proto_fail("protocol", "field \"scale\" missing or not a number", NULL);
    if (first < 0 || first > 1000 || trials < 1 || trials > 64) return proto_fail("protocol", "first or trials out of range", NULL);
    if (!w->problem || !w->candidate) return proto_fail("protocol", "paper before load_candidate", NULL);
    double scale = json_number_value(sv);
    if (paper_flags(w, 0) < 0) return fail_python("python", "setting torch's default TF32 flags");
    json_t *fail = paper_models(w);
    if (fail) return fail;
    long long seeds[64];
    if (kernelbench_trial_seeds(w, first, trials, seeds) < 0) return fail_python("python", "drawing KernelBench's trial seeds");
    json_t *list = json_array();
    for (long long t = 0; t < trials && !fail; t++) {
        PyObject *args = paper_args(w, (unsigned long long)seeds[t], scale);
        if (!args) {
            fail = fail_python("problem", "get_inputs()");
            break;
        }
        json_t *trial = json_pack("{s:I}", "seed", (json_int_t)seeds[t]);
        for (int m = 0; m < 2 && !fail; m++) {
            char pre[4200];
            snprintf(pre, sizeof pre, "%s%lld_%s_", prefix, t, m ? "new" : "ref");
            json_t *values = paper_call(w, m, args, pre, &fail);
            if (values) json_object_set_new(trial, m ? "new" : "ref", values);
        }
        Py_DECREF(args);
        if (fail) json_decref(trial);
        else json_array_append_new(list, trial);
    }
    if (fail) {
        json_decref(list);
        return fail;
    }
    json_t *r = proto_ok();
    json_object_set_new(r, "trials", list);
    return r;
}

/* The models of paper_time and paper_memory: 0 or 1 from "ref" or "new", or -1. */
static int paper_which(const json_t *cmd, json_t **fail) {
    const char *which;
    kbv_err err;
    *fail = NULL;
    if (proto_get_str(cmd, "model", &which, &err) < 0) return *fail = proto_fail("protocol", err.msg, NULL), -1;
    int m = strcmp(which, "new") == 0 ? 1 : strcmp(which, "ref") == 0 ? 0 : -1;
    if (m < 0) return *fail = fail_text("protocol", "unknown model %s", which), -1;
    if (!models[0] || !models[1]) return *fail = proto_fail("protocol", "a paper timing or memory command before paper", NULL), -1;
    return m;
}

/* One timed call by the published method: on a GPU a fresh pair of timing events recorded on
 * the current stream around the call, then torch.cuda.synchronize() (no L2 flush); on the
 * CPU the monotonic clock around it. 0 with *ms, or -1 with the Python error pending. */
static int paper_sample(worker *w, PyObject *cuda, call_ctx *c, double *ms) {
    if (!w->cuda) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        int rc = do_call(c);
        clock_gettime(CLOCK_MONOTONIC, &b);
        *ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
        return rc;
    }
    PyObject *ev[2] = {NULL, NULL}, *cls = PyObject_GetAttrString(cuda, "Event");
    PyObject *none = cls ? PyTuple_New(0) : NULL, *kw = none ? Py_BuildValue("{s:O}", "enable_timing", Py_True) : NULL;
    for (int i = 0; i < 2 && kw; i++) ev[i] = PyObject_Call(cls, none, kw);
    Py_XDECREF(kw), Py_XDECREF(none), Py_XDECREF(cls);
    int rc = -1;
    PyObject *r0 = ev[0] && ev[1] ? PyObject_CallMethod(ev[0], "record", NULL) : NULL;
    if (r0 && do_call(c) == 0) {
        PyObject *r1 = PyObject_CallMethod(ev[1], "record", NULL);
        PyObject *s = r1 ? PyObject_CallMethod(cuda, "synchronize", NULL) : NULL;
        PyObject *el = s ? PyObject_CallMethod(ev[0], "elapsed_time", "O", ev[1]) : NULL;
        if (el) *ms = PyFloat_AsDouble(el);
        rc = el && !PyErr_Occurred() ? 0 : -1;
        Py_XDECREF(el), Py_XDECREF(s), Py_XDECREF(r1);
    }
    Py_XDECREF(r0), Py_XDECREF(ev[0]), Py_XDECREF(ev[1]);
    return rc;
}

/* paper_time {model, trials, tf32}: the published timing of one model on get_inputs() under
 * seed 42: 3 warm-up calls, each followed by a synchronize, then the mean of trials timed
 * calls, with matmul precision 'high' (tf32 true: the paper's TF32 baseline) or 'highest'. */
json_t *cmd_paper_time(worker *w, const json_t *cmd) {
    json_t *fail;
    long long trials;
    kbv_err err;
    int m = paper_which(cmd, &fail);
    if (m < 0) return fail;
    if (proto_get_int(cmd, "trials", &trials, &err) < 0) return proto_fail("protocol", err.msg, NULL);
    if (trials < 1 || trials > 1000000) return proto_fail("protocol", "trials out of range", NULL);
    const char *kind = m ? "python" : "problem";
    PyObject *cuda = w->cuda ? torch_cuda(w) : NULL;
    if (w->cuda && !cuda) return fail_python("python", "torch.cuda");
    if (paper_flags(w, json_is_true(json_object_get(cmd, "tf32"))) < 0) fail = fail_python("python", "setting torch's matmul precision");
    PyObject *args = fail ? NULL : paper_args(w, PAPER_SEED, 1.0);
    if (!fail && !args) fail = fail_python("problem", "get_inputs()");
    call_ctx c = {models[m], args, NULL};
    guard_reference(m == 0);
    for (int i = 0; !fail && i < PAPER_WARMUP; i++) {
        int rc = do_call(&c);
        Py_CLEAR(c.out);
        PyObject *s = rc == 0 && cuda ? PyObject_CallMethod(cuda, "synchronize", NULL) : NULL;
        if (rc < 0 || (cuda && !s)) fail = fail_python(kind, "warm-up call");
        Py_XDECREF(s);
    }
    double sum = 0;
    for (long long i = 0; !fail && i < trials; i++) {
        double ms = 0;
        int rc = paper_sample(w, cuda, &c, &ms);
        Py_CLEAR(c.out);
        if (rc < 0) fail = fail_python(kind, "timed call");
        sum += ms;
    }
    guard_reference(0);
    Py_XDECREF(cuda), Py_XDECREF(args);
    /* back to the default precision whatever happened (a failure's error is already taken) */
    if (paper_flags(w, 0) < 0) {
        if (!fail) fail = fail_python("python", "setting torch's default TF32 flags");
        PyErr_Clear();
    }
    if (fail) return fail;
    json_t *r = proto_ok();
    json_object_set_new(r, "time_ms", json_pack("{s:f, s:I}", m ? "candidate" : "reference", sum / (double)trials, "trials", (json_int_t)trials));
    return r;
}

/* paper_memory {model}: the published peak: torch.cuda.reset_peak_memory_stats(), one call
 * on get_inputs() under seed 42, synchronize, torch.cuda.max_memory_allocated() (the inputs,
 * both models' weights and whatever else is resident included). On the CPU, nothing. */
json_t *cmd_paper_memory(worker *w, const json_t *cmd) {
    json_t *fail;
    int m = paper_which(cmd, &fail);
    if (m < 0) return fail;
    if (!w->cuda) return proto_ok();
    PyObject *args = paper_args(w, PAPER_SEED, 1.0);
    if (!args) return fail_python("problem", "get_inputs()");
    PyObject *cuda = torch_cuda(w);
    PyObject *r = cuda ? PyObject_CallMethod(cuda, "reset_peak_memory_stats", NULL) : NULL;
    Py_XDECREF(r);
    if (!r) fail = fail_python("python", "torch.cuda.reset_peak_memory_stats()");
    call_ctx c = {models[m], args, NULL};
    guard_reference(m == 0);
    if (!fail && do_call(&c) < 0) fail = fail_python(m ? "python" : "problem", "forward");
    guard_reference(0);
    PyObject *s = fail ? NULL : PyObject_CallMethod(cuda, "synchronize", NULL);
    if (!fail && !s) fail = fail_python(m ? "cuda" : "problem", "synchronize");
    PyObject *peak = fail ? NULL : PyObject_CallMethod(cuda, "max_memory_allocated", NULL);
    long long bytes = peak ? PyLong_AsLongLong(peak) : -1;
    if (!fail && (!peak || PyErr_Occurred())) fail = fail_python("python", "torch.cuda.max_memory_allocated()");
    Py_XDECREF(peak), Py_XDECREF(s), Py_XDECREF(c.out), Py_XDECREF(cuda), Py_DECREF(args);
    if (fail) return fail;
    json_t *rep = proto_ok();
    json_object_set_new(rep, "torch_peak_bytes", json_integer((json_int_t)bytes));
    return rep;
}
