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
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <malloc.h>
#include <sys/prctl.h>

#include "../gen_host.h"
#include "../gpu/gpu.h"
#include "../probe.h"
#include "../proto.h"
#include "../tensor.h"
#include "../gpu/audit.h"
#include "../gpu/timer.h"
#include "dl.h"
#include "guard.h"
#include "py.h"
#include "worker.h"


static void reply(json_t *msg) {
    kbv_err err;
    if (!msg || proto_send(PROTO_REPLY_FD, msg, &err) < 0) {
        fprintf(stderr, "kbv-worker: cannot reply: %s\n", msg ? err.msg : "out of memory");
        _exit(70);
    }
    json_decref(msg);
}

/* The pending Python exception as a failure reply of the given kind ("exit" for SystemExit). */
json_t *fail_python(const char *kind, const char *context) {
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
    if (candidate) guard_arm(w, path, w->problem_path);
    else snprintf(w->problem_path, sizeof w->problem_path, "%s", path);
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
    json_t *r = proto_ok();
    if (!candidate) {
        /* Declared input constraints (docs/correctness.md): KBV_INPUTS = {index: {...}}. */
        PyObject *decl = PyObject_GetAttrString(mod, "KBV_INPUTS");
        if (decl) {
            PyObject *jsonmod = PyImport_ImportModule("json");
            PyObject *text = jsonmod ? PyObject_CallMethod(jsonmod, "dumps", "O", decl) : NULL;
            const char *t = text ? PyUnicode_AsUTF8(text) : NULL;
            json_t *c = t ? json_loads(t, 0, NULL) : NULL;
            if (c) json_object_set_new(r, "constraints", c);
            else {
                PyErr_Clear();
                json_decref(r);
                Py_XDECREF(text), Py_XDECREF(jsonmod), Py_DECREF(decl), Py_DECREF(mod);
                return proto_fail("load", "KBV_INPUTS is not a JSON-serialisable dict", NULL);
            }
            Py_XDECREF(text), Py_XDECREF(jsonmod), Py_DECREF(decl);
        }
        PyErr_Clear();
    }
    if (candidate) Py_XSETREF(w->candidate, mod);
    else Py_XSETREF(w->problem, mod);
    return r;
}

int seed_torch(worker *w, unsigned long long seed) {
    PyObject *r = PyObject_CallMethod(w->dl.torch, "manual_seed", "K", seed);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* class(*get_init_inputs()) on the device, with torch seeded before both calls (KernelBench's
 * order). Returns a new reference, or NULL with the Python error pending and *at_init set
 * when get_init_inputs() itself failed (the problem's fault, not the class's). */
PyObject *construct(worker *w, int cand, unsigned long long seed, int *at_init) {
    *at_init = 1;
    if (seed_torch(w, seed) < 0) return NULL;
    PyObject *init = PyObject_CallMethod(w->problem, "get_init_inputs", NULL);
    PyObject *args = init ? PySequence_Tuple(init) : NULL;
    Py_XDECREF(init);
    if (!args) return NULL;
    *at_init = 0;
    PyObject *model = NULL;
    if (seed_torch(w, seed) == 0) {
        PyObject *klass = PyObject_GetAttrString(cand ? w->candidate : w->problem, cand ? "ModelNew" : "Model");
        PyObject *obj = klass ? PyObject_Call(klass, args, NULL) : NULL;
        PyObject *moved = obj ? PyObject_CallMethod(obj, "to", "s", w->cuda ? "cuda" : "cpu") : NULL;
        Py_XDECREF(moved), Py_XDECREF(klass);
        model = moved ? obj : (Py_XDECREF(obj), NULL);
    }
    Py_DECREF(args);
    return model;
}

static json_t *cmd_build(worker *w, const json_t *cmd) {
    const char *cls;
    long long seed;
    kbv_err err;
    if (proto_get_str(cmd, "class", &cls, &err) < 0 || proto_get_int(cmd, "seed", &seed, &err) < 0)
        return proto_fail("protocol", err.msg, NULL);
    int cand = strcmp(cls, "ModelNew") == 0, at_init;
    if (!cand && strcmp(cls, "Model") != 0) return fail_text("protocol", "unknown class %s", cls);
    if (!w->problem || (cand && !w->candidate)) return proto_fail("protocol", "build before load", NULL);
    Py_CLEAR(w->model);
    Py_CLEAR(w->oracle);
    long long cupti0, torch0, cupti1, torch1;
    memory_mark(w, &cupti0, &torch0);
    PyObject *model = construct(w, cand, (unsigned long long)seed, &at_init);
    if (!model)
        return at_init ? fail_python("problem", "get_init_inputs()")
                       : fail_python("python", cand ? "ModelNew(*get_init_inputs())" : "Model(*get_init_inputs())");
    PyObject *r = PyObject_CallMethod(model, "eval", NULL);
    if (!r) {
        Py_DECREF(model);
        return fail_python("python", "model.eval()");
    }
    Py_DECREF(r);
    w->model = model;
    if (cand) { /* ModelNew that runs the reference's own forward */
        PyObject *mine = PyObject_GetAttrString((PyObject *)Py_TYPE(model), "forward");
        PyObject *klass = PyObject_GetAttrString(w->problem, "Model");
        PyObject *ref = klass ? PyObject_GetAttrString(klass, "forward") : NULL;
        if (mine && ref && mine == ref) guard_note("inherits_reference", "hack", "ModelNew's forward is the problem's Model.forward");
        Py_XDECREF(mine), Py_XDECREF(ref), Py_XDECREF(klass);
        PyErr_Clear();
    }
    if (w->cuda && gpu_sync(&err) < 0) return proto_fail("cuda", err.msg, NULL);
    memory_mark(w, &cupti1, &torch1);
    json_t *rep = proto_ok();
    if (cupti0 >= 0 && cupti1 >= 0) json_object_set_new(rep, "persistent_bytes", json_integer(cupti1 - cupti0));
    if (torch0 >= 0 && torch1 >= 0) json_object_set_new(rep, "torch_persistent_bytes", json_integer(torch1 - torch0));
    return rep;
}

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

/* The device the worker runs on, as torch names it. */
static const char *devname(const worker *w) { return w->cuda ? "cuda" : "cpu"; }

/* A tensor moved to the device and made contiguous; other values as they are. */
PyObject *to_device(worker *w, PyObject *v) {
    if (PyObject_IsInstance(v, w->dl.tensor_type) != 1) return Py_INCREF(v), v;
    /* Always a fresh copy: kept nominal inputs must not be changed by the model. */
    PyObject *d = PyObject_CallMethod(v, "to", "s", devname(w));
    PyObject *c = d ? PyObject_CallMethod(d, "clone", NULL) : NULL;
    PyObject *e = c ? PyObject_CallMethod(c, "contiguous", NULL) : NULL;
    Py_XDECREF(d), Py_XDECREF(c);
    return e;
}

/* get_inputs() under a torch seed, as a new list (NULL with the Python error pending). */
PyObject *nominal_inputs(worker *w, unsigned long long seed) {
    if (seed_torch(w, seed) < 0) return NULL;
    PyObject *xs = PyObject_CallMethod(w->problem, "get_inputs", NULL);
    if (!xs) return NULL;
    PyObject *list = PySequence_List(xs);
    Py_DECREF(xs);
    return list;
}

/* The bytes of tensor v's elements (numel * element_size), or -1 with no Python error left. */
static long long tensor_bytes(PyObject *v) {
    PyObject *n = PyObject_CallMethod(v, "numel", NULL), *e = n ? PyObject_CallMethod(v, "element_size", NULL) : NULL;
    long long numel = n ? PyLong_AsLongLong(n) : -1, es = e ? PyLong_AsLongLong(e) : -1;
    Py_XDECREF(n), Py_XDECREF(e);
    PyErr_Clear();
    return numel < 0 || es <= 0 || numel > INT64_MAX / es ? -1 : numel * es;
}

/* A problem's inputs may take at most half of the machine's memory: the probe copies them,
 * and the oracle's float64 copies double them. Past that a shape is an error of the problem's,
 * said before the copies take the memory (torch.empty() does not touch its pages). */
static long long input_bytes_max(void) {
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    return pages > 0 && psize > 0 ? (long long)pages * psize / 2 : INT64_MAX;
}

#define PROBE_LARGE_BYTES (1LL << 30)

static json_t *cmd_probe(worker *w, const json_t *cmd) {
    const char *prefix;
    kbv_err err;
    json_t *seeds = json_object_get(cmd, "seeds");
    if (proto_get_str(cmd, "mask_prefix", &prefix, &err) < 0) return proto_fail("protocol", err.msg, NULL);
    if (!json_is_array(seeds) || !json_array_size(seeds)) return proto_fail("protocol", "probe needs seeds", NULL);
    if (!w->problem) return proto_fail("protocol", "probe before load_problem", NULL);
    probe_input *pr = NULL;
    json_t **scalars = NULL;
    Py_ssize_t n = -1;
    json_t *fail = NULL;
    double t_get = 0, t_copy = 0, t_scan = 0, t0; /* where a large input's probe goes (steps_s) */
    long long total = 0; /* one draw's tensor bytes */
    /* Inputs over PROBE_LARGE_BYTES get two draws, not three: each draw costs seconds per GiB
     * (torch's CPU RNG, then the scan), and with this many values a third adds nothing
     * (docs/correctness.md). */
    for (size_t k = 0; k < json_array_size(seeds) && !fail && !(k >= 2 && total > PROBE_LARGE_BYTES); k++) {
        t0 = kbv_now();
        PyObject *xs = nominal_inputs(w, (unsigned long long)json_integer_value(json_array_get(seeds, k)));
        t_get += kbv_now() - t0;
        if (!xs) {
            fail = fail_python("problem", "get_inputs()");
            break;
        }
        if (n < 0) {
            n = PyList_GET_SIZE(xs);
            pr = calloc((size_t)n + 1, sizeof *pr);
            scalars = calloc((size_t)n + 1, sizeof *scalars);
            for (Py_ssize_t j = 0; j < n; j++) probe_init(&pr[j]);
        } else if (PyList_GET_SIZE(xs) != n) {
            fail = proto_fail("problem", "get_inputs() returned a different number of inputs under another seed", NULL);
        }
        long long cap = input_bytes_max();
        total = 0;
        for (Py_ssize_t j = 0; !fail && j < n; j++) {
            PyObject *v = PyList_GET_ITEM(xs, j);
            long long nb = PyObject_IsInstance(v, w->dl.tensor_type) == 1 ? tensor_bytes(v) : 0;
            if (nb < 0 || (total += nb) > cap) {
                char shape[200], dtype[64], msg[600];
                PyObject *sh = PyObject_GetAttrString(v, "shape"), *dt = PyObject_GetAttrString(v, "dtype");
                py_str(sh, shape, sizeof shape), py_str(dt, dtype, sizeof dtype);
                Py_XDECREF(sh), Py_XDECREF(dt);
                PyErr_Clear();
                const char *shp = strncmp(shape, "torch.Size(", 11) == 0 ? shape + 11 : shape; /* torch.Size([a, b]) */
                if (shp != shape && shape[strlen(shape) - 1] == ')') shape[strlen(shape) - 1] = '\0';
                snprintf(msg, sizeof msg,
                         "get_inputs(), value %zd: a %s tensor of shape %s; the inputs take %s%.1f GiB, more than half of "
                         "this machine's memory (%.1f GiB)",
                         j, strncmp(dtype, "torch.", 6) == 0 ? dtype + 6 : dtype, shp, nb < 0 ? "more than " : "",
                         nb < 0 ? 8.0 * (1ull << 30) : (double)total / (1 << 30), (double)cap * 2 / (1 << 30));
                fail = proto_fail("problem", msg, NULL);
                break;
            }
            if (PyObject_IsInstance(v, w->dl.tensor_type) == 1) {
                kbv_tensor t;
                int borrowed;
                t0 = kbv_now();
                if (dl_borrow_host(&w->dl, v, &t, &borrowed, &err) < 0) {
                    char msg[1200];
                    snprintf(msg, sizeof msg, "get_inputs(), value %zd: %s", j, err.msg);
                    fail = proto_fail("problem", msg, NULL);
                    break;
                }
                t_copy += kbv_now() - t0, t0 = kbv_now();
                probe_add(&pr[j], &t);
                t_scan += kbv_now() - t0;
                if (!borrowed) kbv_tensor_free(&t);
            } else {
                json_t *sv = scalar_to_json(v);
                if (!sv) {
                    char msg[300];
                    snprintf(msg, sizeof msg, "get_inputs(), value %zd: a %s is neither a tensor nor a number", j,
                             Py_TYPE(v)->tp_name);
                    PyErr_Clear();
                    fail = proto_fail("problem", msg, NULL);
                    break;
                }
                json_decref(scalars[j]);
                scalars[j] = sv;
            }
        }
        Py_DECREF(xs);
    }
    json_t *list = json_array();
    for (Py_ssize_t j = 0; !fail && j < n; j++) {
        if (scalars[j] && !pr[j].nprobes) {
            json_array_append_new(list, json_pack("{s:s, s:O}", "kind", "scalar", "value", scalars[j]));
            continue;
        }
        json_t *o = probe_to_json(&pr[j]);
        json_object_set_new(o, "kind", json_string("tensor"));
        int64_t numel = 1;
        for (int d = 0; d < pr[j].ndim; d++) numel *= pr[j].shape[d];
        if (pr[j].zeros && pr[j].zero_count > 0 && pr[j].zero_count < numel && pr[j].consistent) {
            kbv_tensor m;
            char path[4200];
            snprintf(path, sizeof path, "%s%zd.kbt", prefix, j);
            if (kbv_tensor_alloc(&m, KBV_DT_BOOL, pr[j].ndim, pr[j].shape, &err) == 0) {
                memcpy(m.data, pr[j].zeros, (size_t)numel);
                if (kbv_tensor_save(&m, path, &err) == 0) json_object_set_new(o, "zero_mask", json_string(path));
                kbv_tensor_free(&m);
            }
        }
        json_array_append_new(list, o);
    }
    for (Py_ssize_t j = 0; j < n; j++) probe_free(&pr[j]), json_decref(scalars[j]);
    free(pr), free(scalars);
    if (fail) {
        json_decref(list);
        return fail;
    }
    json_t *r = proto_ok();
    json_object_set_new(r, "inputs", list);
    json_object_set_new(r, "get_inputs_s", json_real(t_get));
    json_object_set_new(r, "copy_s", json_real(t_copy));
    json_object_set_new(r, "scan_s", json_real(t_scan));
    return r;
}

/* One generated input from its spec (docs/protocol.md). */
static PyObject *make_generated(worker *w, const json_t *sp, kbv_err *err) {
    kbv_gen_plan g;
    memset(&g, 0, sizeof g);
    kbv_dtype dt = kbv_dtype_from_name(json_string_value(json_object_get(sp, "dtype")));
    json_t *shape = json_object_get(sp, "shape"), *key = json_object_get(sp, "key");
    if (dt == KBV_DT_INVALID || !json_is_array(shape) || json_array_size(shape) > KBV_MAX_DIMS || !json_is_array(key))
        return kbv_seterr(err, "bad generated-input spec"), NULL;
    int64_t sh[KBV_MAX_DIMS];
    int nd = (int)json_array_size(shape);
    for (int d = 0; d < nd; d++) sh[d] = json_integer_value(json_array_get(shape, (size_t)d));
    g.s.key[0] = (uint32_t)json_integer_value(json_array_get(key, 0));
    g.s.key[1] = (uint32_t)json_integer_value(json_array_get(key, 1));
    g.s.tag = (uint32_t)json_integer_value(json_object_get(sp, "tag"));
    g.s.input = (uint32_t)json_integer_value(json_object_get(sp, "input"));
    g.s.dist = (int)json_integer_value(json_object_get(sp, "dist"));
    g.s.domain = (int)json_integer_value(json_object_get(sp, "domain"));
    g.s.lo = (float)json_number_value(json_object_get(sp, "lo"));
    g.s.hi = (float)json_number_value(json_object_get(sp, "hi"));
    g.dtype = dt;
    g.kind = dt == KBV_DT_BOOL ? KBV_GEN_BOOL : kbv_dtype_is_float(dt) ? KBV_GEN_FLOAT : KBV_GEN_INT;
    g.ilo = json_integer_value(json_object_get(sp, "ilo"));
    g.ihi = json_integer_value(json_object_get(sp, "ihi"));
    g.p = (float)json_number_value(json_object_get(sp, "p"));
    const char *mask_path = json_string_value(json_object_get(sp, "zero_mask"));
    int sym = json_is_true(json_object_get(sp, "symmetric"));
    kbv_tensor host;
    if (kbv_tensor_alloc(&host, dt, nd, sh, err) < 0) return NULL;
    int64_t n = kbv_tensor_numel(&host);
    size_t es = kbv_dtype_size(dt);
    kbv_tensor mask = {0};
    if (mask_path && (kbv_tensor_load(&mask, mask_path, err) < 0 || kbv_tensor_numel(&mask) != n)) {
        kbv_tensor_free(&host), kbv_tensor_free(&mask);
        return err->msg[0] ? NULL : (kbv_seterr(err, "zero mask does not fit the input"), NULL);
    }
    int64_t d = nd >= 2 ? sh[nd - 1] : 0, batch = d ? n / (d * d) : 0;
    if (!w->cuda) {
        gen_fill_host(&g, host.data, n, es);
        if (mask.data) gen_mask_host(host.data, mask.data, n, es);
        if (sym && d) gen_symmetrize_host(host.data, batch, d, es);
        kbv_tensor_free(&mask);
        return dl_to_torch(&w->dl, &host, err);
    }
    kbv_tensor_free(&host);
    void *dev = NULL, *dmask = NULL;
    int rc = gpu_malloc(&dev, (size_t)n * es, err);
    if (rc == 0) rc = gpu_gen_fill(&g, dev, n, es, err);
    if (rc == 0 && mask.data) {
        rc = gpu_malloc(&dmask, (size_t)n, err);
        if (rc == 0) rc = gpu_copy_to_device(dmask, mask.data, (size_t)n, err);
        if (rc == 0) rc = gpu_gen_mask(dev, dmask, n, es, err);
        gpu_free(dmask);
    }
    if (rc == 0 && sym && d) rc = gpu_gen_symmetrize(dev, batch, d, es, err);
    kbv_tensor_free(&mask);
    if (rc < 0) {
        gpu_free(dev);
        return NULL;
    }
    return dl_wrap_device(&w->dl, dt, nd, sh, dev, err);
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

/* Fingerprints of the current inputs, as hex strings (null for non-tensors). */
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

static json_t *input_prints(worker *w, kbv_err *err) { return seq_prints(w, w->inputs, err); }

/* A case's inputs from their specs: a new tuple in *out, or NULL and a failure reply. */
json_t *make_inputs(worker *w, const json_t *specs, long long seed, PyObject **out) {
    kbv_err err = {{0}};
    *out = NULL;
    size_t n = json_array_size(specs);
    PyObject *tuple = PyTuple_New((Py_ssize_t)n), *nominal = NULL;
    if (!tuple) return fail_python("python", "gen_inputs");
    for (size_t j = 0; j < n; j++) {
        const json_t *sp = json_array_get(specs, j);
        const char *kind = json_string_value(json_object_get(sp, "kind"));
        PyObject *v = NULL;
        if (kind && strcmp(kind, "gen") == 0) {
            v = make_generated(w, sp, &err);
            if (!v) {
                Py_DECREF(tuple), Py_XDECREF(nominal);
                char msg[1300];
                snprintf(msg, sizeof msg, "generating input %zu: %s", j, err.msg);
                return proto_fail(strstr(err.msg, "cuda") ? "cuda" : "io", msg, NULL);
            }
        } else {
            if (!nominal && w->nominal && w->nominal_seed == (unsigned long long)seed) nominal = (Py_INCREF(w->nominal), w->nominal);
            if (!nominal && !(nominal = nominal_inputs(w, (unsigned long long)seed))) {
                Py_DECREF(tuple);
                return fail_python("problem", "get_inputs()");
            }
            if (nominal != w->nominal) {
                Py_XSETREF(w->nominal, (Py_INCREF(nominal), nominal));
                w->nominal_seed = (unsigned long long)seed;
            }
            if ((Py_ssize_t)j >= PyList_GET_SIZE(nominal)) {
                Py_DECREF(tuple), Py_DECREF(nominal);
                return proto_fail("problem", "get_inputs() returned fewer inputs than probed", NULL);
            }
            v = to_device(w, PyList_GET_ITEM(nominal, (Py_ssize_t)j));
            if (!v) {
                Py_DECREF(tuple), Py_DECREF(nominal);
                return fail_python("problem", "moving an input to the device");
            }
        }
        PyTuple_SET_ITEM(tuple, (Py_ssize_t)j, v);
    }
    Py_XDECREF(nominal);
    *out = tuple;
    return NULL;
}

static json_t *cmd_gen_inputs(worker *w, const json_t *cmd) {
    json_t *specs = json_object_get(cmd, "inputs");
    long long seed = 0;
    kbv_err err = {{0}};
    if (!json_is_array(specs) || proto_get_int(cmd, "seed", &seed, &err) < 0)
        return proto_fail("protocol", err.msg[0] ? err.msg : "gen_inputs needs inputs", NULL);
    if (!w->problem) return proto_fail("protocol", "gen_inputs before load_problem", NULL);
    Py_CLEAR(w->inputs);
    PyObject *tuple;
    json_t *fail = make_inputs(w, specs, seed, &tuple);
    if (fail) return fail;
    w->inputs = tuple;
    json_t *fps = input_prints(w, &err);
    if (!fps) return proto_fail(w->cuda ? "cuda" : "io", err.msg, NULL);
    json_t *r = proto_ok();
    json_object_set_new(r, "fingerprints", fps);
    return r;
}

int set_tf32(worker *w, int on) {
    PyObject *backends = PyObject_GetAttrString(w->dl.torch, "backends");
    PyObject *cuda = backends ? PyObject_GetAttrString(backends, "cuda") : NULL;
    PyObject *matmul = cuda ? PyObject_GetAttrString(cuda, "matmul") : NULL;
    PyObject *cudnn = backends ? PyObject_GetAttrString(backends, "cudnn") : NULL;
    int rc = matmul && cudnn && PyObject_SetAttrString(matmul, "allow_tf32", on ? Py_True : Py_False) == 0 &&
                     PyObject_SetAttrString(cudnn, "allow_tf32", on ? Py_True : Py_False) == 0
                 ? 0
                 : -1;
    Py_XDECREF(cudnn), Py_XDECREF(matmul), Py_XDECREF(cuda), Py_XDECREF(backends);
    guard_flags_rebase(); /* kbv's own setting is not the candidate's change */
    return rc;
}

int empty_cache(worker *w) {
    PyObject *cu = PyObject_GetAttrString(w->dl.torch, "cuda");
    PyObject *r = cu ? PyObject_CallMethod(cu, "empty_cache", NULL) : NULL;
    Py_XDECREF(r), Py_XDECREF(cu);
    return r ? 0 : -1;
}

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
        if (o && PyObject_IsInstance(o, w->dl.tensor_type) == 1 && (PyObject *)Py_TYPE(o) != w->dl.tensor_type &&
            (PyObject *)Py_TYPE(o) != param) {
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
        json_array_append_new(list, json_pack("{s:b, s:b, s:s}", "nonfinite", n > 0 && !(isfinite(mn) && isfinite(mx)),
                                              "constant", n > 1 && mn == mx, "value", value));
    }
    return list;
}

static json_t *cmd_forward(worker *w, const json_t *cmd) {
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
                if (PyObject_IsInstance(in, w->dl.tensor_type) == 1 && extent(w, in, &ilo, &ihi) == 0 && olo < ihi &&
                    ilo < ohi && olo != ohi)
                    json_array_append_new(aliases, json_pack("[n, n]", (json_int_t)k, (json_int_t)j));
            }
        Py_XDECREF(o);
        PyErr_Clear();
    }
    double t_save = kbv_now();
    json_t *r = NULL, *facts = seq && json_is_false(json_object_get(cmd, "save")) ? output_facts(w, seq) : NULL;
    int kept = facts != NULL;
    if (facts) /* kbv check: the outputs stay here */
        r = json_pack("{s:b, s:I, s:o}", "ok", 1, "count", (json_int_t)PySequence_Size(seq), "facts", facts);
    else if (seq)
        PyErr_Clear(), r = save_values(w, seq, prefix, "output", "forward output");
    else
        r = fail_python("python", "forward output");
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

/* get_inputs() under a torch seed, on the device, as call arguments (NULL with the Python
 * error pending). */
static PyObject *nominal_args(worker *w, unsigned long long seed) {
    PyObject *xs = nominal_inputs(w, seed);
    PyObject *args = xs ? PyTuple_New(PyList_GET_SIZE(xs)) : NULL;
    for (Py_ssize_t j = 0; args && j < PyList_GET_SIZE(xs); j++) {
        PyObject *v = to_device(w, PyList_GET_ITEM(xs, j));
        if (!v) {
            Py_CLEAR(args);
            break;
        }
        PyTuple_SET_ITEM(args, j, v);
    }
    Py_XDECREF(xs);
    return args;
}

/* KernelBench's own correctness check, in this one process (--protocol standard): seeds 42,
 * trial seeds from torch.randint, Model and ModelNew on the same uncloned inputs, TF32 off,
 * no eval(). Saves both outputs of every trial; kbv compares them. */
static json_t *cmd_standard(worker *w, const json_t *cmd) {
    const char *prefix;
    long long trials;
    kbv_err err;
    if (proto_get_str(cmd, "prefix", &prefix, &err) < 0 || proto_get_int(cmd, "trials", &trials, &err) < 0)
        return proto_fail("protocol", err.msg, NULL);
    if (!w->problem || !w->candidate) return proto_fail("protocol", "standard before load_candidate", NULL);
    if (w->cuda && set_tf32(w, 0) < 0) PyErr_Clear();
    long long *seeds = calloc((size_t)trials + 1, sizeof *seeds);
    if (seed_torch(w, 42) < 0) return free(seeds), fail_python("python", "seeding torch");
    for (long long t = 0; t < trials; t++) {
        PyObject *ri = PyObject_CallMethod(w->dl.torch, "randint", "LL(i)", 0LL, 4294967295LL, 1);
        PyObject *item = ri ? PyObject_CallMethod(ri, "item", NULL) : NULL;
        seeds[t] = item ? PyLong_AsLongLong(item) : 0;
        Py_XDECREF(item), Py_XDECREF(ri);
        if (!item) return free(seeds), fail_python("python", "drawing KernelBench's trial seeds");
    }
    PyObject *models[2] = {NULL, NULL};
    int at_init = 0;
    for (int m = 0; m < 2 && (m == 0 || models[0]); m++) models[m] = construct(w, m, 42, &at_init);
    if (!models[0] || !models[1]) {
        json_t *f = fail_python(models[0] ? "python" : "problem", at_init ? "get_init_inputs()"
                                : models[0] ? "ModelNew(*get_init_inputs())" : "Model(*get_init_inputs())");
        Py_XDECREF(models[0]), Py_XDECREF(models[1]), free(seeds);
        return f;
    }
    json_t *list = json_array(), *fail = NULL;
    for (long long t = 0; t < trials && !fail; t++) {
        PyObject *args = nominal_args(w, (unsigned long long)seeds[t]);
        if (!args) {
            fail = fail_python("problem", "get_inputs()");
            break;
        }
        json_t *trial = json_pack("{s:I}", "seed", (json_int_t)seeds[t]);
        for (int m = 0; m < 2 && !fail; m++) {
            PyObject *out = PyObject_CallObject(models[m], args);
            if (out && w->cuda && gpu_sync(&err) < 0) {
                fail = proto_fail(m ? "cuda" : "problem", err.msg, NULL);
                Py_DECREF(out);
                break;
            }
            if (!out) {
                fail = fail_python(m ? "python" : "problem", m ? "ModelNew forward" : "Model forward");
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
    /* KernelBench's timing: get_inputs() under seed 42, 3 warm-ups, the mean of the trials,
     * the reference first. */
    long long time_trials = json_integer_value(json_object_get(cmd, "time_trials"));
    double mean[2] = {0, 0};
    if (!fail && time_trials > 0) {
        PyObject *args = nominal_args(w, 42);
        if (!args) fail = fail_python("problem", "get_inputs()");
        for (int m = 0; m < 2 && !fail; m++) {
            fail = standard_time(w, models[m], args, 3, (int)time_trials, &mean[m]);
            if (fail && m == 0) json_object_set_new(fail, "kind", json_string("problem"));
        }
        Py_XDECREF(args);
    }
    Py_DECREF(models[0]), Py_DECREF(models[1]);
    free(seeds);
    if (fail) {
        json_decref(list);
        return fail;
    }
    json_t *r = proto_ok();
    json_object_set_new(r, "trials", list);
    if (time_trials > 0)
        json_object_set_new(r, "time_ms", json_pack("{s:f, s:f, s:I}", "reference", mean[0], "candidate", mean[1], "trials", (json_int_t)time_trials));
    return r;
}

/* The model's state_dict as .kbt files: [{name, path, dtype, shape}]. */
static json_t *cmd_save_state(worker *w, const json_t *cmd) {
    const char *prefix;
    kbv_err err;
    if (proto_get_str(cmd, "prefix", &prefix, &err) < 0) return proto_fail("protocol", err.msg, NULL);
    if (!w->model) return proto_fail("protocol", "save_state before build", NULL);
    PyObject *sd = PyObject_CallMethod(w->model, "state_dict", NULL);
    PyObject *items = sd ? PyMapping_Items(sd) : NULL;
    Py_XDECREF(sd);
    if (!items) return fail_python("python", "state_dict()");
    json_t *list = json_array();
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *kv = PyList_GET_ITEM(items, i);
        char name[512], path[4200];
        py_str(PyTuple_GET_ITEM(kv, 0), name, sizeof name);
        kbv_tensor t;
        snprintf(path, sizeof path, "%s%zd.kbt", prefix, i);
        if (dl_save_torch(&w->dl, PyTuple_GET_ITEM(kv, 1), path, &t, &err) < 0) {
            kbv_tensor_free(&t);
            PyErr_Clear();
            continue; /* a state entry kbv cannot carry (e.g. complex) is simply not compared */
        }
        json_t *d = tensor_desc(path, &t);
        json_object_set_new(d, "name", json_string(name));
        json_array_append_new(list, d);
        kbv_tensor_free(&t);
    }
    Py_DECREF(items);
    json_t *r = proto_ok();
    json_object_set_new(r, "state", list);
    return r;
}

/* Give the model the reference's state if its entries have the same names and shapes but
 * other values. Reply: matched (names and shapes equal), differing (entries with other
 * values), loaded. */
static json_t *cmd_load_state(worker *w, const json_t *cmd) {
    json_t *state = json_object_get(cmd, "state");
    kbv_err err;
    if (!json_is_array(state)) return proto_fail("protocol", "load_state needs state", NULL);
    if (!w->model) return proto_fail("protocol", "load_state before build", NULL);
    PyObject *sd = PyObject_CallMethod(w->model, "state_dict", NULL);
    if (!sd) return fail_python("python", "state_dict()");
    int matched = PyMapping_Size(sd) == (Py_ssize_t)json_array_size(state), differing = 0;
    PyObject *fresh = PyDict_New();
    for (size_t i = 0; matched && i < json_array_size(state); i++) {
        const json_t *e = json_array_get(state, i);
        const char *name = json_string_value(json_object_get(e, "name")), *path = json_string_value(json_object_get(e, "path"));
        PyObject *mine = name ? PyMapping_GetItemString(sd, name) : NULL;
        kbv_tensor theirs, own;
        if (!mine || !path || kbv_tensor_load(&theirs, path, &err) < 0) {
            PyErr_Clear();
            Py_XDECREF(mine);
            matched = 0;
            break;
        }
        if (dl_from_torch(&w->dl, mine, &own, &err) < 0) {
            PyErr_Clear();
            own.data = NULL;
        }
        int same_shape = own.data && own.ndim == theirs.ndim && own.dtype == theirs.dtype;
        for (int d = 0; same_shape && d < own.ndim; d++) same_shape = own.shape[d] == theirs.shape[d];
        if (!same_shape) matched = 0;
        else if (memcmp(own.data, theirs.data, own.nbytes) != 0) {
            differing++;
            PyObject *t = dl_to_torch(&w->dl, &theirs, &err);
            if (!t || PyDict_SetItemString(fresh, name, t) < 0) matched = 0, PyErr_Clear();
            Py_XDECREF(t);
        }
        kbv_tensor_free(&own), kbv_tensor_free(&theirs);
        Py_DECREF(mine);
    }
    int loaded = 0;
    if (matched && differing) {
        /* strict=False: only the differing entries are given; names were checked above. */
        PyObject *kw = Py_BuildValue("{s:O}", "strict", Py_False);
        PyObject *args = PyTuple_Pack(1, fresh);
        PyObject *fn = PyObject_GetAttrString(w->model, "load_state_dict");
        PyObject *r = fn && args && kw ? PyObject_Call(fn, args, kw) : NULL;
        loaded = r != NULL;
        Py_XDECREF(r), Py_XDECREF(fn), Py_XDECREF(args), Py_XDECREF(kw);
        if (!loaded) {
            Py_DECREF(fresh), Py_DECREF(sd);
            return fail_python("python", "load_state_dict with the reference's weights");
        }
    }
    Py_DECREF(fresh), Py_DECREF(sd);
    json_t *r = proto_ok();
    json_object_set_new(r, "matched", json_boolean(matched));
    json_object_set_new(r, "differing", json_integer(differing));
    json_object_set_new(r, "loaded", json_boolean(loaded));
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
    fprintf(f, "usage: kbv-worker --device cpu|cuda [--role NAME] [--private]\n"
               "  Started by kbv, not by hand: reads JSON commands on fd %d, replies on fd %d.\n"
               "  --role is shown in ps; --private makes the process non-dumpable (no /proc/PID/mem, no ptrace).\n"
               "  See docs/protocol.md.\n",
               PROTO_CMD_FD, PROTO_REPLY_FD);
}

int main(int argc, char **argv) {
    const char *device = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
        else if (strcmp(argv[i], "--role") == 0 && i + 1 < argc) i++; /* shown in ps; no effect */
        else if (strcmp(argv[i], "--private") == 0) {
            /* The reference's memory holds the outputs: not readable through /proc or ptrace
             * by a same-user process (docs/security.md). */
            prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        }
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return usage(stdout), 0;
        else return usage(stderr), 2;
    }
    if (!device || (strcmp(device, "cpu") != 0 && strcmp(device, "cuda") != 0)) return usage(stderr), 2;
    worker w = {0};
    w.cuda = strcmp(device, "cuda") == 0;
    /* Fixed malloc thresholds: glibc's dynamic ones depend on what a process freed before, so
     * two workers running the same code would take large buffers from the heap in one and
     * from fresh (page-faulting) mmaps in the other, and time differently. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    kbv_err err = {{0}};
    if (py_start(&err) < 0) {
        reply(proto_fail("worker", err.msg, NULL));
        return 70;
    }
    guard_install();
    /* faulthandler prints the Python stack on a fatal signal, as evidence for "crash". */
    PyObject *fh = PyImport_ImportModule("faulthandler");
    PyObject *r = fh ? PyObject_CallMethod(fh, "enable", NULL) : NULL;
    Py_XDECREF(r), Py_XDECREF(fh);
    PyErr_Clear();
    /* CUPTI before torch: every device allocation from the first one on is recorded. */
    if (w.cuda && audit_available()) {
        if (audit_start(&err) < 0) {
            reply(proto_fail("cuda", err.msg, NULL));
            return 70;
        }
        w.audit = 1;
    }
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
        if (op) guard_step(strcmp(op, "build") == 0 ? "build" : strcmp(op, "forward") == 0 || strcmp(op, "standard") == 0 ? "forward"
                           : strncmp(op, "bench", 5) == 0 || strcmp(op, "audit") == 0 ? "timing" : "load");
        if (!op) res = proto_fail("protocol", "command has no op", NULL);
        else if (strcmp(op, "load_problem") == 0) res = cmd_load(&w, cmd, 0);
        else if (strcmp(op, "load_candidate") == 0) res = cmd_load(&w, cmd, 1);
        else if (strcmp(op, "build") == 0) res = cmd_build(&w, cmd);
        else if (strcmp(op, "probe") == 0) res = cmd_probe(&w, cmd);
        else if (strcmp(op, "gen_inputs") == 0) res = cmd_gen_inputs(&w, cmd);
        else if (strcmp(op, "standard") == 0) res = cmd_standard(&w, cmd);
        else if (strcmp(op, "save_state") == 0) res = cmd_save_state(&w, cmd);
        else if (strcmp(op, "load_state") == 0) res = cmd_load_state(&w, cmd);
        else if (strcmp(op, "forward") == 0) res = cmd_forward(&w, cmd);
        else if (strcmp(op, "bench_setup") == 0) res = cmd_bench_setup(&w, cmd);
        else if (strcmp(op, "bench") == 0) res = cmd_bench(&w, cmd);
        else if (strcmp(op, "audit") == 0) res = cmd_audit(&w, cmd);
        else if (strcmp(op, "memo_probe") == 0) res = cmd_memo_probe(&w, cmd);
        else if (strcmp(op, "inspect") == 0) res = cmd_inspect(&w, cmd);
        else if (strcmp(op, "quit") == 0) {
            json_decref(cmd);
            reply(proto_ok());
            fflush(NULL);
            _exit(0); /* skip interpreter and CUDA teardown */
        } else res = fail_text("protocol", "unknown op %s", op);
        json_decref(cmd);
        json_t *g = res ? guard_take(&w) : NULL;
        if (g) json_object_set_new(res, "guard", g);
        reply(res);
    }
}
