/* inputs.c -- the problem's inputs: the probe, a case's inputs, the nominal inputs.
 *
 * probe draws get_inputs() under a few seeds and reports per input what src/probe.c finds
 * (so kbv can plan cases); gen_inputs makes one case's inputs, each either get_inputs()'s
 * value or generated from kbv's spec (src/gen.h, on the device where it runs), and keeps
 * them for the next forward. Which cases to run and what their specs say is kbv's decision;
 * calling the model is forward.c's.
 */
#include "inputs.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../gen_host.h"
#include "../gpu/gpu.h"
#include "../probe.h"
#include "../proto.h"
#include "../tensor.h"
#include "device.h"
#include "fail.h"
#include "values.h"

PyObject *nominal_inputs(worker *w, unsigned long long seed) {
    if (seed_torch(w, seed) < 0) return NULL;
    PyObject *xs = PyObject_CallMethod(w->problem, "get_inputs", NULL);
    if (!xs) return NULL;
    PyObject *list = PySequence_List(xs);
    Py_DECREF(xs);
    return list;
}

PyObject *nominal_args(worker *w, unsigned long long seed) {
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

json_t *cmd_probe(worker *w, const json_t *cmd) {
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
    long long total = 0;                          /* one draw's tensor bytes */
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
                    snprintf(msg, sizeof msg, "get_inputs(), value %zd: a %s is neither a tensor nor a number", j, Py_TYPE(v)->tp_name);
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
    kbv_tensor mask = {0};
    if (mask_path && kbv_tensor_load(&mask, mask_path, err) < 0) return NULL;
    PyObject *t = gen_tensor(w, &g, nd, sh, mask_path ? &mask : NULL, sym, err);
    kbv_tensor_free(&mask);
    return t;
}

PyObject *gen_tensor(worker *w, const kbv_gen_plan *g, int nd, const int64_t *sh, const kbv_tensor *mask, int sym, kbv_err *err) {
    kbv_dtype dt = (kbv_dtype)g->dtype;
    kbv_tensor host;
    if (kbv_tensor_describe(&host, dt, nd, sh, err) < 0) return NULL; /* the shape checked; no host memory on a GPU */
    int64_t n = kbv_tensor_numel(&host);
    size_t es = kbv_dtype_size(dt);
    if (mask && kbv_tensor_numel(mask) != n) return kbv_seterr(err, "zero mask does not fit the input"), NULL;
    int64_t d = nd >= 2 ? sh[nd - 1] : 0, batch = d ? n / (d * d) : 0;
    if (!w->cuda) {
        if (kbv_tensor_alloc(&host, dt, nd, sh, err) < 0) return NULL;
        gen_fill_host(g, host.data, n, es);
        if (mask) gen_mask_host(host.data, mask->data, n, es);
        if (sym && d) gen_symmetrize_host(host.data, batch, d, es);
        return dl_to_torch(&w->dl, &host, err);
    }
    void *dev = NULL, *dmask = NULL;
    int rc = gpu_malloc(&dev, (size_t)n * es, err);
    if (rc == 0) rc = gpu_gen_fill(g, dev, n, es, err);
    if (rc == 0 && mask) {
        rc = gpu_malloc(&dmask, (size_t)n, err);
        if (rc == 0) rc = gpu_copy_to_device(dmask, mask->data, (size_t)n, err);
        if (rc == 0) rc = gpu_gen_mask(dev, dmask, n, es, err);
        gpu_free(dmask);
    }
    if (rc == 0 && sym && d) rc = gpu_gen_symmetrize(dev, batch, d, es, err);
    if (rc < 0) {
        gpu_free(dev);
        return NULL;
    }
    return dl_wrap_device(&w->dl, dt, nd, sh, dev, err);
}

json_t *input_prints(worker *w, kbv_err *err) { return seq_prints(w, w->inputs, err); }

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

json_t *cmd_gen_inputs(worker *w, const json_t *cmd) {
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
