/* loader_py_fastbuild.h -- load_inline's C++ compile with kbv's precompiled header of torch/extension.h,
 * identical results, torch's stock build as the fallback (loader_py_fastbuild.c, docs/build.md; named loader_py_* so that the Makefile builds it). */
#ifndef KBV_WORKER_LOADER_PY_FASTBUILD_H
#define KBV_WORKER_LOADER_PY_FASTBUILD_H

#include "../util.h"

/* 1 if the worker's environment asks for the fast build (KBV_BUILD=fast). */
int fastbuild_wanted(void);
/* With KBV_BUILD=fast: route torch's ninja step through the precompiled-header check, before
 * the candidate is imported. Never fails the load: on any problem it says why on stderr and
 * leaves torch as it is. Once per process. */
void fastbuild_install(void);
/* kbv-worker --build-pch ROOT (run by kbv, never by a candidate's worker): one precompiled
 * header per flag set under ROOT, kept where one is already there and valid. sets: load_inline
 * extra_cflags sets, ';'-separated, flags space-separated (NULL: ";-O3", none and -O3). Prints
 * one line per header. 0, or -1 with err set. */
int fastbuild_make_pch(const char *root, const char *sets, kbv_err *err);

#endif
