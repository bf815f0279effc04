/* guard.h -- kbv-worker's dynamic evidence about the candidate's own Python (docs/hacks.md).
 *
 * A C audit hook (PySys_AddAuditHook: Python code cannot remove it) watches, from the moment
 * the candidate is loaded: opening the problem file or the reference's outputs, network
 * sockets, and processes started inside a call. Snapshots before and after each step catch
 * replaced torch or time functions, a changed problem module or Model class, and changed
 * global backend flags. Each finding is reported once, in the
 * reply of the command during which it was seen ("guard": [{id, severity, detail, step}]).
 */
#ifndef KBV_WORKER_GUARD_H
#define KBV_WORKER_GUARD_H

#include <jansson.h>

#include "worker.h"

void guard_install(void); /* once, after the interpreter starts */
/* From now on the candidate (file path) is watched; snapshots are taken. */
void guard_arm(worker *w, const char *candidate_path, const char *problem_path);
void guard_step(const char *step); /* "load", "build", "forward", "timing" */
/* kbv just set the global flags itself: take them as the new baseline. */
void guard_flags_rebase(void);
/* kbv is (1) or is no longer (0) running the problem's own code (its Model, built or called in
 * the workers whose protocol holds both models): the problem file that code opens (a warning's
 * source line, inspect) is the problem's doing, not the candidate's. */
void guard_reference(int on);
/* Compare the snapshots, then hand over (and forget) what was found since the last call;
 * NULL when nothing. */
json_t *guard_take(worker *w);
/* Before and after a call: Python threads the call left running. */
int guard_threads(worker *w);
void guard_after_call(worker *w, int threads_before);
/* A finding from the worker's own checks (output types, inherited forward). */
void guard_note(const char *id, const char *severity, const char *detail);

#endif
