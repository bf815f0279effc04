/* pycache.h -- kbv's bytecode cache for the workers' Python (pycache.c, docs/build.md). */
#ifndef KBV_WORKER_PYCACHE_H
#define KBV_WORKER_PYCACHE_H

#include "../util.h"

/* kbv-worker --build-pycache ROOT [always] (run by kbv, never by a candidate's worker): where
 * torch's installed modules have no bytecode (or always), compile the packages a worker
 * imports into a read-only tree under ROOT, once, and print its path on stdout; print an
 * empty line where the installed bytecode serves. 0, or -1 with err set. */
int pycache_build(const char *root, int always, kbv_err *err);

#endif
