/* py.c -- CPython embedding for kbv-worker.
 *
 * The interpreter's search path is fixed at build time from the interpreter that has
 * torch (PYTHON= in the Makefile), so a worker started with a scrubbed environment finds
 * the same packages, including those of a virtual environment.
 */
#include "py.h"

#include <link.h>
#include <string.h>

#include "pyconf.h" /* generated: KBV_PY_EXECUTABLE, KBV_PY_PATHS */

int py_start(kbv_err *err) {
    PyStatus st;
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.parse_argv = 0;
    config.write_bytecode = 0; /* no __pycache__ beside problem or candidate files */
    config.user_site_directory = 0;
    config.use_environment = 0; /* PYTHON* variables of the caller do not apply */
    /* kbv's read-only bytecode tree (pycache.c), where kbv gives one: the modules' bytecode
     * is read from there, checked against their sources as ever */
    const char *prefix = getenv("KBV_PYCACHE");
    if (prefix && prefix[0] == '/') {
        st = PyConfig_SetBytesString(&config, &config.pycache_prefix, prefix);
        if (PyStatus_Exception(st)) goto fail;
    }
    static const char *paths[] = {KBV_PY_PATHS};
    st = PyConfig_SetBytesString(&config, &config.program_name, KBV_PY_EXECUTABLE);
    if (PyStatus_Exception(st)) goto fail;
    config.module_search_paths_set = 1;
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        wchar_t *w = Py_DecodeLocale(paths[i], NULL);
        if (!w) {
            PyConfig_Clear(&config);
            return kbv_seterr(err, "cannot decode Python path %s", paths[i]);
        }
        st = PyWideStringList_Append(&config.module_search_paths, w);
        PyMem_RawFree(w);
        if (PyStatus_Exception(st)) goto fail;
    }
    st = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(st)) return kbv_seterr(err, "Python initialisation failed: %s", st.err_msg ? st.err_msg : "?");
    return 0;
fail:
    PyConfig_Clear(&config);
    return kbv_seterr(err, "Python configuration failed: %s", st.err_msg ? st.err_msg : "?");
}

static void print_dir_of(FILE *f, const char *path) {
    const char *slash = strrchr(path, '/');
    if (path[0] == '/' && slash && slash != path) fprintf(f, "%.*s\n", (int)(slash - path), path);
}

static int print_library_dir(struct dl_phdr_info *info, size_t size, void *f) {
    (void)size;
    if (info->dlpi_name) print_dir_of(f, info->dlpi_name);
    return 0;
}

/* One path a line, only absolute ones; a path with a newline in it is left out. */
static void print_path(FILE *f, PyObject *o) {
    const char *s = o && PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
    if (!s) PyErr_Clear();
    else if (s[0] == '/' && !strchr(s, '\n')) fprintf(f, "%s\n", s);
}

int py_print_paths(FILE *f, kbv_err *err) {
    if (py_start(err) < 0) return -1;
    static const char *const prefixes[] = {"prefix", "base_prefix", "exec_prefix", "base_exec_prefix"};
    /* PySys_GetObject returns borrowed references */
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) print_path(f, PySys_GetObject(prefixes[i]));
    PyObject *path = PySys_GetObject("path");
    if (!path || !PyList_Check(path)) return kbv_seterr(err, "sys.path is not a list");
    for (Py_ssize_t i = 0; i < PyList_Size(path); i++) print_path(f, PyList_GetItem(path, i));
    dl_iterate_phdr(print_library_dir, f);
    if (fflush(f) != 0 || ferror(f)) return kbv_seterr(err, "writing the paths failed");
    return 0;
}

void py_stop(void) {
    /* Deliberately no Py_Finalize: candidate extensions and torch's CUDA state do not
     * always survive finalisation, and the process is about to exit anyway. */
}

void py_str(PyObject *obj, char *out, size_t outlen) {
    out[0] = '\0';
    PyObject *s = obj ? PyObject_Str(obj) : NULL;
    PyObject *b = s ? PyUnicode_AsEncodedString(s, "utf-8", "replace") : NULL;
    if (b) snprintf(out, outlen, "%s", PyBytes_AsString(b));
    else PyErr_Clear();
    Py_XDECREF(b);
    Py_XDECREF(s);
}

void py_take_error(kbv_err *err, char **traceback, int *is_exit) {
    if (traceback) *traceback = NULL;
    if (is_exit) *is_exit = 0;
    if (!PyErr_Occurred()) {
        kbv_seterr(err, "unknown Python error");
        return;
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb && value) PyException_SetTraceback(value, tb);
    if (is_exit && type && PyErr_GivenExceptionMatches(type, PyExc_SystemExit)) *is_exit = 1;
    char tname[128] = "Exception", msg[800];
    if (type && PyType_Check(type)) snprintf(tname, sizeof tname, "%s", ((PyTypeObject *)type)->tp_name);
    py_str(value, msg, sizeof msg);
    kbv_seterr(err, "%s: %s", tname, msg);
    if (traceback) {
        PyObject *mod = PyImport_ImportModule("traceback");
        PyObject *lines =
            mod ? PyObject_CallMethod(mod, "format_exception", "OOO", type ? type : Py_None, value ? value : Py_None, tb ? tb : Py_None) : NULL;
        PyObject *sep = lines ? PyUnicode_FromString("") : NULL;
        PyObject *joined = sep ? PyUnicode_Join(sep, lines) : NULL;
        PyObject *bytes = joined ? PyUnicode_AsEncodedString(joined, "utf-8", "replace") : NULL;
        if (bytes) *traceback = strdup(PyBytes_AsString(bytes));
        else PyErr_Clear();
        Py_XDECREF(bytes), Py_XDECREF(joined), Py_XDECREF(sep), Py_XDECREF(lines), Py_XDECREF(mod);
    }
    Py_XDECREF(type), Py_XDECREF(value), Py_XDECREF(tb);
}

PyObject *py_load_file(const char *name, const char *path, PyObject *seed) {
    PyObject *mach = NULL, *util = NULL, *loader = NULL, *spec = NULL, *mod = NULL, *res = NULL;
    mach = PyImport_ImportModule("importlib.machinery");
    util = mach ? PyImport_ImportModule("importlib.util") : NULL;
    loader = util ? PyObject_CallMethod(mach, "SourceFileLoader", "ss", name, path) : NULL;
    spec = loader ? PyObject_CallMethod(util, "spec_from_loader", "sO", name, loader) : NULL;
    if (spec == Py_None) {
        PyErr_Format(PyExc_ImportError, "cannot make a module spec for %s", path);
        goto done;
    }
    mod = spec ? PyObject_CallMethod(util, "module_from_spec", "O", spec) : NULL;
    if (!mod) goto done;
    if (seed) {
        PyObject *src = PyModule_GetDict(seed), *dst = PyModule_GetDict(mod), *k, *v;
        Py_ssize_t pos = 0;
        while (PyDict_Next(src, &pos, &k, &v)) {
            const char *ks = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
            if (!ks) {
                PyErr_Clear();
                continue;
            }
            if (strncmp(ks, "__", 2) == 0) continue;
            if (PyDict_SetItem(dst, k, v) < 0) goto fail;
        }
    }
    PyObject *modules = PyImport_GetModuleDict();
    if (PyDict_SetItemString(modules, name, mod) < 0) goto fail;
    res = PyObject_CallMethod(loader, "exec_module", "O", mod);
    if (!res) {
        PyObject *t, *v, *tb;
        PyErr_Fetch(&t, &v, &tb);
        PyDict_DelItemString(modules, name);
        PyErr_Clear();
        PyErr_Restore(t, v, tb);
        goto fail;
    }
    Py_DECREF(res);
    goto done;
fail:
    Py_CLEAR(mod);
done:
    Py_XDECREF(spec), Py_XDECREF(loader), Py_XDECREF(util), Py_XDECREF(mach);
    return mod;
}

int py_has_callable(PyObject *obj, const char *name) {
    PyObject *a = PyObject_GetAttrString(obj, name);
    int ok = a && PyCallable_Check(a);
    Py_XDECREF(a);
    if (!ok) PyErr_Clear();
    return ok;
}
