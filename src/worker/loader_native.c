/* loader_native.c -- native candidates: one .cu, .c, .cpp or .cc file with a C entry point.
 *
 * The ABI is include/kbv_native.h's (docs/native.md): kbv_forward(inputs, n, outputs, m,
 * stream). load compiles the file straight to a shared object (nvcc for .cu, the system's C
 * or C++ compiler for the others; no torch headers, no load_inline) in the worker's compile
 * cache folder, dlopens it, checks the ABI version and the entry point, then defines, in a
 * module of its own, `class ModelNew(Model)` whose forward passes the call's tensors, the
 * model's parameters and buffers to kbv_forward through native_call below. The class
 * subclasses the problem's Model built with the same init inputs, so it holds the weights
 * kbv gives it (load_state) and redraws (the weight cases); build, forward, timing, audit
 * and the standard step see an ordinary model.
 *
 * The outputs are allocated here, contiguous on the worker's device, with the shapes and
 * dtypes the problem's Model.forward returns for the call's inputs: found by running that
 * forward once per input signature on the meta device (kMeta), where no kernel runs and no
 * value exists, so the candidate can learn nothing from it and no reference output is left
 * in memory an output could be allocated over.
 *
 * It does not cache shared objects across workers (a compile is about a second) and does
 * not inspect the source (inspect.c does, as for any candidate).
 */
#include "loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../proto.h"
#include "fail.h"

#define KBV_NATIVE_NO_VERSION_SYMBOL /* the worker reads the candidate's, it defines none */
#include "../../include/kbv_native.h"

_Static_assert((int)KBV_NATIVE_FLOAT32 == (int)KBV_DT_F32 && (int)KBV_NATIVE_BOOL == (int)KBV_DT_BOOL && (int)KBV_NATIVE_FLOAT64 == (int)KBV_DT_F64 &&
                   (int)KBV_NATIVE_BFLOAT16 == (int)KBV_DT_BF16 && (int)KBV_NATIVE_INT64 == (int)KBV_DT_I64 && (int)KBV_NATIVE_UINT8 == (int)KBV_DT_U8,
               "kbv_native.h's dtype codes are kbv's (src/tensor.h)");

extern char **environ;

/* The header's text, built into the worker: the compile folder gets a copy, since a sandboxed
 * worker may not read kbv's own tree. (The path is the build's: make runs in the root.) */
__asm__(".pushsection .rodata\n"
        "kbv_native_h_text:\n"
        ".incbin \"include/kbv_native.h\"\n"
        ".byte 0\n"
        ".popsection\n");
extern const char kbv_native_h_text[];

#define NATIVE_CLASS   "ModelNew"
#define NATIVE_MAX_LOG 6000 /* compiler output kept in a compile_error */
#define NATIVE_MAX_IN  4096 /* tensors one call passes */

typedef int (*native_forward_fn)(const kbv_native_tensor *, int, kbv_native_tensor *, int, void *);
typedef const char *(*native_error_fn)(void);

/* What native_call needs, held by its PyCFunction (a capsule): one candidate per worker. */
typedef struct native_state {
    native_forward_fn forward;
    native_error_fn error; /* NULL: the candidate gives no message */
    worker *w;
} native_state;

static const char *const kSuffixes[] = {".cu", ".c", ".cpp", ".cc"};

static int has_suffix(const char *path, const char *sfx) {
    size_t n = strlen(path), k = strlen(sfx);
    return n > k && strcmp(path + n - k, sfx) == 0;
}

static int native_accepts(const char *path) {
    for (size_t i = 0; i < sizeof kSuffixes / sizeof *kSuffixes; i++)
        if (has_suffix(path, kSuffixes[i])) return 1;
    return 0;
}

/* ---- compiling ------------------------------------------------------------------------- */

typedef struct argv_buf {
    char *v[48];
    char store[48][512];
    int n;
} argv_buf;

static void arg(argv_buf *a, const char *fmt, const char *s) {
    if (a->n >= (int)(sizeof a->v / sizeof *a->v) - 1) return;
    snprintf(a->store[a->n], sizeof a->store[a->n], fmt, s);
    a->v[a->n] = a->store[a->n];
    a->v[++a->n] = NULL;
}

/* nvcc's target flags: TORCH_CUDA_ARCH_LIST ("8.0;9.0+PTX", as torch reads it) if set, else
 * the GPU's compute capability. 0, or -1 with the Python error pending. */
static int cuda_arch(argv_buf *a) {
    const char *list = getenv("TORCH_CUDA_ARCH_LIST");
    int added = 0;
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, "; ,");
        char tok[32] = "", num[16] = "";
        if (n > 0 && n < sizeof tok) {
            snprintf(tok, sizeof tok, "%.*s", (int)n, p);
            size_t k = 0;
            for (const char *q = tok; *q && *q != '+' && k + 1 < sizeof num; q++)
                if (*q != '.') num[k++] = *q;
            num[k] = '\0';
        }
        if (num[0] >= '0' && num[0] <= '9') {
            char flag[96];
            snprintf(flag, sizeof flag, "-gencode=arch=compute_%s,code=sm_%s", num, num);
            arg(a, "%s", flag), added++;
            if (strstr(tok, "+PTX")) snprintf(flag, sizeof flag, "-gencode=arch=compute_%s,code=compute_%s", num, num), arg(a, "%s", flag);
        }
        p += n + (p[n] != '\0');
    }
    if (added) return 0;
    PyObject *torch = PyImport_ImportModule("torch");
    PyObject *cuda = torch ? PyObject_GetAttrString(torch, "cuda") : NULL;
    PyObject *cap = cuda ? PyObject_CallMethod(cuda, "get_device_capability", NULL) : NULL;
    int major = 0, minor = 0;
    int okay = cap && PyArg_ParseTuple(cap, "ii", &major, &minor);
    Py_XDECREF(cap), Py_XDECREF(cuda), Py_XDECREF(torch);
    if (!okay) return -1;
    char flag[32], num[16];
    snprintf(num, sizeof num, "%d%d", major, minor);
    snprintf(flag, sizeof flag, "-arch=sm_%s", num);
    arg(a, "%s", flag);
    return 0;
}

/* The compiler for path: nvcc (CUDA_HOME's, else PATH's), $CC or cc, $CXX or c++. */
static void compiler(argv_buf *a, const char *path, int cu) {
    if (cu) {
        const char *home = getenv("CUDA_HOME");
        char nvcc[480];
        snprintf(nvcc, sizeof nvcc, "%s/bin/nvcc", home ? home : "");
        arg(a, "%s", home && access(nvcc, X_OK) == 0 ? nvcc : "nvcc");
    } else if (has_suffix(path, ".c")) {
        arg(a, "%s", getenv("CC") && *getenv("CC") ? getenv("CC") : "cc");
    } else {
        arg(a, "%s", getenv("CXX") && *getenv("CXX") ? getenv("CXX") : "c++");
    }
}

/* The last NATIVE_MAX_LOG bytes of the compiler's output (malloc'd; "" when unreadable). */
static char *read_log(const char *log) {
    char *text = calloc(NATIVE_MAX_LOG + 1, 1);
    FILE *f = text ? fopen(log, "r") : NULL;
    if (f) {
        if (fseek(f, 0, SEEK_END) == 0) {
            long size = ftell(f);
            if (size > NATIVE_MAX_LOG) fseek(f, size - NATIVE_MAX_LOG, SEEK_SET);
            else rewind(f);
        }
        size_t n = fread(text, 1, NATIVE_MAX_LOG, f);
        text[n] = '\0';
        fclose(f);
    }
    return text;
}

/* Run argv with its output in log; wait for it. The exit status (0: success), or -1 with
 * *why set (it could not start). */
static int spawn_wait(char *const argv[], const char *log, char *why, size_t whylen) {
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0) return snprintf(why, whylen, "posix_spawn_file_actions_init failed"), -1;
    int rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0) rc = posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid = -1;
    if (rc == 0) rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return snprintf(why, whylen, "cannot run %s: %s", argv[0], strerror(rc)), -1;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return snprintf(why, whylen, "waitpid(%s): %s", argv[0], strerror(errno)), -1;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* Write the header into dir, so that `#include "kbv_native.h"` finds kbv's own copy. */
static int write_header(const char *dir, char *why, size_t whylen) {
    char path[4200];
    snprintf(path, sizeof path, "%s/kbv_native.h", dir);
    FILE *f = fopen(path, "w");
    size_t n = strlen(kbv_native_h_text);
    int okay = f && fwrite(kbv_native_h_text, 1, n, f) == n;
    if (f && fclose(f) != 0) okay = 0;
    if (!okay) snprintf(why, whylen, "cannot write %s: %s", path, strerror(errno));
    return okay ? 0 : -1;
}

/* Compile path into so (a shared object in dir). NULL, or a failure reply: kind "load" for a
 * compile error (the candidate's compile_error, with the compiler's output). */
static json_t *compile(worker *w, const char *path, const char *dir, const char *so) {
    int cu = has_suffix(path, ".cu");
    char why[600], log[4200], inc[4200];
    snprintf(log, sizeof log, "%s/compile.log", dir);
    snprintf(inc, sizeof inc, "-I%s", dir);
    if (write_header(dir, why, sizeof why) < 0) return proto_fail("worker", why, NULL);
    argv_buf a = {.n = 0};
    compiler(&a, path, cu);
    if (cu) {
        arg(&a, "%s", "-O3"), arg(&a, "%s", "-shared"), arg(&a, "%s", "-Xcompiler"), arg(&a, "%s", "-fPIC");
        if (cuda_arch(&a) < 0) return fail_python("cuda", "the GPU's compute capability");
    } else {
        arg(&a, "%s", "-O2"), arg(&a, "%s", "-shared"), arg(&a, "%s", "-fPIC");
    }
    arg(&a, "%s", inc), arg(&a, "%s", "-o"), arg(&a, "%s", so), arg(&a, "%s", path);
    int rc = spawn_wait(a.v, log, why, sizeof why);
    if (rc < 0) return proto_fail("load", why, NULL);
    if (rc == 0) return NULL;
    char *text = read_log(log), msg[NATIVE_MAX_LOG + 800];
    snprintf(msg, sizeof msg, "compiling %s with %s failed (exit status %d):\n%s", path, a.v[0], rc, text ? text : "");
    free(text);
    (void)w;
    return proto_fail("load", msg, NULL);
}

/* ---- the call ------------------------------------------------------------------------------ */

/* kbv's dtype code of a torch dtype, by its name; 0 for one kbv does not carry. */
static int dtype_code(PyObject *dtype) {
    static const struct {
        const char *name;
        int code;
    } names[] = {{"torch.float32", KBV_NATIVE_FLOAT32}, {"torch.float16", KBV_NATIVE_FLOAT16}, {"torch.bfloat16", KBV_NATIVE_BFLOAT16},
                 {"torch.float64", KBV_NATIVE_FLOAT64}, {"torch.int32", KBV_NATIVE_INT32},     {"torch.int64", KBV_NATIVE_INT64},
                 {"torch.int16", KBV_NATIVE_INT16},     {"torch.int8", KBV_NATIVE_INT8},       {"torch.uint8", KBV_NATIVE_UINT8},
                 {"torch.bool", KBV_NATIVE_BOOL}};
    PyObject *s = PyObject_Str(dtype);
    const char *t = s ? PyUnicode_AsUTF8(s) : NULL;
    int code = 0;
    for (size_t i = 0; t && i < sizeof names / sizeof *names; i++)
        if (strcmp(t, names[i].name) == 0) code = names[i].code;
    Py_XDECREF(s);
    return t ? code : -1;
}

/* A tuple of ints into dims[0..n-1]; -1 with the Python error pending. */
static int read_dims(PyObject *seq, int64_t *dims, int n) {
    PyObject *t = seq ? PySequence_Tuple(seq) : NULL;
    if (!t) return -1;
    if (PyTuple_GET_SIZE(t) != n) {
        Py_DECREF(t);
        PyErr_SetString(PyExc_RuntimeError, "kbv native: a tensor's size and stride disagree");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        dims[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(t, i));
        if (dims[i] == -1 && PyErr_Occurred()) return Py_DECREF(t), -1;
    }
    Py_DECREF(t);
    return 0;
}

/* The descriptor of torch tensor t (its dims stored from *dims on, which advances). */
static int describe_tensor(PyObject *t, kbv_native_tensor *d, int64_t **dims, int64_t *end, int i) {
    PyObject *ptr = PyObject_CallMethod(t, "data_ptr", NULL), *dim = ptr ? PyObject_CallMethod(t, "dim", NULL) : NULL;
    PyObject *size = dim ? PyObject_CallMethod(t, "size", NULL) : NULL, *stride = size ? PyObject_CallMethod(t, "stride", NULL) : NULL;
    PyObject *dtype = stride ? PyObject_GetAttrString(t, "dtype") : NULL, *is_cuda = dtype ? PyObject_GetAttrString(t, "is_cuda") : NULL;
    int rc = -1;
    if (!is_cuda) goto done;
    d->data = PyLong_AsVoidPtr(ptr);
    long nd = PyLong_AsLong(dim);
    if (PyErr_Occurred()) goto done;
    if (nd < 0 || *dims + 2 * nd > end) {
        PyErr_Format(PyExc_RuntimeError, "kbv native: tensor %d has too many dimensions", i);
        goto done;
    }
    d->ndim = (int32_t)nd, d->shape = *dims, d->strides = *dims + nd;
    if (read_dims(size, *dims, (int)nd) < 0 || read_dims(stride, *dims + nd, (int)nd) < 0) goto done;
    *dims += 2 * nd;
    d->dtype = dtype_code(dtype);
    if (d->dtype <= 0) {
        if (d->dtype == 0) PyErr_Format(PyExc_TypeError, "kbv native: tensor %d has a dtype the ABI does not carry", i);
        goto done;
    }
    d->device = PyObject_IsTrue(is_cuda) ? KBV_NATIVE_CUDA : KBV_NATIVE_HOST;
    rc = 0;
done:
    Py_XDECREF(ptr), Py_XDECREF(dim), Py_XDECREF(size), Py_XDECREF(stride), Py_XDECREF(dtype), Py_XDECREF(is_cuda);
    return rc;
}

/* A Python number as a 0-dim host value (its bytes in *slot). */
static int describe_number(PyObject *o, kbv_native_tensor *d, double *slot, int i) {
    memset(d, 0, sizeof *d);
    d->data = slot, d->device = KBV_NATIVE_HOST;
    if (PyBool_Check(o)) {
        *(unsigned char *)slot = o == Py_True, d->dtype = KBV_NATIVE_BOOL;
    } else if (PyLong_Check(o)) {
        long long v = PyLong_AsLongLong(o);
        if (v == -1 && PyErr_Occurred()) return -1;
        memcpy(slot, &v, sizeof v), d->dtype = KBV_NATIVE_INT64;
    } else if (PyFloat_Check(o)) {
        *slot = PyFloat_AsDouble(o), d->dtype = KBV_NATIVE_FLOAT64;
    } else {
        PyErr_Format(PyExc_TypeError, "kbv native: argument %d is a %s; a native candidate takes tensors and numbers", i, Py_TYPE(o)->tp_name);
        return -1;
    }
    return 0;
}

/* torch.empty(shape, dtype=dtype, device=the worker's): a new reference or NULL. */
static PyObject *new_output(worker *w, PyObject *shape, PyObject *dtype) {
    PyObject *empty = PyObject_GetAttrString(w->dl.torch, "empty");
    PyObject *args = empty ? PyTuple_Pack(1, shape) : NULL;
    PyObject *kw = args ? Py_BuildValue("{s:O, s:s}", "dtype", dtype, "device", w->cuda ? "cuda" : "cpu") : NULL;
    PyObject *t = kw ? PyObject_Call(empty, args, kw) : NULL;
    Py_XDECREF(kw), Py_XDECREF(args), Py_XDECREF(empty);
    return t;
}

/* torch.cuda.current_stream().cuda_stream: the stream kbv_forward launches on. */
static int current_stream(worker *w, void **stream) {
    *stream = NULL;
    if (!w->cuda) return 0;
    PyObject *cuda = PyObject_GetAttrString(w->dl.torch, "cuda");
    PyObject *s = cuda ? PyObject_CallMethod(cuda, "current_stream", NULL) : NULL;
    PyObject *h = s ? PyObject_GetAttrString(s, "cuda_stream") : NULL;
    if (h) *stream = PyLong_AsVoidPtr(h);
    Py_XDECREF(h), Py_XDECREF(s), Py_XDECREF(cuda);
    return h && !PyErr_Occurred() ? 0 : -1;
}

/* _kbv_call(args, specs, kind): args is the tuple of the call's arguments, parameters and
 * buffers; specs a list of (shape, dtype), one per output; kind "tensor", "tuple" or "list",
 * how the reference returns them. Allocates the outputs, calls kbv_forward, returns them. */
static PyObject *native_call(PyObject *cap, PyObject *pyargs) {
    native_state *st = PyCapsule_GetPointer(cap, "kbv_native_state");
    PyObject *ins, *specs;
    const char *kind;
    if (!st || !PyArg_ParseTuple(pyargs, "O!O!s", &PyTuple_Type, &ins, &PyList_Type, &specs, &kind)) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(ins), m = PyList_GET_SIZE(specs);
    if (n + m > NATIVE_MAX_IN) return PyErr_Format(PyExc_RuntimeError, "kbv native: more than %d tensors in one call", NATIVE_MAX_IN);
    kbv_native_tensor *desc = calloc((size_t)(n + m) + 1, sizeof *desc);
    double *numbers = calloc((size_t)n + 1, sizeof *numbers);
    int64_t *dims = calloc((size_t)(n + m) * 2 * KBV_MAX_DIMS + 1, sizeof *dims), *next = dims, *end = dims + (n + m) * 2 * KBV_MAX_DIMS;
    PyObject *outs = PyTuple_New(m), *result = NULL;
    void *stream = NULL;
    if (!desc || !numbers || !dims || !outs) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = PyTuple_GET_ITEM(ins, i);
        int is_t = PyObject_IsInstance(a, st->w->dl.tensor_type);
        if (is_t < 0) goto done;
        if (is_t ? describe_tensor(a, &desc[i], &next, end, (int)i) < 0 : describe_number(a, &desc[i], &numbers[i], (int)i) < 0) goto done;
    }
    for (Py_ssize_t j = 0; j < m; j++) {
        PyObject *sp = PyList_GET_ITEM(specs, j), *shape, *dtype;
        if (!PyArg_ParseTuple(sp, "OO", &shape, &dtype)) goto done;
        PyObject *t = new_output(st->w, shape, dtype);
        if (!t) goto done;
        PyTuple_SET_ITEM(outs, j, t);
        if (describe_tensor(t, &desc[n + j], &next, end, (int)(n + j)) < 0) goto done;
    }
    if (current_stream(st->w, &stream) < 0) goto done;
    int rc = st->forward(desc, (int)n, desc + n, (int)m, stream);
    if (rc != 0) {
        const char *msg = st->error ? st->error() : NULL;
        PyErr_Format(PyExc_RuntimeError, "kbv_forward returned %d%s%.500s", rc, msg && *msg ? ": " : "", msg ? msg : "");
        goto done;
    }
    if (strcmp(kind, "tensor") == 0 && m == 1) result = PyTuple_GET_ITEM(outs, 0), Py_INCREF(result);
    else if (strcmp(kind, "list") == 0) result = PySequence_List(outs);
    else result = outs, Py_INCREF(result);
done:
    Py_XDECREF(outs);
    free(desc), free(numbers), free(dims);
    return result;
}

static PyMethodDef kCallDef = {"_kbv_call", native_call, METH_VARARGS, "kbv native: call kbv_forward (loader_native.c)"};

/* The class, run in the candidate module's namespace with Model (the problem's) and _kbv_call
 * in it. _kbv_specs runs Model.forward on meta copies of the arguments and of the model's
 * tensors (restored after), once per signature of the arguments. */
static const char kClass[] =
    "import torch as _kbv_torch\n"
    "_kbv_cache = {}\n"
    "def _kbv_meta(v):\n"
    "    m = _kbv_torch.empty_like(v, device='meta')\n"
    "    return _kbv_torch.nn.Parameter(m, requires_grad=v.requires_grad) if isinstance(v, _kbv_torch.nn.Parameter) else m\n"
    "def _kbv_specs(self, args):\n"
    "    key = tuple((tuple(a.shape), str(a.dtype)) if isinstance(a, _kbv_torch.Tensor) else repr(a) for a in args)\n"
    "    hit = _kbv_cache.get(key)\n"
    "    if hit is not None:\n"
    "        return hit\n"
    "    saved = []\n"
    "    try:\n"
    "        for mod in self.modules():\n"
    "            for store in (mod._parameters, mod._buffers, mod.__dict__):\n"
    "                for k, v in list(store.items()):\n"
    "                    if isinstance(v, _kbv_torch.Tensor) and (store is not mod.__dict__ or not isinstance(v, _kbv_torch.nn.Parameter)):\n"
    "                        saved.append((store, k, v))\n"
    "                        store[k] = _kbv_meta(v)\n"
    "        margs = tuple(_kbv_meta(a) if isinstance(a, _kbv_torch.Tensor) else a for a in args)\n"
    "        with _kbv_torch.no_grad():\n"
    "            out = Model.forward(self, *margs)\n"
    "    except Exception as e:\n"
    "        raise RuntimeError('kbv native: the reference\\'s output shapes could not be found on the meta device '\n"
    "                           '(docs/native.md, limits): %s: %s' % (type(e).__name__, e)) from None\n"
    "    finally:\n"
    "        for store, k, v in reversed(saved):\n"
    "            store[k] = v\n"
    "    kind = 'tensor' if isinstance(out, _kbv_torch.Tensor) else 'tuple' if isinstance(out, tuple) else 'list' if isinstance(out, list) else None\n"
    "    outs = [out] if kind == 'tensor' else list(out) if kind else []\n"
    "    if kind is None or not all(isinstance(o, _kbv_torch.Tensor) for o in outs):\n"
    "        raise RuntimeError('kbv native: the reference returns %s; native candidates return tensors only' % type(out).__name__)\n"
    "    hit = ([(tuple(o.shape), o.dtype) for o in outs], kind)\n"
    "    _kbv_cache[key] = hit\n"
    "    return hit\n"
    "class " NATIVE_CLASS "(Model):\n"
    "    def forward(self, *args):\n"
    "        specs, kind = _kbv_specs(self, args)\n"
    "        return _kbv_call(tuple(args) + tuple(self.parameters()) + tuple(self.buffers()), specs, kind)\n";

/* The module kbv_candidate holding ModelNew; a new reference or NULL (Python error pending). */
static PyObject *make_module(worker *w, native_state *st) {
    PyObject *mod = PyModule_New("kbv_candidate"), *cap = NULL, *fn = NULL, *res = NULL;
    PyObject *dict = mod ? PyModule_GetDict(mod) : NULL; /* borrowed */
    PyObject *model = dict ? PyObject_GetAttrString(w->problem, "Model") : NULL;
    if (!model || PyDict_SetItemString(dict, "Model", model) < 0 || PyDict_SetItemString(dict, "__builtins__", PyEval_GetBuiltins()) < 0) goto fail;
    cap = PyCapsule_New(st, "kbv_native_state", NULL);
    fn = cap ? PyCFunction_New(&kCallDef, cap) : NULL;
    if (!fn || PyDict_SetItemString(dict, "_kbv_call", fn) < 0) goto fail;
    res = PyRun_String(kClass, Py_file_input, dict, dict);
    if (!res) goto fail;
    Py_DECREF(res), Py_DECREF(fn), Py_DECREF(cap), Py_DECREF(model);
    return mod;
fail:
    Py_XDECREF(fn), Py_XDECREF(cap), Py_XDECREF(model), Py_XDECREF(mod);
    return NULL;
}

/* ---- the loader ---------------------------------------------------------------------------- */

static json_t *native_load(worker *w, const char *path) {
    static native_state st; /* lives as long as the worker: the class's calls use it */
    int cu = has_suffix(path, ".cu");
    if (cu && !w->cuda) return fail_text("load", "%s is a CUDA candidate: evaluate it with --device cuda", path);
    if (!cu && w->cuda) return fail_text("load", "%s is a CPU candidate (C or C++): evaluate it with --device cpu", path);
    /* A folder of this process's own in the compile cache: a standard worker compiling the
     * same candidate at the same time writes elsewhere. */
    const char *cache = getenv("TORCH_EXTENSIONS_DIR");
    char dir[4096], so[4200];
    snprintf(dir, sizeof dir, "%s/native.%ld", cache && *cache ? cache : ".", (long)getpid());
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        char msg[4200];
        snprintf(msg, sizeof msg, "cannot make %s: %s", dir, strerror(errno));
        return proto_fail("worker", msg, NULL);
    }
    snprintf(so, sizeof so, "%s/candidate.so", dir);
    json_t *fail = compile(w, path, dir, so);
    if (fail) return fail;
    void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL); /* never closed: the class calls into it */
    if (!h) return fail_text("load", "dlopen of the compiled candidate failed: %s", dlerror());
    const int *abi = dlsym(h, "kbv_native_abi_version");
    void *fwd = dlsym(h, "kbv_forward");
    if (!abi) return fail_text("load", "%s defines no kbv_native_abi_version: include kbv_native.h (docs/native.md)", path);
    if (*abi != KBV_NATIVE_ABI_VERSION) {
        char msg[1400];
        snprintf(msg, sizeof msg, "%s was built against kbv_native.h version %d; this kbv speaks version %d", path, *abi, KBV_NATIVE_ABI_VERSION);
        return proto_fail("load", msg, NULL);
    }
    if (!fwd) return fail_text("load", "%s defines no kbv_forward (extern \"C\" in C++ and CUDA; docs/native.md)", path);
    st.w = w;
    *(void **)&st.forward = fwd;
    *(void **)&st.error = dlsym(h, "kbv_native_error");
    PyObject *mod = make_module(w, &st);
    if (!mod) return fail_python("worker", "defining the native candidate's class");
    Py_XSETREF(w->candidate, mod);
    return NULL;
}

static PyObject *native_model_class(worker *w) { return PyObject_GetAttrString(w->candidate, NATIVE_CLASS); }

const cand_loader loader_native = {
    .name = "native",
    .class_name = NATIVE_CLASS,
    .accepts = native_accepts,
    .load = native_load,
    .model_class = native_model_class,
};
