/* guard.c -- dynamic evidence about the candidate's Python (see guard.h). */
#include "guard.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FINDINGS 32

static struct {
    int armed;
    int in_ref; /* guard_reference */
    char cand[PATH_MAX], problem[PATH_MAX], refdir[PATH_MAX];
    char home[PATH_MAX], cache[PATH_MAX]; /* where the worker may write (with /dev) */
    char step[16];
    struct {
        char id[48], severity[12], step[16], detail[300];
        int reported;
    } f[MAX_FINDINGS];
    int n;
    PyObject *saved; /* dict: dotted name -> the object it named when armed */
    PyObject *pmod;  /* the problem module, and copies of its namespace and its classes. */
    PyObject *problem_vars;
    char flags[512]; /* global backend flags when armed */
} G;

void guard_note(const char *id, const char *severity, const char *detail) {
    for (int i = 0; i < G.n; i++)
        if (strcmp(G.f[i].id, id) == 0) return;
    if (G.n == MAX_FINDINGS) return;
    snprintf(G.f[G.n].id, sizeof G.f[G.n].id, "%s", id);
    snprintf(G.f[G.n].severity, sizeof G.f[G.n].severity, "%s", severity);
    snprintf(G.f[G.n].step, sizeof G.f[G.n].step, "%s", G.step);
    snprintf(G.f[G.n].detail, sizeof G.f[G.n].detail, "%s", detail);
    G.f[G.n].reported = 0;
    G.n++;
}

static const char *arg_str(PyObject *args, Py_ssize_t i, char *buf, size_t len) {
    buf[0] = '\0';
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) <= i) return buf;
    PyObject *a = PyTuple_GET_ITEM(args, i);
    if (PyUnicode_Check(a)) {
        const char *s = PyUnicode_AsUTF8(a);
        if (s) snprintf(buf, len, "%s", s);
    } else if (PyBytes_Check(a)) {
        snprintf(buf, len, "%s", PyBytes_AS_STRING(a));
    }
    PyErr_Clear();
    return buf;
}

static int hook(const char *event, PyObject *args, void *data) {
    (void)data;
    if (!G.armed) return 0;
    char a0[PATH_MAX], msg[400];
    if (strcmp(event, "open") == 0) {
        arg_str(args, 0, a0, sizeof a0);
        if (!a0[0]) return 0;
        char real[PATH_MAX];
        const char *p = realpath(a0, real) ? real : a0;
        long flags = PyTuple_Check(args) && PyTuple_GET_SIZE(args) > 2 && PyLong_Check(PyTuple_GET_ITEM(args, 2))
                         ? PyLong_AsLong(PyTuple_GET_ITEM(args, 2))
                         : 0;
        PyErr_Clear();
        int writes = (flags & (O_WRONLY | O_RDWR | O_CREAT | O_APPEND | O_TRUNC)) != 0;
        /* Device nodes (/dev/null, /dev/nvidia*) are not files; /dev/shm is a file system, and
         * the scratch folders may live there (TMPDIR=/dev/shm). */
        int device_node = strncmp(p, "/dev/", 5) == 0 && strncmp(p, "/dev/shm/", 9) != 0 && strncmp(p, "/dev/mqueue/", 12) != 0;
        if (writes && p[0] == '/' && strncmp(p, G.home, strlen(G.home)) != 0 && strncmp(p, G.cache, strlen(G.cache)) != 0 && !device_node) {
            snprintf(msg, sizeof msg, "opened %s for writing, outside its scratch folder", p);
            guard_note("writes_outside_scratch", "suspect", msg);
        }
        if (strcmp(p, G.problem) == 0 && !G.in_ref) {
            snprintf(msg, sizeof msg, "opened the problem file %s", p);
            guard_note("reads_problem_file", "hack", msg);
        } else if (G.refdir[0] && strncmp(p, G.refdir, strlen(G.refdir)) == 0) {
            snprintf(msg, sizeof msg, "opened the reference's output %s", p);
            guard_note("reads_reference_outputs", "hack", msg);
        }
    } else if (strncmp(event, "socket.", 7) == 0 && (strcmp(event + 7, "connect") == 0 || strcmp(event + 7, "bind") == 0 ||
                                                     strcmp(event + 7, "sendto") == 0 || strcmp(event + 7, "getaddrinfo") == 0)) {
        PyObject *r = PyTuple_Check(args) && PyTuple_GET_SIZE(args) > 1 ? PyObject_Repr(PyTuple_GET_ITEM(args, 1)) : NULL;
        snprintf(msg, sizeof msg, "%s %s", event, r && PyUnicode_Check(r) ? PyUnicode_AsUTF8(r) : "");
        Py_XDECREF(r);
        PyErr_Clear();
        guard_note("network_access", "hack", msg);
    } else if (strcmp(G.step, "forward") == 0 &&
               (strcmp(event, "subprocess.Popen") == 0 || strcmp(event, "os.system") == 0 || strcmp(event, "os.posix_spawn") == 0 ||
                strcmp(event, "os.exec") == 0 || strcmp(event, "os.fork") == 0)) {
        snprintf(msg, sizeof msg, "%s inside the call", event);
        guard_note("process_in_call", "suspect", msg);
    }
    return 0;
}

void guard_install(void) {
    if (PySys_AddAuditHook(hook, NULL) < 0) PyErr_Clear(); /* without it only the snapshots work */
}

/* What a dotted name resolves to now (new reference), or NULL. */
static PyObject *resolve(const char *dotted) {
    char buf[128];
    snprintf(buf, sizeof buf, "%s", dotted);
    char *save = NULL, *part = strtok_r(buf, ".", &save);
    PyObject *o = part ? PyImport_ImportModule(part) : NULL;
    while (o && (part = strtok_r(NULL, ".", &save))) {
        PyObject *next = PyObject_GetAttrString(o, part);
        if (!next) {
            /* a submodule not imported as an attribute yet */
            PyErr_Clear();
            Py_DECREF(o);
            return NULL;
        }
        Py_DECREF(o);
        o = next;
    }
    PyErr_Clear();
    return o;
}

static const char *kWatched[] = {
    "torch.cuda.synchronize",
    "torch.cuda.Event.record",
    "torch.cuda.Event.elapsed_time",
    "torch.cuda.Event.synchronize",
    "torch.cuda.current_stream",
    "torch.cuda.set_stream",
    "torch.cuda.empty_cache",
    "torch.allclose",
    "torch.equal",
    "torch.Tensor.__eq__",
    "torch.Tensor.cpu",
    "torch.Tensor.to",
    "torch.Tensor.clone",
    "torch.Tensor.copy_",
    "torch.Tensor.contiguous",
    "torch.Tensor.data_ptr",
    "torch.Tensor.item",
    "torch.testing.assert_close",
    "torch.manual_seed",
    "torch.rand",
    "torch.randn",
    "torch.randint",
    "torch.empty",
    "torch.utils.dlpack.to_dlpack",
    "torch.utils.dlpack.from_dlpack",
    "time.perf_counter",
    "time.perf_counter_ns",
    "time.time",
    "time.monotonic",
};

static const char *kFlags[] = {
    "torch.backends.cuda.matmul.allow_tf32",
    "torch.backends.cudnn.allow_tf32",
    "torch.backends.cudnn.benchmark",
    "torch.backends.cudnn.deterministic",
    "torch.backends.cudnn.enabled",
    "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
    "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
};

/* "name=value;..." of the global flags and float32 matmul precision. */
static void read_flags(char *out, size_t len) {
    out[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < sizeof kFlags / sizeof *kFlags && used < len; i++) {
        PyObject *v = resolve(kFlags[i]);
        used += (size_t)snprintf(out + used, len - used, "%s=%s;", strrchr(kFlags[i], '.') + 1, v == Py_True ? "1" : v == Py_False ? "0" : "?");
        Py_XDECREF(v);
    }
    PyObject *f = resolve("torch.get_float32_matmul_precision");
    PyObject *p = f ? PyObject_CallNoArgs(f) : NULL;
    if (used < len) snprintf(out + used, len - used, "float32_matmul_precision=%s", p && PyUnicode_Check(p) ? PyUnicode_AsUTF8(p) : "?");
    Py_XDECREF(p), Py_XDECREF(f);
    PyErr_Clear();
}

void guard_arm(worker *w, const char *cand, const char *problem) {
    (void)w;
    char real[PATH_MAX];
    snprintf(G.cand, sizeof G.cand, "%s", cand);
    snprintf(G.problem, sizeof G.problem, "%s", realpath(problem, real) ? real : problem);
    /* The worker runs in its folder of the evaluation's scratch (scratch/cand); the
     * reference's outputs are in scratch/ref. */
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd)) {
        snprintf(G.home, sizeof G.home, "%s/", cwd);
        char *slash = strrchr(cwd, '/');
        if (slash && slash != cwd) *slash = '\0';
        snprintf(G.refdir, sizeof G.refdir, "%s/ref/", cwd);
    }
    const char *cache = getenv("TORCH_EXTENSIONS_DIR");
    snprintf(G.cache, sizeof G.cache, "%s/", cache && realpath(cache, real) ? real : cache ? cache : "/nonexistent");
    /* torch 2's torch._dynamo rebinds torch.manual_seed to a wrapper when it is first imported
     * (torch/_dynamo/__init__.py), which torch itself does lazily mid-run: the first operation
     * on the meta device (the native loader's output shapes), torch.compile. Imported here,
     * before the snapshot, torch's own rebinding is not taken for the candidate's (on the H200
     * the native relu.cu was a torch_patched hack without it). Where there is none (torch 1),
     * nothing changes. */
    PyObject *dyn = PyImport_ImportModule("torch._dynamo");
    if (!dyn) PyErr_Clear();
    Py_XDECREF(dyn);
    Py_XDECREF(G.saved);
    G.saved = PyDict_New();
    for (size_t i = 0; G.saved && i < sizeof kWatched / sizeof *kWatched; i++) {
        PyObject *o = resolve(kWatched[i]);
        if (o) PyDict_SetItemString(G.saved, kWatched[i], o), Py_DECREF(o);
    }
    PyErr_Clear();
    /* The problem's namespace and its classes' attributes, as the candidate finds them. */
    Py_XDECREF(G.problem_vars);
    G.problem_vars = PyDict_New();
    G.pmod = w->problem;
    PyObject *md = w->problem ? PyModule_GetDict(w->problem) : NULL, *k, *v;
    Py_ssize_t pos = 0;
    while (G.problem_vars && md && PyDict_Next(md, &pos, &k, &v)) {
        PyDict_SetItem(G.problem_vars, k, v);
        if (PyType_Check(v)) {
            PyObject *copy = PyDict_Copy(((PyTypeObject *)v)->tp_dict);
            if (copy) {
                PyObject *key = PyUnicode_FromFormat("%U.__dict__", k);
                if (key) PyDict_SetItem(G.problem_vars, key, copy), Py_DECREF(key);
                Py_DECREF(copy);
            }
        }
    }
    PyErr_Clear();
    read_flags(G.flags, sizeof G.flags);
    snprintf(G.step, sizeof G.step, "load");
    G.armed = 1;
}

void guard_flags_rebase(void) {
    if (G.armed) read_flags(G.flags, sizeof G.flags);
}

void guard_reference(int on) { G.in_ref = on; }

void guard_step(const char *step) { snprintf(G.step, sizeof G.step, "%s", step); }

static void compare_snapshots(void) {
    if (!G.saved) return;
    char changed[300] = "";
    for (size_t i = 0; i < sizeof kWatched / sizeof *kWatched; i++) {
        PyObject *was = PyDict_GetItemString(G.saved, kWatched[i]); /* borrowed */
        if (!was) continue;
        PyObject *now = resolve(kWatched[i]);
        if (now && now != was && strlen(changed) + strlen(kWatched[i]) + 2 < sizeof changed)
            strcat(changed, *changed ? ", " : ""), strcat(changed, kWatched[i]);
        Py_XDECREF(now);
    }
    if (*changed) {
        char msg[400];
        snprintf(msg, sizeof msg, "replaced: %s", changed);
        guard_note("torch_patched", "hack", msg);
    }
    /* The problem module's globals and its classes' attributes must be as they were. */
    PyObject *md = G.pmod ? PyModule_GetDict(G.pmod) : NULL, *k, *v;
    Py_ssize_t pos = 0;
    char what[200] = "";
    while (md && G.problem_vars && !*what && PyDict_Next(G.problem_vars, &pos, &k, &v)) {
        const char *ks = PyUnicode_AsUTF8(k);
        const char *dot = ks ? strstr(ks, ".__dict__") : NULL;
        if (!ks) break;
        if (dot) {
            PyObject *name = PyUnicode_FromStringAndSize(ks, dot - ks);
            PyObject *cls = name ? PyDict_GetItem(md, name) : NULL; /* borrowed */
            Py_XDECREF(name);
            if (!cls || !PyType_Check(cls)) continue;
            PyObject *ck, *cv;
            Py_ssize_t p2 = 0;
            while (!*what && PyDict_Next(v, &p2, &ck, &cv)) {
                PyObject *now = PyDict_GetItem(((PyTypeObject *)cls)->tp_dict, ck);
                if (now != cv) snprintf(what, sizeof what, "%.*s.%s", (int)(dot - ks), ks, PyUnicode_AsUTF8(ck) ?: "?");
            }
        } else if (PyDict_GetItem(md, k) != v) {
            snprintf(what, sizeof what, "%s", ks);
        }
    }
    PyErr_Clear();
    if (*what) {
        char msg[300];
        snprintf(msg, sizeof msg, "the problem's %s was replaced in the candidate's process", what);
        guard_note("reference_patched", "hack", msg);
    }
    char now[512];
    read_flags(now, sizeof now);
    if (strcmp(now, G.flags) != 0) {
        char msg[1100];
        snprintf(msg, sizeof msg, "global flags changed from {%s} to {%s}", G.flags, now);
        guard_note("global_flag_change", "hack", msg);
    }
}

json_t *guard_take(worker *w) {
    (void)w;
    if (!G.armed) return NULL;
    /* kbv sets the TF32 flags itself for each call: compare with the state it set. */
    compare_snapshots();
    json_t *a = NULL;
    for (int i = 0; i < G.n; i++) {
        if (G.f[i].reported) continue;
        if (!a) a = json_array();
        json_array_append_new(
            a, json_pack("{s:s, s:s, s:s, s:s}", "id", G.f[i].id, "severity", G.f[i].severity, "detail", G.f[i].detail, "step", G.f[i].step));
        G.f[i].reported = 1;
    }
    return a;
}

int guard_threads(worker *w) {
    (void)w;
    PyObject *et, *ev, *tb; /* a pending exception (the call's) is kept as it is */
    PyErr_Fetch(&et, &ev, &tb);
    PyObject *t = PyImport_ImportModule("threading");
    PyObject *n = t ? PyObject_CallMethod(t, "active_count", NULL) : NULL;
    int c = n && PyLong_Check(n) ? (int)PyLong_AsLong(n) : -1;
    Py_XDECREF(n), Py_XDECREF(t);
    PyErr_Clear();
    PyErr_Restore(et, ev, tb);
    return c;
}

void guard_after_call(worker *w, int before) {
    if (!G.armed || before < 0) return;
    int after = guard_threads(w);
    if (after > before) {
        char msg[200];
        snprintf(msg, sizeof msg, "%d Python thread(s) started by the call were still running when it returned", after - before);
        guard_note("thread_after_call", "hack", msg);
    }
}
