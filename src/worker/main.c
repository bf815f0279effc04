/* kbv-worker -- runs one problem or candidate for kbv, in a process of its own.
 *
 * It embeds CPython, imports torch, and then obeys commands that kbv writes on fd 3,
 * answering each with one reply line on fd 4 (src/proto.h, docs/protocol.md). Tensors come
 * and go as .kbt files and cross into torch through DLPack (dl.c); the only Python it runs
 * is the problem's and candidate's own code plus the torch calls needed to build and call
 * a module. It holds no reference outputs when it runs a candidate: kbv judges outputs.
 * It exits when its command pipe closes or on "quit"; it never decides a verdict.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../gpu/gpu.h"
#include "../proto.h"
#include "../tensor.h"
#include "dl.h"
#include "py.h"

typedef struct worker {
    int cuda;            /* device is cuda:0 */
    dl_ctx dl;
    PyObject *problem;   /* the problem module */
    PyObject *candidate; /* the candidate module, if loaded */
    PyObject *model;     /* the built model */
} worker;

static void reply(json_t *msg) {
    kbv_err err;
    if (!msg || proto_send(PROTO_REPLY_FD, msg, &err) < 0) {
        fprintf(stderr, "kbv-worker: cannot reply: %s\n", msg ? err.msg : "out of memory");
        _exit(70);
    }
    json_decref(msg);
}

/* The pending Python exception as a failure reply of the given kind ("exit" for SystemExit). */
static json_t *fail_python(const char *kind, const char *context) {
    kbv_err err = {{0}};
    char *tb = NULL, msg[1200];
    int is_exit = 0;
    py_take_error(&err, &tb, &is_exit);
    if (!is_exit && (strstr(err.msg, "CUDA error") || strstr(err.msg, "AcceleratorError") ||
                     strstr(err.msg, "CUDA out of memory") || strstr(err.msg, "cudaError")))
        kind = "cuda";
    snprintf(msg, sizeof msg, "%s: %s", context, err.msg);
    json_t *r = proto_fail(is_exit ? "exit" : kind, msg, tb);
    free(tb);
    return r;
}

static json_t *fail_text(const char *kind, const char *fmt, const char *arg) {
    char msg[1200];
    snprintf(msg, sizeof msg, fmt, arg);
    return proto_fail(kind, msg, NULL);
}

static json_t *cmd_load(worker *w, const json_t *cmd, int candidate) {
    const char *path;
    kbv_err err;
    if (proto_get_str(cmd, "path", &path, &err) < 0) return proto_fail("protocol", err.msg, NULL);
    if (access(path, R_OK) < 0) {
        char msg[1200];
        snprintf(msg, sizeof msg, "%s: %s", path, strerror(errno));
        return proto_fail("load", msg, NULL);
    }
    if (candidate && !w->problem) return proto_fail("protocol", "load_candidate before load_problem", NULL);
    PyObject *mod = py_load_file(candidate ? "kbv_candidate" : "kbv_problem", path, candidate ? w->problem : NULL);
    if (!mod) return fail_python("load", candidate ? "loading the candidate" : "loading the problem");
    const char *need[3] = {"ModelNew", NULL, NULL};
    if (!candidate) need[0] = "Model", need[1] = "get_inputs", need[2] = "get_init_inputs";
    for (int i = 0; i < 3 && need[i]; i++) {
        PyObject *a = PyObject_GetAttrString(mod, need[i]);
        int ok = a && PyCallable_Check(a);
        Py_XDECREF(a);
        if (!ok) {
            PyErr_Clear();
            Py_DECREF(mod);
            char msg[1200];
            snprintf(msg, sizeof msg, "%s defines no callable %s", path, need[i]);
            return proto_fail("load", msg, NULL);
        }
    }
    if (candidate) Py_XSETREF(w->candidate, mod);
    else Py_XSETREF(w->problem, mod);
    return proto_ok();
}

static int seed_torch(worker *w, unsigned long long seed) {
    PyObject *r = PyObject_CallMethod(w->dl.torch, "manual_seed", "K", seed);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static json_t *cmd_build(worker *w, const json_t *cmd) {
    const char *cls;
    long long seed;
    kbv_err err;
    if (proto_get_str(cmd, "class", &cls, &err) < 0 || proto_get_int(cmd, "seed", &seed, &err) < 0)
        return proto_fail("protocol", err.msg, NULL);
    int cand = strcmp(cls, "ModelNew") == 0;
    if (!cand && strcmp(cls, "Model") != 0) return fail_text("protocol", "unknown class %s", cls);
    if (!w->problem || (cand && !w->candidate)) return proto_fail("protocol", "build before load", NULL);
    Py_CLEAR(w->model);
    if (seed_torch(w, (unsigned long long)seed) < 0) return fail_python("python", "seeding torch");
    PyObject *init = PyObject_CallMethod(w->problem, "get_init_inputs", NULL);
    if (!init) return fail_python("problem", "get_init_inputs()");
    PyObject *args = PySequence_Tuple(init);
    Py_DECREF(init);
    if (!args) return fail_python("problem", "get_init_inputs() did not return a sequence");
    if (seed_torch(w, (unsigned long long)seed) < 0) {
        Py_DECREF(args);
        return fail_python("python", "seeding torch");
    }
    PyObject *klass = PyObject_GetAttrString(cand ? w->candidate : w->problem, cls);
    PyObject *model = klass ? PyObject_Call(klass, args, NULL) : NULL;
    Py_XDECREF(klass);
    Py_DECREF(args);
    if (!model) return fail_python("python", cand ? "ModelNew(*get_init_inputs())" : "Model(*get_init_inputs())");
    PyObject *r = PyObject_CallMethod(model, "to", "s", w->cuda ? "cuda" : "cpu");
    if (r) Py_DECREF(r), r = PyObject_CallMethod(model, "eval", NULL);
    if (!r) {
        Py_DECREF(model);
        return fail_python("python", "moving the model to the device");
    }
    Py_DECREF(r);
    w->model = model;
    if (w->cuda && gpu_sync(&err) < 0) return proto_fail("cuda", err.msg, NULL);
    return proto_ok();
}

/* A Python scalar input as JSON, or NULL if it is not one. */
static json_t *scalar_to_json(PyObject *o) {
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

static PyObject *json_to_scalar(const json_t *v) {
    if (json_is_null(v)) Py_RETURN_NONE;
    if (json_is_boolean(v)) return PyBool_FromLong(json_is_true(v));
    if (json_is_integer(v)) return PyLong_FromLongLong(json_integer_value(v));
    if (json_is_real(v)) return PyFloat_FromDouble(json_real_value(v));
    PyErr_SetString(PyExc_TypeError, "unsupported scalar input");
    return NULL;
}

static json_t *tensor_desc(const char *path, const kbv_tensor *t) {
    json_t *shape = json_array(), *strides = json_array();
    for (int i = 0; i < t->ndim; i++) {
        json_array_append_new(shape, json_integer(t->shape[i]));
        json_array_append_new(strides, json_integer(t->strides[i]));
    }
    return json_pack("{s:s, s:s, s:s, s:o, s:o}", "kind", "tensor", "path", path, "dtype", kbv_dtype_name(t->dtype),
                     "shape", shape, "strides", strides);
}

/* Save each element of a sequence of tensors/scalars; kind names who is at fault. */
static json_t *save_values(worker *w, PyObject *seq, const char *prefix, const char *kind, const char *what) {
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
            if (dl_from_torch(&w->dl, item, &t, &err) < 0 || kbv_tensor_save(&t, path, &err) < 0) {
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

static json_t *cmd_make_inputs(worker *w, const json_t *cmd) {
    const char *prefix;
    long long seed;
    kbv_err err;
    if (proto_get_str(cmd, "prefix", &prefix, &err) < 0 || proto_get_int(cmd, "seed", &seed, &err) < 0)
        return proto_fail("protocol", err.msg, NULL);
    if (!w->problem) return proto_fail("protocol", "make_inputs before load_problem", NULL);
    if (seed_torch(w, (unsigned long long)seed) < 0) return fail_python("python", "seeding torch");
    PyObject *xs = PyObject_CallMethod(w->problem, "get_inputs", NULL);
    if (!xs) return fail_python("problem", "get_inputs()");
    if (!PySequence_Check(xs) || PyUnicode_Check(xs)) {
        Py_DECREF(xs);
        return proto_fail("problem", "get_inputs() did not return a list", NULL);
    }
    json_t *r = save_values(w, xs, prefix, "problem", "get_inputs()");
    Py_DECREF(xs);
    return r;
}

/* Inputs from their descriptors, as a tuple of torch tensors on the device and scalars. */
static PyObject *load_inputs(worker *w, const json_t *inputs, kbv_err *err) {
    if (!json_is_array(inputs)) return kbv_seterr(err, "\"inputs\" is not an array"), NULL;
    size_t n = json_array_size(inputs);
    PyObject *args = PyTuple_New((Py_ssize_t)n);
    if (!args) return py_take_error(err, NULL, NULL), NULL;
    for (size_t i = 0; i < n; i++) {
        const json_t *d = json_array_get(inputs, i);
        const char *kind = json_string_value(json_object_get(d, "kind"));
        PyObject *v = NULL;
        if (kind && strcmp(kind, "tensor") == 0) {
            const char *path = json_string_value(json_object_get(d, "path"));
            kbv_tensor t;
            if (!path) kbv_seterr(err, "input %zu has no path", i);
            else if (kbv_tensor_load(&t, path, err) == 0) {
                v = dl_to_torch(&w->dl, &t, err);
                kbv_tensor_free(&t);
            }
        } else if (kind && strcmp(kind, "scalar") == 0) {
            v = json_to_scalar(json_object_get(d, "value"));
            if (!v) py_take_error(err, NULL, NULL);
        } else {
            kbv_seterr(err, "input %zu has an unknown kind", i);
        }
        if (!v) {
            Py_DECREF(args);
            return NULL;
        }
        PyTuple_SET_ITEM(args, (Py_ssize_t)i, v);
    }
    return args;
}

static json_t *cmd_forward(worker *w, const json_t *cmd) {
    const char *prefix;
    kbv_err err;
    if (proto_get_str(cmd, "prefix", &prefix, &err) < 0) return proto_fail("protocol", err.msg, NULL);
    if (!w->model) return proto_fail("protocol", "forward before build", NULL);
    PyObject *args = load_inputs(w, json_object_get(cmd, "inputs"), &err);
    if (!args) return proto_fail("io", err.msg, NULL);
    double t0 = kbv_now();
    PyObject *out = PyObject_CallObject(w->model, args);
    Py_DECREF(args);
    if (!out) return fail_python("python", "forward");
    if (w->cuda && gpu_sync(&err) < 0) {
        Py_DECREF(out);
        return proto_fail("cuda", err.msg, NULL);
    }
    double wall = kbv_now() - t0;
    PyObject *seq;
    if (PyObject_IsInstance(out, w->dl.tensor_type) == 1) seq = PyTuple_Pack(1, out);
    else if (PyTuple_Check(out) || PyList_Check(out)) seq = (Py_INCREF(out), out);
    else {
        char msg[300];
        snprintf(msg, sizeof msg, "forward returned a %s, not a tensor or a tuple of tensors", Py_TYPE(out)->tp_name);
        Py_DECREF(out);
        return proto_fail("output", msg, NULL);
    }
    Py_DECREF(out);
    json_t *r = seq ? save_values(w, seq, prefix, "output", "forward output") : fail_python("python", "forward output");
    Py_XDECREF(seq);
    if (json_is_true(json_object_get(r, "ok"))) json_object_set_new(r, "wall_s", json_real(wall));
    return r;
}

static json_t *hello(worker *w, const char *device) {
    json_t *r = proto_ok();
    char ver[64] = "", gpu[256] = "";
    PyObject *v = PyObject_GetAttrString(w->dl.torch, "__version__");
    py_str(v, ver, sizeof ver);
    Py_XDECREF(v);
    json_object_set_new(r, "proto", json_integer(PROTO_VERSION));
    json_object_set_new(r, "pid", json_integer(getpid()));
    json_object_set_new(r, "python", json_string(Py_GetVersion()));
    json_object_set_new(r, "torch", json_string(ver));
    json_object_set_new(r, "device", json_string(device));
    int avail = 0;
    PyObject *cudamod = PyObject_GetAttrString(w->dl.torch, "cuda");
    PyObject *a = cudamod ? PyObject_CallMethod(cudamod, "is_available", NULL) : NULL;
    avail = a && PyObject_IsTrue(a) == 1;
    Py_XDECREF(a), Py_XDECREF(cudamod);
    PyErr_Clear();
    json_object_set_new(r, "cuda_available", json_boolean(avail));
    kbv_err err;
    if (w->cuda && gpu_device_name(gpu, sizeof gpu, &err) == 0) json_object_set_new(r, "gpu", json_string(gpu));
    return r;
}

static void usage(FILE *f) {
    fprintf(f, "usage: kbv-worker --device cpu|cuda\n"
               "  Started by kbv, not by hand: reads JSON commands on fd %d, replies on fd %d.\n"
               "  See docs/protocol.md.\n",
               PROTO_CMD_FD, PROTO_REPLY_FD);
}

int main(int argc, char **argv) {
    const char *device = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
        else if (strcmp(argv[i], "--role") == 0 && i + 1 < argc) i++; /* shown in ps; no effect */
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return usage(stdout), 0;
        else return usage(stderr), 2;
    }
    if (!device || (strcmp(device, "cpu") != 0 && strcmp(device, "cuda") != 0)) return usage(stderr), 2;
    worker w = {0};
    w.cuda = strcmp(device, "cuda") == 0;
    kbv_err err = {{0}};
    if (py_start(&err) < 0) {
        reply(proto_fail("worker", err.msg, NULL));
        return 70;
    }
    /* faulthandler prints the Python stack on a fatal signal, as evidence for "crash". */
    PyObject *fh = PyImport_ImportModule("faulthandler");
    PyObject *r = fh ? PyObject_CallMethod(fh, "enable", NULL) : NULL;
    Py_XDECREF(r), Py_XDECREF(fh);
    PyErr_Clear();
    if (dl_init(&w.dl, w.cuda, &err) < 0) {
        reply(proto_fail("worker", err.msg, NULL));
        return 70;
    }
    r = PyObject_CallMethod(w.dl.torch, "set_grad_enabled", "O", Py_False);
    Py_XDECREF(r);
    PyErr_Clear();
    if (w.cuda && gpu_init(0, &err) < 0) {
        reply(proto_fail("cuda", err.msg, NULL));
        return 70;
    }
    reply(hello(&w, device));
    proto_reader rd;
    proto_reader_init(&rd);
    char chunk[4096];
    for (;;) {
        char *line;
        size_t len;
        int got = proto_reader_next(&rd, &line, &len);
        if (got < 0) return 65;
        if (got == 0) {
            ssize_t n = read(PROTO_CMD_FD, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return 0; /* kbv closed the pipe or died */
            proto_reader_feed(&rd, chunk, (size_t)n);
            continue;
        }
        json_t *cmd;
        if (proto_parse(line, len, &cmd, &err) < 0) {
            free(line);
            reply(proto_fail("protocol", err.msg, NULL));
            continue;
        }
        free(line);
        const char *op = json_string_value(json_object_get(cmd, "op"));
        json_t *res;
        if (!op) res = proto_fail("protocol", "command has no op", NULL);
        else if (strcmp(op, "load_problem") == 0) res = cmd_load(&w, cmd, 0);
        else if (strcmp(op, "load_candidate") == 0) res = cmd_load(&w, cmd, 1);
        else if (strcmp(op, "build") == 0) res = cmd_build(&w, cmd);
        else if (strcmp(op, "make_inputs") == 0) res = cmd_make_inputs(&w, cmd);
        else if (strcmp(op, "forward") == 0) res = cmd_forward(&w, cmd);
        else if (strcmp(op, "quit") == 0) {
            json_decref(cmd);
            reply(proto_ok());
            fflush(NULL);
            _exit(0); /* skip interpreter and CUDA teardown */
        } else res = fail_text("protocol", "unknown op %s", op);
        json_decref(cmd);
        reply(res);
    }
}
