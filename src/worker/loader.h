/* loader.h -- how a candidate file becomes a model class: one loader per kind of file.
 *
 * load_candidate (model.c) takes the first loader in loader.c's table whose accepts() takes
 * the file, has it load the file, and keeps it as w->loader; build and standard then ask it
 * for the class to construct, and messages name the class by its class_name. inspect asks
 * loader_find() for the class name its source check looks for. Today's only loader is
 * loader_py.c: a Python file defining the class KernelBench's format names, imported after
 * the problem module, starting with the problem's public globals.
 *
 * Adding a loader (a plain .cu file with a C entry point, a Triton file) touches one new
 * file, loader_KIND.c, defining `const cand_loader loader_KIND` with the members below, plus
 * one line, `X(loader_KIND)`, in loader.c's LOADERS list, placed before loader_py, which
 * takes any file. The Makefile builds every src/worker/loader_*.c; nothing
 * else changes: the commands reach the candidate only through this interface.
 */
#ifndef KBV_WORKER_LOADER_H
#define KBV_WORKER_LOADER_H

#include "worker.h"

typedef struct cand_loader {
    const char *name;       /* the kind of file, e.g. "python" */
    const char *class_name; /* the candidate's model class as replies name it */
    /* 1 if the file at path is of this loader's kind (by its name or its content). */
    int (*accepts)(const char *path);
    /* Load the file at path into w->candidate. Called after load_problem, with the guard
     * armed. NULL, or a failure reply (kind "load": the file lacks what the kind needs). */
    json_t *(*load)(worker *w, const char *path);
    /* The class that build and standard call with get_init_inputs(): a new reference, or
     * NULL with the Python error pending. Called only after load succeeded. */
    PyObject *(*model_class)(worker *w);
} cand_loader;

/* The first loader in the table that accepts path, or NULL. */
const cand_loader *loader_find(const char *path);

#endif
