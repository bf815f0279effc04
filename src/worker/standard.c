/* standard.c -- KernelBench's own correctness check and timing, in one process (standard).
 *
 * kbv's --protocol standard reproduces what KernelBench does, so that its verdicts can be
 * compared with kbv's: the reference and the candidate built side by side in this worker,
 * trials on the same uncloned inputs (standard), then KernelBench's mean times of the same
 * two models (standard_time). The outputs are saved
 * for kbv to compare; the worker decides nothing. kbv's own protocol is in model.c,
 * inputs.c, forward.c and bench.c.
 */
#include "standard.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../gpu/gpu.h"
#include "../gpu/timer.h"
#include "../proto.h"
#include "device.h"
#include "fail.h"
#include "guard.h"
#include "inputs.h"
#include "loader.h"
#include "model.h"
#include "paper.h"
#include "values.h"

/* KernelBench's timing of one model on inputs: the mean of trials timed calls after warmup
 * untimed ones, in ms. NULL, or a failure reply. */
static json_t *standard_time(worker *w, PyObject *model, PyObject *args, int warmup, int trials, double *mean_ms) {
    kbv_err err = {{0}};
    *mean_ms = 0;
    if (make_timer(w, &err) < 0) return proto_fail("cuda", err.msg, NULL);
    call_ctx c = {model, args, NULL};
    for (int i = 0; i < warmup; i++) {
        if (do_call(&c) < 0) return fail_python("python", "warm-up call");
        Py_CLEAR(c.out);
    }
    if (w->cuda && gpu_sync(&err) < 0) return proto_fail("cuda", err.msg, NULL);
    double sum = 0;
    for (int i = 0; i < trials; i++) {
        gpu_sample gs = {0};
        int failed = 0;
        if (!w->cuda) {
            struct timespec a, b;
            clock_gettime(CLOCK_MONOTONIC, &a);
            failed = do_call(&c) < 0;
            clock_gettime(CLOCK_MONOTONIC, &b);
            gs.ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
        } else if (gpu_timer_sample_standard(w->timer, do_call, &c, &gs, &failed, &err) < 0) {
            Py_CLEAR(c.out);
            return proto_fail("cuda", err.msg, NULL);
        }
        Py_CLEAR(c.out);
        if (failed) return fail_python("python", "timed call");
        sum += gs.ms;
    }
    *mean_ms = trials ? sum / trials : 0;
    return NULL;
}

/* KernelBench's own correctness check, in this one process (--protocol standard): seeds 42,
 * trial seeds from torch.randint, Model and the candidate's class on the same uncloned inputs,
 * TF32 off, no eval(). standard {prefix, first, trials} runs trials first .. first+trials-1:
 * the command with first 0 builds the two models, kept for the later trials and for
 * standard_time, as KernelBench checks and times the instances it built once. kbv asks for one
 * trial a command and reads each trial's outputs before the next, so that no more than one
 * trial's outputs are on disk at a time (5 trials of 1 GiB outputs went over a candidate
 * folder's budget on the H200). Saves both outputs of every trial; kbv compares them. */
json_t *cmd_standard(worker *w, const json_t *cmd) {
    const char *prefix;
    long long first, trials;
    kbv_err err;
    if (proto_get_str(cmd, "prefix", &prefix, &err) < 0 || proto_get_int(cmd, "first", &first, &err) < 0 ||
        proto_get_int(cmd, "trials", &trials, &err) < 0)
        return proto_fail("protocol", err.msg, NULL);
    if (!w->problem || !w->candidate) return proto_fail("protocol", "standard before load_candidate", NULL);
    if (first < 0 || first > 1000 || trials < 1 || trials > 64) return proto_fail("protocol", "first or trials out of range", NULL);
    if (first > 0 && (!w->std_models[0] || !w->std_models[1])) return proto_fail("protocol", "standard trial before the models were built", NULL);
    const char *cls[2] = {"Model", w->loader->class_name};
    char what[200];
    if (w->cuda && set_tf32(w, 0) < 0) PyErr_Clear();
    long long seeds[64];
    if (kernelbench_trial_seeds(w, first, trials, seeds) < 0) return fail_python("python", "drawing KernelBench's trial seeds");
    if (first == 0) { /* after the seeds, as KernelBench draws them before it builds */
        Py_CLEAR(w->std_models[0]);
        Py_CLEAR(w->std_models[1]);
        int at_init = 0;
        for (int m = 0; m < 2 && (m == 0 || w->std_models[0]); m++) {
            guard_reference(m == 0);
            w->std_models[m] = construct(w, m, 42, &at_init);
            guard_reference(0);
        }
        if (!w->std_models[0] || !w->std_models[1]) {
            snprintf(what, sizeof what, "%s(*get_init_inputs())", cls[w->std_models[0] ? 1 : 0]);
            json_t *f = fail_python(w->std_models[0] ? "python" : "problem", at_init ? "get_init_inputs()" : what);
            Py_CLEAR(w->std_models[0]);
            Py_CLEAR(w->std_models[1]);
            return f;
        }
    }
    PyObject **models = w->std_models;
    json_t *list = json_array(), *fail = NULL;
    for (long long i = 0; i < trials && !fail; i++) {
        long long t = first + i;
        PyObject *args = nominal_args(w, (unsigned long long)seeds[i]);
        if (!args) {
            fail = fail_python("problem", "get_inputs()");
            break;
        }
        json_t *trial = json_pack("{s:I}", "seed", (json_int_t)seeds[i]);
        for (int m = 0; m < 2 && !fail; m++) {
            guard_reference(m == 0);
            PyObject *out = PyObject_CallObject(models[m], args);
            guard_reference(0);
            if (out && w->cuda && gpu_sync(&err) < 0) {
                fail = proto_fail(m ? "cuda" : "problem", err.msg, NULL);
                Py_DECREF(out);
                break;
            }
            if (!out) {
                snprintf(what, sizeof what, "%s forward", cls[m]);
                fail = fail_python(m ? "python" : "problem", what);
                break;
            }
            char why[300];
            PyObject *seq = output_seq(w, out, why, sizeof why);
            if (!seq) {
                fail = proto_fail(m ? "output" : "problem", why, NULL);
                break;
            }
            char pre[4200];
            snprintf(pre, sizeof pre, "%s%lld_%s_", prefix, t, m ? "new" : "ref");
            json_t *saved = save_values(w, seq, pre, m ? "output" : "problem", "forward output");
            Py_DECREF(seq);
            if (!json_is_true(json_object_get(saved, "ok"))) {
                fail = saved;
                break;
            }
            json_object_set(trial, m ? "new" : "ref", json_object_get(saved, "values"));
            json_decref(saved);
        }
        Py_DECREF(args);
        if (fail) json_decref(trial);
        else json_array_append_new(list, trial);
    }
    if (fail) { /* no later trial or timing of these models */
        Py_CLEAR(w->std_models[0]);
        Py_CLEAR(w->std_models[1]);
        json_decref(list);
        return fail;
    }
    json_t *r = proto_ok();
    json_object_set_new(r, "trials", list);
    return r;
}

/* KernelBench's timing of the models the standard command checked: get_inputs() under seed
 * 42, 3 warm-ups, the mean of time_trials calls, the reference first. The models are let go. */
json_t *cmd_standard_time(worker *w, const json_t *cmd) {
    long long time_trials;
    kbv_err err;
    if (proto_get_int(cmd, "time_trials", &time_trials, &err) < 0) return proto_fail("protocol", err.msg, NULL);
    if (!w->std_models[0] || !w->std_models[1]) return proto_fail("protocol", "standard_time before a standard command that passed", NULL);
    if (time_trials < 1 || time_trials > 1000000) return proto_fail("protocol", "time_trials out of range", NULL);
    if (w->cuda && set_tf32(w, 0) < 0) PyErr_Clear();
    double mean[2] = {0, 0};
    json_t *fail = NULL;
    PyObject *args = nominal_args(w, 42);
    if (!args) fail = fail_python("problem", "get_inputs()");
    for (int m = 0; m < 2 && !fail; m++) {
        guard_reference(m == 0);
        fail = standard_time(w, w->std_models[m], args, 3, (int)time_trials, &mean[m]);
        guard_reference(0);
        if (fail && m == 0) json_object_set_new(fail, "kind", json_string("problem"));
    }
    Py_XDECREF(args);
    Py_CLEAR(w->std_models[0]);
    Py_CLEAR(w->std_models[1]);
    if (fail) return fail;
    json_t *r = proto_ok();
    json_object_set_new(r, "time_ms", json_pack("{s:f, s:f, s:I}", "reference", mean[0], "candidate", mean[1], "trials", (json_int_t)time_trials));
    return r;
}
