/* loader_py.c -- the Python candidate loader: a file defining ModelNew (KernelBench's format).
 *
 * The file is imported as the module kbv_candidate after the problem module, starting with
 * the problem's public globals (py_load_file), as KernelBench runs a candidate in the
 * problem's namespace; it must define a callable ModelNew, the class build and standard
 * construct. It takes any file, whatever its name, as kbv always has: so it comes last in
 * loader.c's table. Checking what the class does is left to the commands and the guard.
 * With KBV_BUILD=fast, torch's extension build is routed through loader_py_fastbuild.c first, so that
 * the candidate's load_inline finds it (docs/build.md); the stock build otherwise.
 */
#include "loader.h"

#include <stdio.h>

#include "../proto.h"
#include "fail.h"
#include "loader_py_fastbuild.h"

#define PY_CLASS "ModelNew"

static int py_accepts(const char *path) {
    (void)path;
    return 1;
}

static json_t *py_load(worker *w, const char *path) {
    fastbuild_install();
    PyObject *mod = py_load_file("kbv_candidate", path, w->problem);
    if (!mod) return fail_python("load", "loading the candidate");
    if (!py_has_callable(mod, PY_CLASS)) {
        Py_DECREF(mod);
        char msg[1200];
        snprintf(msg, sizeof msg, "%s defines no callable %s", path, PY_CLASS);
        return proto_fail("load", msg, NULL);
    }
    Py_XSETREF(w->candidate, mod);
    return NULL;
}

static PyObject *py_model_class(worker *w) { return PyObject_GetAttrString(w->candidate, PY_CLASS); }

const cand_loader loader_py = {
    .name = "python",
    .class_name = PY_CLASS,
    .accepts = py_accepts,
    .load = py_load,
    .model_class = py_model_class,
};
