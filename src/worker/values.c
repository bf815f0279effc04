/* values.c -- values leaving the worker (see values.h).
 *
 * Outputs go to kbv as .kbt files named by descriptors (a contiguous tensor straight from
 * its own memory, dl.c), scalars inline; fingerprints say whether tensors changed without
 * moving their bytes. It does not call the model or judge what it saves: kbv does.
 */
#include "values.h"

#include <stdio.h>
#include <string.h>

#include "../gen_host.h"
#include "../gpu/gpu.h"
#include "../proto.h"
#include "fail.h"

/* forward's result as a sequence of values: a tensor alone becomes a 1-tuple. NULL (and
 * *why set) for anything but a tensor, a tuple or a list. Steals out. */
PyObject *output_seq(worker *w, PyObject *out, char *why, size_t whylen) {
    PyObject *seq = NULL;
    if (PyObject_IsInstance(out, w->dl.tensor_type) == 1) seq = PyTuple_Pack(1, out);
    else if (PyTuple_Check(out) || PyList_Check(out)) seq = (Py_INCREF(out), out);
    else snprintf(why, whylen, "forward returned a %s, not a tensor or a tuple of tensors", Py_TYPE(out)->tp_name);
    PyErr_Clear();
    Py_DECREF(out);
    return seq;
}

/* A Python scalar input as JSON, or NULL if it is not one. */
json_t *scalar_to_json(PyObject *o) {
    if (o == Py_None) return json_null();
    if (PyBool_Check(o)) return json_boolean(o == Py_True);
    if (PyLong_Check(o)) {
        long long v = PyLong_AsLongLong(o);
        if (v == -1 && PyErr_Occurred()) return PyErr_Clear(), NULL;
        return json_integer(v);
    }
    if (PyFloat_Check(o)) return json_real(PyFloat_AsDouble(o));
    return NULL;
}

json_t *tensor_desc(const char *path, const kbv_tensor *t) {
    json_t *shape = json_array(), *strides = json_array();
    for (int i = 0; i < t->ndim; i++) {
        json_array_append_new(shape, json_integer(t->shape[i]));
        json_array_append_new(strides, json_integer(t->strides[i]));
    }
    return json_pack("{s:s, s:s, s:s, s:o, s:o}", "kind", "tensor", "path", path, "dtype", kbv_dtype_name(t->dtype), "shape", shape, "strides",
                     strides);
}

/* Save each element of a sequence of tensors/scalars; kind names who is at fault. */
json_t *save_values(worker *w, PyObject *seq, const char *prefix, const char *kind, const char *what) {
    json_t *list = json_array();
    Py_ssize_t n = PySequence_Size(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_GetItem(seq, i);
        if (!item) {
            json_decref(list);
            return fail_python(kind, what);
        }
        int is_tensor = PyObject_IsInstance(item, w->dl.tensor_type);
        if (is_tensor == 1) {
            kbv_tensor t;
            kbv_err err;
            char path[4096];
            snprintf(path, sizeof path, "%s%zd.kbt", prefix, i);
            if (dl_save_torch(&w->dl, item, path, &t, &err) < 0) {
                kbv_tensor_free(&t);
                Py_DECREF(item);
                json_decref(list);
                char msg[1300];
                snprintf(msg, sizeof msg, "%s, value %zd: %s", what, i, err.msg);
                return proto_fail(strstr(err.msg, "cuda") || strstr(err.msg, "CUDA") ? "cuda" : kind, msg, NULL);
            }
            json_array_append_new(list, tensor_desc(path, &t));
            kbv_tensor_free(&t);
        } else {
            json_t *v = is_tensor == 0 ? scalar_to_json(item) : NULL;
            if (!v) {
                char tname[128];
                snprintf(tname, sizeof tname, "%s", Py_TYPE(item)->tp_name);
                Py_DECREF(item);
                json_decref(list);
                PyErr_Clear();
                char msg[1300];
                snprintf(msg, sizeof msg, "%s, value %zd: a %s is neither a tensor nor a number", what, i, tname);
                return proto_fail(kind, msg, NULL);
            }
            json_array_append_new(list, json_pack("{s:s, s:o}", "kind", "scalar", "value", v));
        }
        Py_DECREF(item);
    }
    json_t *r = proto_ok();
    json_object_set_new(r, "values", list);
    return r;
}

/* Fingerprint of a tensor's bytes, computed where they live. */
int fingerprint(worker *w, PyObject *t, uint64_t *fp, kbv_err *err) {
    const void *ptr;
    size_t span;
    int contiguous, on_gpu;
    PyObject *cap = dl_locate(&w->dl, t, &ptr, &span, &contiguous, &on_gpu, err);
    if (!cap) return -1;
    int rc = 0;
    if (contiguous && on_gpu) rc = gpu_sync(err) == 0 ? gpu_fingerprint(ptr, span, fp, err) : -1;
    else if (contiguous) *fp = gen_fingerprint_host(ptr, span);
    else {
        kbv_tensor h;
        rc = dl_from_torch(&w->dl, t, &h, err);
        if (rc == 0) *fp = gen_fingerprint_host(h.data, h.nbytes), kbv_tensor_free(&h);
    }
    Py_DECREF(cap);
    return rc;
}

/* Fingerprints of a sequence's tensors as hex strings (null for other values); NULL on error. */
json_t *seq_prints(worker *w, PyObject *seq, kbv_err *err) {
    json_t *a = json_array();
    for (Py_ssize_t j = 0; seq && j < PySequence_Size(seq); j++) {
        PyObject *v = PySequence_GetItem(seq, j);
        if (!v || PyObject_IsInstance(v, w->dl.tensor_type) != 1) {
            Py_XDECREF(v);
            PyErr_Clear();
            json_array_append_new(a, json_null());
            continue;
        }
        uint64_t fp;
        int rc = fingerprint(w, v, &fp, err);
        Py_DECREF(v);
        if (rc < 0) {
            json_decref(a);
            return NULL;
        }
        char hx[17];
        snprintf(hx, sizeof hx, "%016llx", (unsigned long long)fp);
        json_array_append_new(a, json_string(hx));
    }
    return a;
}
