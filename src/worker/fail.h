/* fail.h -- failure replies built from the pending Python error or from a text.
 *
 * The kind (docs/protocol.md) is what kbv's verdict rests on; these only shape the reply.
 */
#ifndef KBV_WORKER_FAIL_H
#define KBV_WORKER_FAIL_H

#include <jansson.h>

/* The pending Python exception as a failure reply of the given kind ("exit" for SystemExit,
 * "cuda" for a CUDA error), its message prefixed by context; the error is taken. */
json_t *fail_python(const char *kind, const char *context);
/* A failure reply whose message is fmt with one string argument. */
json_t *fail_text(const char *kind, const char *fmt, const char *arg);

#endif
