/* py.h -- the embedded interpreter: start-up, module loading, exceptions as text.
 *
 * Every Python C-API call that can fail is checked; a failure becomes a kbv_err whose
 * message is "ExceptionType: message" and, where asked, the formatted traceback.
 */
#ifndef KBV_WORKER_PY_H
#define KBV_WORKER_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "../util.h"

/* Start CPython with the search path recorded at build time (build/pyconf.h). */
int py_start(kbv_err *err);
void py_stop(void);
/* kbv-worker --python-paths: start the interpreter as py_start does (its site module and .pth
 * files included, no other code) and print the folders it reads, one absolute path a line:
 * sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, every sys.path entry,
 * and the folder of every shared library loaded by then. kbv's Landlock allow-list grants
 * reads beneath them (src/sandbox.c). Returns 0, or -1 with err set. */
int py_print_paths(FILE *f, kbv_err *err);

/* Take the pending Python exception: err gets "Type: message"; *traceback (if non-NULL)
 * gets the formatted traceback (caller frees). *is_exit is set for SystemExit. */
void py_take_error(kbv_err *err, char **traceback, int *is_exit);

/* Import a source file as a module named name. If seed is a module, its public globals are
 * copied into the new module first (KernelBench executes candidates in the problem's
 * namespace). Returns a new reference or NULL with the Python error pending. */
PyObject *py_load_file(const char *name, const char *path, PyObject *seed);
/* 1 if obj has a callable attribute name; 0 otherwise, with no Python error left. */
int py_has_callable(PyObject *obj, const char *name);

/* UTF-8 text of str(obj) into out; replaces undecodable characters. */
void py_str(PyObject *obj, char *out, size_t outlen);

#endif
