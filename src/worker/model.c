/* model.c -- loading the problem and the candidate, building a model, its state_dict.
 *
 * The problem is a Python module defining Model, get_inputs and get_init_inputs (and maybe
 * KBV_INPUTS); the candidate is whatever its loader (loader.h) takes, chosen by the file's
 * kind, and only the loader knows what the file must define. build constructs one of the
 * two with the problem's init inputs and reports the device memory it kept; save_state and
 * load_state carry the reference's weights to the candidate; redraw_weights gives the
 * reference's floating state new values for kbv's weight cases, and puts it back (the rule
 * is docs/correctness.md's, "Weight cases"). Calling the model is left to forward.c, bench.c
 * and standard.c.
 */
#include "model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../gpu/gpu.h"
#include "../proto.h"
#include "device.h"
#include "fail.h"
#include "guard.h"
#include "inputs.h"
#include "loader.h"
#include "values.h"

/* A load command's path, readable: NULL and *fail set otherwise. */
static const char *load_path(const json_t *cmd, json_t **fail) {
    const char *path;
    kbv_err err;
    if (proto_get_str(cmd, "path", &path, &err) < 0) return *fail = proto_fail("protocol", err.msg, NULL), NULL;
    if (access(path, R_OK) < 0) {
        char msg[1200];
        snprintf(msg, sizeof msg, "%s: %s", path, strerror(errno));
        return *fail = proto_fail("load", msg, NULL), NULL;
    }
    return path;
}

json_t *cmd_load_problem(worker *w, const json_t *cmd) {
    json_t *fail = NULL;
    const char *path = load_path(cmd, &fail);
    if (!path) return fail;
    snprintf(w->problem_path, sizeof w->problem_path, "%s", path);
    PyObject *mod = py_load_file("kbv_problem", path, NULL);
    if (!mod) return fail_python("load", "loading the problem");
    const char *need[3] = {"Model", "get_inputs", "get_init_inputs"};
    for (int i = 0; i < 3; i++) {
        if (!py_has_callable(mod, need[i])) {
            Py_DECREF(mod);
            char msg[1200];
            snprintf(msg, sizeof msg, "%s defines no callable %s", path, need[i]);
            return proto_fail("load", msg, NULL);
        }
    }
    json_t *r = proto_ok();
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
    Py_XSETREF(w->problem, mod);
    return r;
}

/* The candidate, through the loader its file's kind picks; the guard watches from here on. */
json_t *cmd_load_candidate(worker *w, const json_t *cmd) {
    json_t *fail = NULL;
    const char *path = load_path(cmd, &fail);
    if (!path) return fail;
    if (!w->problem) return proto_fail("protocol", "load_candidate before load_problem", NULL);
    guard_arm(w, path, w->problem_path);
    const cand_loader *ld = loader_find(path);
    if (!ld) return fail_text("load", "%s: no loader takes this kind of file", path);
    if ((fail = ld->load(w, path))) return fail;
    w->loader = ld;
    return proto_ok();
}

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
        PyObject *klass = cand ? w->loader->model_class(w) : PyObject_GetAttrString(w->problem, "Model");
        PyObject *obj = klass ? PyObject_Call(klass, args, NULL) : NULL;
        PyObject *moved = obj ? PyObject_CallMethod(obj, "to", "s", w->cuda ? "cuda" : "cpu") : NULL;
        Py_XDECREF(moved), Py_XDECREF(klass);
        model = moved ? obj : (Py_XDECREF(obj), NULL);
    }
    Py_DECREF(args);
    return model;
}

/* build {model: "reference" | "candidate", seed}: the model the next commands call. */
json_t *cmd_build(worker *w, const json_t *cmd) {
    const char *which;
    long long seed;
    kbv_err err;
    if (proto_get_str(cmd, "model", &which, &err) < 0 || proto_get_int(cmd, "seed", &seed, &err) < 0) return proto_fail("protocol", err.msg, NULL);
    int cand = strcmp(which, "candidate") == 0, at_init;
    if (!cand && strcmp(which, "reference") != 0) return fail_text("protocol", "unknown model %s", which);
    if (!w->problem || (cand && !w->candidate)) return proto_fail("protocol", "build before load", NULL);
    char what[200];
    snprintf(what, sizeof what, "%s(*get_init_inputs())", cand ? w->loader->class_name : "Model");
    Py_CLEAR(w->model);
    Py_CLEAR(w->oracle);
    Py_CLEAR(w->weights0);
    long long cupti0, torch0, cupti1, torch1;
    memory_mark(w, &cupti0, &torch0);
    PyObject *model = construct(w, cand, (unsigned long long)seed, &at_init);
    if (!model) return at_init ? fail_python("problem", "get_init_inputs()") : fail_python("python", what);
    PyObject *r = PyObject_CallMethod(model, "eval", NULL);
    if (!r) {
        Py_DECREF(model);
        return fail_python("python", "model.eval()");
    }
    Py_DECREF(r);
    w->model = model;
    if (cand) { /* a candidate class that runs the reference's own forward */
        PyObject *mine = PyObject_GetAttrString((PyObject *)Py_TYPE(model), "forward");
        PyObject *klass = PyObject_GetAttrString(w->problem, "Model");
        PyObject *ref = klass ? PyObject_GetAttrString(klass, "forward") : NULL;
        if (mine && ref && mine == ref) {
            char note[200];
            snprintf(note, sizeof note, "%s's forward is the problem's Model.forward", w->loader->class_name);
            guard_note("inherits_reference", "hack", note);
        }
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

/* The model's state_dict as .kbt files PREFIX<i>.kbt: a reply with state [{name, path, dtype,
 * shape}], or a failure reply. */
static json_t *save_state(worker *w, const char *prefix) {
    kbv_err err;
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

json_t *cmd_save_state(worker *w, const json_t *cmd) {
    const char *prefix;
    kbv_err err;
    if (proto_get_str(cmd, "prefix", &prefix, &err) < 0) return proto_fail("protocol", err.msg, NULL);
    if (!w->model) return proto_fail("protocol", "save_state before build", NULL);
    return save_state(w, prefix);
}

/* Give the model the reference's state if its entries have the same names and shapes but
 * other values. Reply: matched (names and shapes equal), differing (entries with other
 * values), loaded. */
json_t *cmd_load_state(worker *w, const json_t *cmd) {
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

/* New values for the model's floating state_dict entries, from the entries as built (so that
 * every redraw starts from the same tensors, kept on the host: snapshot):
 *   - a constant tensor c (ones, zeros, a fill; one element): uniform on c +- s, with the
 *     spread s = 0.5 max(|c|, 1);
 *   - a tensor of integers or a mask (every element integral, not all equal), or one holding
 *     NaN or Inf: kept, as structure rather than a weight;
 *   - any other: normal with the tensor's own mean and standard deviation;
 *   - where every element was >= 0 (variances, scales), the new values' magnitudes.
 * The statistics come from the host copy, in C (stats: kbv_weight_stats over the copy's
 * memory, summed in double in index order, the same bits on any host); the values from kbv's own generator
 * (gen.h, under a key from kbv's seed and the entry's place in the state_dict: draw, made on
 * the worker's device with the same bits on the CPU and the GPU), scaled in float64 on the
 * entry's device (IEEE-rounded products and sums: the same bits again), 4 Mi elements at a
 * time, so that the device holds no more than the draw's float32 values beside the model
 * (kbv's admission counts what the cases used, not the redraw). torch's CPU
 * generator took 23 core-seconds a redraw for a level-3 model (call CB). Integer, boolean and
 * complex entries are not touched. redraw and restore return (entries redrawn, floating
 * entries kept as built). */
static const char kRedraw[] = "import torch\n"
                              "CHUNK = 1 << 22\n"
                              "def snapshot(model):\n"
                              "    return {k: t.detach().to('cpu', copy=True) for k, t in model.state_dict().items()\n"
                              "            if isinstance(t, torch.Tensor) and t.is_floating_point()}\n"
                              "def redraw(model, orig, draw, stats):\n"
                              "    sd = model.state_dict()\n"
                              "    done = kept = 0\n"
                              "    with torch.no_grad():\n"
                              "        for i, (k, o) in enumerate(orig.items()):\n"
                              "            st = stats(o)\n"
                              "            if st is None:\n"
                              "                sd[k].copy_(o)\n"
                              "                kept += 1\n"
                              "                continue\n"
                              "            lo, mean, std = st\n"
                              "            dst = sd[k]\n"
                              "            u = draw(i, o.numel(), mean is None).to(dst.device)\n"
                              "            out = dst.view(-1) if dst.is_contiguous() else torch.empty(o.numel(), dtype=dst.dtype, device=dst.device)\n"
                              "            for c in range(0, o.numel(), CHUNK):\n"
                              "                v = u[c:c + CHUNK].to(torch.float64)\n"
                              "                if mean is None:\n"
                              "                    v.mul_(2.0).sub_(1.0).mul_(0.5 * max(abs(lo), 1.0)).add_(lo)\n"
                              "                else:\n"
                              "                    v.mul_(std).add_(mean)\n"
                              "                if lo >= 0:\n"
                              "                    v.abs_()\n"
                              "                out[c:c + CHUNK].copy_(v)\n"
                              "            if out.data_ptr() != dst.data_ptr():\n"
                              "                dst.copy_(out.view(o.shape))\n"
                              "            del u, out\n"
                              "            done += 1\n"
                              "    return done, kept\n"
                              "def restore(model, orig):\n"
                              "    sd = model.state_dict()\n"
                              "    with torch.no_grad():\n"
                              "        for k, o in orig.items():\n"
                              "            sd[k].copy_(o)\n"
                              "    return 0, len(orig)\n";

/* redraw's draw(i, n, uniform): n float32 values of kbv's generator on the worker's device,
 * N(0,1) (Irwin-Hall) or, with uniform, U[0,1), for the i-th floating entry, under the key of
 * the redraw's seed. The capsule both functions are bound to holds that key and the worker. */
typedef struct redraw_key {
    worker *w;
    uint32_t key[2];
} redraw_key;

static void redraw_key_free(PyObject *cap) { free(PyCapsule_GetPointer(cap, "kbv.redraw_key")); }

static PyObject *redraw_draw(PyObject *self, PyObject *args) {
    const redraw_key *k = PyCapsule_GetPointer(self, "kbv.redraw_key");
    unsigned int tag;
    long long n;
    int uniform;
    if (!k || !PyArg_ParseTuple(args, "ILp", &tag, &n, &uniform)) return NULL;
    if (n < 0) return PyErr_SetString(PyExc_ValueError, "draw: negative count"), NULL;
    kbv_gen_plan g;
    memset(&g, 0, sizeof g);
    g.s.key[0] = k->key[0], g.s.key[1] = k->key[1];
    g.s.tag = tag, g.s.input = 0xFFFFu; /* no case input has this index */
    g.s.dist = uniform ? KBV_DIST_UNIFORM01 : KBV_DIST_NORMAL, g.s.domain = KBV_DOM_RAW;
    g.kind = KBV_GEN_FLOAT, g.dtype = KBV_DT_F32;
    int64_t sh[1] = {n};
    kbv_err err = {{0}};
    PyObject *t = gen_tensor(k->w, &g, 1, sh, NULL, 0, &err);
    if (!t && !PyErr_Occurred()) PyErr_Format(PyExc_RuntimeError, "kbv's weight draw: %s", err.msg);
    return t;
}

/* redraw's stats(t), t an entry as built (a host tensor): kbv_weight_stats over its values,
 * read in place through DLPack (dl_borrow_host): None (kept as built), (lo, None, None) for a
 * constant, or (lo, mean, sd). */
static PyObject *redraw_stats(PyObject *self, PyObject *args) {
    const redraw_key *k = PyCapsule_GetPointer(self, "kbv.redraw_key");
    PyObject *t;
    if (!k || !PyArg_ParseTuple(args, "O", &t)) return NULL;
    kbv_tensor v;
    int borrowed;
    kbv_err err = {{0}};
    if (dl_borrow_host(&k->w->dl, t, &v, &borrowed, &err) < 0) return PyErr_Format(PyExc_RuntimeError, "kbv's weight statistics: %s", err.msg);
    double lo, mean, sd;
    int kind = kbv_weight_stats(v.data, v.dtype, kbv_tensor_numel(&v), &lo, &mean, &sd);
    if (!borrowed) kbv_tensor_free(&v);
    if (kind == KBV_WSTATS_KEEP) Py_RETURN_NONE;
    return kind == KBV_WSTATS_CONST ? Py_BuildValue("(dOO)", lo, Py_None, Py_None) : Py_BuildValue("(ddd)", lo, mean, sd);
}

static PyMethodDef kRedrawStats = {"stats", redraw_stats, METH_VARARGS, NULL};
static PyMethodDef kRedrawDraw = {"draw", redraw_draw, METH_VARARGS, NULL};

/* The draw and stats functions for seed (new references), or -1 with the Python error pending. */
static int redraw_functions(worker *w, unsigned long long seed, PyObject **draw, PyObject **stats) {
    *draw = *stats = NULL;
    redraw_key *k = malloc(sizeof *k);
    if (!k) return PyErr_NoMemory(), -1;
    k->w = w, k->key[0] = (uint32_t)seed, k->key[1] = (uint32_t)(seed >> 32);
    PyObject *cap = PyCapsule_New(k, "kbv.redraw_key", redraw_key_free);
    if (!cap) {
        free(k);
        return -1;
    }
    *draw = PyCFunction_New(&kRedrawDraw, cap);
    *stats = *draw ? PyCFunction_New(&kRedrawStats, cap) : NULL;
    Py_DECREF(cap);
    if (!*stats) Py_CLEAR(*draw);
    return *stats ? 0 : -1;
}

/* redraw_weights {seed, prefix, restore}: the built model's floating state redrawn under seed
 * (kRedraw), or with restore as it was built; with prefix, the whole state_dict then saved as
 * save_state saves it. Reply: redrawn, kept (and state). The float64 oracle copy is dropped:
 * the next float64 call copies the model with its new values. */
json_t *cmd_redraw_weights(worker *w, const json_t *cmd) {
    const json_t *pj = json_object_get(cmd, "prefix"), *sj = json_object_get(cmd, "seed");
    int restore = json_is_true(json_object_get(cmd, "restore"));
    kbv_err err;
    if ((pj && !json_is_string(pj)) || (!restore && !json_is_integer(sj)))
        return proto_fail("protocol", "redraw_weights needs an integer seed (unless restore) and a string prefix if any", NULL);
    if (!w->model) return proto_fail("protocol", "redraw_weights before build", NULL);
    PyObject *code = Py_CompileString(kRedraw, "<kbv redraw>", Py_file_input);
    PyObject *mod = code ? PyImport_ExecCodeModule("_kbv_redraw", code) : NULL;
    Py_XDECREF(code);
    if (!mod) return fail_python("python", "preparing the weight redraw");
    if (!w->weights0) w->weights0 = PyObject_CallMethod(mod, "snapshot", "O", w->model);
    PyObject *draw = NULL, *stats = NULL;
    if (w->weights0 && !restore) redraw_functions(w, (unsigned long long)json_integer_value(sj), &draw, &stats);
    PyObject *res = !w->weights0      ? NULL
                    : restore         ? PyObject_CallMethod(mod, "restore", "OO", w->model, w->weights0)
                    : stats           ? PyObject_CallMethod(mod, "redraw", "OOOO", w->model, w->weights0, draw, stats)
                                      : NULL;
    Py_XDECREF(draw), Py_XDECREF(stats);
    Py_DECREF(mod);
    long long redrawn = 0, kept = 0;
    int parsed = res && PyArg_ParseTuple(res, "LL", &redrawn, &kept);
    Py_XDECREF(res);
    Py_CLEAR(w->oracle);
    if (!parsed) return fail_python("python", restore ? "restoring the weights as built" : "redrawing the weights");
    if (w->cuda && gpu_sync(&err) < 0) return proto_fail("cuda", err.msg, NULL);
    json_t *r = pj ? save_state(w, json_string_value(pj)) : proto_ok();
    if (json_is_true(json_object_get(r, "ok"))) {
        json_object_set_new(r, "redrawn", json_integer(redrawn));
        json_object_set_new(r, "kept", json_integer(kept));
    }
    return r;
}
