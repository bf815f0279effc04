/* forward.c -- one call of the built model on the current case's inputs (forward).
 *
 * Around the call: the TF32 flags kbv asks for, freed memory poisoned so that unwritten
 * output elements show, the float64 oracle (a deep copy of the model on float64 inputs).
 * After it: the outputs' types, which outputs alias which inputs, the inputs' fingerprints,
 * and the outputs saved as files or, for kbv check, reduced to facts where they live. It
 * does not compare outputs: kbv judges them.
 */
#include "forward.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <malloc.h>

#include "../gpu/gpu.h"
#include "../proto.h"
#include "device.h"
#include "fail.h"
#include "guard.h"
#include "inputs.h"
#include "values.h"

/* Fill freed memory so unwritten output elements show: glibc's perturbation on the CPU (it
 * fills a new allocation with v ^ 0xff), torch's caching allocator on the GPU (blocks filled
 * with the same v ^ 0xff, then released to its cache). 0x80 and 0x01 give 0x7f and 0xfe bytes:
 * an unwritten float32 reads 3.4e38 or -1.7e38, a float16 NaN -- never a value near zero that
 * a correct output could hold. */
static int poison(worker *w, int v, long long bytes) {
    mallopt(M_PERTURB, v);
    if (!w->cuda || v == 0) return 0;
    PyObject *u8 = PyObject_GetAttrString(w->dl.torch, "uint8");
    int rc = u8 && empty_cache(w) == 0 ? 0 : -1;
    long long sizes[17];
    int ns = 0;
    sizes[ns++] = bytes > (64LL << 20) ? bytes : (64LL << 20);
    for (int k = 0; k < 16; k++) sizes[ns++] = 512LL << 10; /* the small pool's blocks */
    PyObject *held = PyList_New(0);
    for (int k = 0; rc == 0 && k < ns; k++) {
        PyObject *kw = Py_BuildValue("{s:O, s:s}", "dtype", u8, "device", "cuda");
        PyObject *args = Py_BuildValue("(L)", sizes[k]);
        PyObject *empty = PyObject_GetAttrString(w->dl.torch, "empty");
        PyObject *t = kw && args && empty ? PyObject_Call(empty, args, kw) : NULL;
        PyObject *f = t ? PyObject_CallMethod(t, "fill_", "i", v ^ 0xff) : NULL;
        if (!f || PyList_Append(held, t) < 0) rc = -1;
        Py_XDECREF(f), Py_XDECREF(t), Py_XDECREF(empty), Py_XDECREF(args), Py_XDECREF(kw);
    }
    Py_XDECREF(held); /* freed into the cache, still holding the poison */
    Py_XDECREF(u8);
    if (rc < 0) PyErr_Clear(); /* out of memory for the poison is not the candidate's fault */
    return 0;
}

/* [lo, hi) byte ranges of a tensor, for aliasing checks. */
static int extent(worker *w, PyObject *t, uintptr_t *lo, uintptr_t *hi) {
    const void *ptr;
    size_t span;
    int contiguous, on_gpu;
    kbv_err err;
    PyObject *cap = dl_locate(&w->dl, t, &ptr, &span, &contiguous, &on_gpu, &err);
    if (!cap) return PyErr_Clear(), -1;
    *lo = (uintptr_t)ptr, *hi = (uintptr_t)ptr + span;
    Py_DECREF(cap);
    return 0;
}

/* Outputs must be plain tensors (or Parameters): a subclass can run code when kbv reads it. */
static void check_output_types(worker *w, PyObject *seq) {
    PyObject *nn = PyImport_ImportModule("torch.nn");
    PyObject *param = nn ? PyObject_GetAttrString(nn, "Parameter") : NULL;
    for (Py_ssize_t k = 0; k < PySequence_Size(seq); k++) {
        PyObject *o = PySequence_GetItem(seq, k);
        if (o && PyObject_IsInstance(o, w->dl.tensor_type) == 1 && (PyObject *)Py_TYPE(o) != w->dl.tensor_type && (PyObject *)Py_TYPE(o) != param) {
            char msg[300];
            snprintf(msg, sizeof msg, "output %zd is a %s, not a torch.Tensor", k, Py_TYPE(o)->tp_name);
            guard_note("tensor_subclass", "hack", msg);
        }
        Py_XDECREF(o);
    }
    Py_XDECREF(param), Py_XDECREF(nn);
    PyErr_Clear();
}

/* A Python number as a double (NULL-safe; -1 with the error pending on failure). */
static int number_value(PyObject *o, double *v) {
    PyObject *f = o ? PyNumber_Float(o) : NULL;
    if (!f) return -1;
    *v = PyFloat_AsDouble(f);
    Py_DECREF(f);
    return 0;
}

/* A tensor's min and max as doubles, computed where it is (two passes on the GPU). */
static int tensor_minmax(PyObject *t, double *mn, double *mx) {
    PyObject *a = PyObject_CallMethod(t, "min", NULL), *b = a ? PyObject_CallMethod(t, "max", NULL) : NULL;
    PyObject *ai = a && b ? PyObject_CallMethod(a, "item", NULL) : NULL, *bi = ai ? PyObject_CallMethod(b, "item", NULL) : NULL;
    int rc = bi && number_value(ai, mn) == 0 && number_value(bi, mx) == 0 ? 0 : -1;
    Py_XDECREF(a), Py_XDECREF(b), Py_XDECREF(ai), Py_XDECREF(bi);
    return rc;
}

/* kbv check's reply for outputs it does not read: per output, what judge_facts_of() would
 * find in it (NaN/Inf anywhere; one value everywhere), computed from its min and max where
 * the output lives, instead of the output going through a file. A NaN makes min and max
 * NaN, so it counts as non-finite and not constant, as it does in judge.c. NULL with the
 * Python error pending when an output has no min/max (kbv then saves the values). */
static json_t *output_facts(worker *w, PyObject *seq) {
    json_t *list = json_array();
    for (Py_ssize_t k = 0; k < PySequence_Size(seq); k++) {
        PyObject *o = PySequence_GetItem(seq, k);
        double mn = 0, mx = 0;
        long long n = 1;
        int ok = o != NULL;
        if (ok && PyObject_IsInstance(o, w->dl.tensor_type) == 1) {
            PyObject *numel = PyObject_CallMethod(o, "numel", NULL);
            n = numel ? PyLong_AsLongLong(numel) : -1;
            Py_XDECREF(numel);
            ok = n >= 0 && !PyErr_Occurred() && (n == 0 || tensor_minmax(o, &mn, &mx) == 0);
        } else if (ok) {
            ok = number_value(o, &mn) == 0;
            mx = mn;
        }
        Py_XDECREF(o);
        if (!ok) return json_decref(list), NULL;
        char value[40]; /* a string: JSON has no Inf (strtod reads it back) */
        snprintf(value, sizeof value, "%.17g", mn);
        json_array_append_new(
            list, json_pack("{s:b, s:b, s:s}", "nonfinite", n > 0 && !(isfinite(mn) && isfinite(mx)), "constant", n > 1 && mn == mx, "value", value));
    }
    return list;
}

json_t *cmd_forward(worker *w, const json_t *cmd) {
    const char *prefix, *precision = json_string_value(json_object_get(cmd, "precision"));
    kbv_err err = {{0}};
    if (proto_get_str(cmd, "prefix", &prefix, &err) < 0) return proto_fail("protocol", err.msg, NULL);
    if (!w->model || !w->inputs) return proto_fail("protocol", "forward before build and gen_inputs", NULL);
    int f64 = precision && strcmp(precision, "float64") == 0;
    PyObject *model = w->model, *args = w->inputs;
    Py_INCREF(args);
    if (f64) {
        if (!w->oracle) {
            PyObject *copy = PyImport_ImportModule("copy");
            PyObject *dup = copy ? PyObject_CallMethod(copy, "deepcopy", "O", w->model) : NULL;
            w->oracle = dup ? PyObject_CallMethod(dup, "double", NULL) : NULL;
            Py_XDECREF(dup), Py_XDECREF(copy);
            if (!w->oracle) {
                Py_DECREF(args);
                return fail_python("oracle", "making the float64 model");
            }
        }
        model = w->oracle;
        Py_DECREF(args);
        args = PyTuple_New(PyTuple_GET_SIZE(w->inputs));
        for (Py_ssize_t j = 0; args && j < PyTuple_GET_SIZE(w->inputs); j++) {
            PyObject *v = PyTuple_GET_ITEM(w->inputs, j), *c = NULL;
            PyObject *fp = PyObject_IsInstance(v, w->dl.tensor_type) == 1 ? PyObject_CallMethod(v, "is_floating_point", NULL) : NULL;
            if (fp == Py_True) c = PyObject_CallMethod(v, "double", NULL);
            else Py_INCREF(v), c = v;
            Py_XDECREF(fp);
            if (!c) {
                Py_DECREF(args);
                return fail_python("oracle", "casting inputs to float64");
            }
            PyTuple_SET_ITEM(args, j, c);
        }
    }
    json_t *tf = json_object_get(cmd, "tf32");
    if (json_is_boolean(tf) && set_tf32(w, json_is_true(tf)) < 0) PyErr_Clear();
    json_t *pz = json_object_get(cmd, "poison");
    if (json_is_integer(pz)) poison(w, (int)json_integer_value(pz), json_integer_value(json_object_get(cmd, "poison_bytes")));
    double t0 = kbv_now();
    int threads = guard_threads(w);
    PyObject *out = PyObject_CallObject(model, args);
    mallopt(M_PERTURB, 0);
    guard_after_call(w, threads);
    Py_DECREF(args);
    if (!out) return fail_python(f64 ? "oracle" : "python", "forward");
    if (w->cuda && gpu_sync(&err) < 0) {
        Py_DECREF(out);
        return proto_fail(f64 ? "oracle" : "cuda", err.msg, NULL);
    }
    double wall = kbv_now() - t0;
    char why[300];
    PyObject *seq = output_seq(w, out, why, sizeof why);
    if (!seq) return proto_fail("output", why, NULL);
    check_output_types(w, seq);
    /* Which outputs share bytes with which inputs. */
    json_t *aliases = json_array();
    for (Py_ssize_t k = 0; seq && k < PySequence_Size(seq); k++) {
        PyObject *o = PySequence_GetItem(seq, k);
        uintptr_t olo, ohi, ilo, ihi;
        if (o && PyObject_IsInstance(o, w->dl.tensor_type) == 1 && extent(w, o, &olo, &ohi) == 0)
            for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(w->inputs); j++) {
                PyObject *in = PyTuple_GET_ITEM(w->inputs, j);
                if (PyObject_IsInstance(in, w->dl.tensor_type) == 1 && extent(w, in, &ilo, &ihi) == 0 && olo < ihi && ilo < ohi && olo != ohi)
                    json_array_append_new(aliases, json_pack("[I, I]", (json_int_t)k, (json_int_t)j));
            }
        Py_XDECREF(o);
        PyErr_Clear();
    }
    double t_save = kbv_now();
    json_t *r = NULL, *facts = seq && json_is_false(json_object_get(cmd, "save")) ? output_facts(w, seq) : NULL;
    int kept = facts != NULL;
    if (facts) /* kbv check: the outputs stay here */
        r = json_pack("{s:b, s:I, s:o}", "ok", 1, "count", (json_int_t)PySequence_Size(seq), "facts", facts);
    else if (seq) PyErr_Clear(), r = save_values(w, seq, prefix, "output", "forward output");
    else r = fail_python("python", "forward output");
    t_save = kbv_now() - t_save;
    Py_XDECREF(seq);
    /* kbv check: the outputs are gone; give their memory back to the GPU, which other checks
     * share (a failure costs only that memory, so it is not an error). */
    if (kept && w->cuda && empty_cache(w) < 0) PyErr_Clear();
    if (json_is_true(json_object_get(r, "ok"))) {
        json_object_set_new(r, "wall_s", json_real(wall));
        json_object_set_new(r, "save_s", json_real(t_save));
        json_object_set_new(r, "aliases", aliases);
        json_t *after = input_prints(w, &err);
        if (after) json_object_set_new(r, "inputs_after", after);
        else PyErr_Clear();
    } else {
        json_decref(aliases);
    }
    return r;
}
