/* fail.c -- failure replies (see fail.h).
 *
 * It knows the protocol's failure shape and Python's exceptions; it does not decide which
 * kind a failure is, except that a CUDA error inside a Python exception is "cuda".
 */
#include "fail.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../proto.h"
#include "py.h"

/* The pending Python exception as a failure reply of the given kind ("exit" for SystemExit). */
json_t *fail_python(const char *kind, const char *context) {
    kbv_err err = {{0}};
    char *tb = NULL, msg[1200];
    int is_exit = 0;
    py_take_error(&err, &tb, &is_exit);
    if (!is_exit && (strstr(err.msg, "CUDA error") || strstr(err.msg, "AcceleratorError") || strstr(err.msg, "CUDA out of memory") ||
                     strstr(err.msg, "cudaError")))
        kind = "cuda";
    snprintf(msg, sizeof msg, "%s: %s", context, err.msg);
    json_t *r = proto_fail(is_exit ? "exit" : kind, msg, tb);
    free(tb);
    return r;
}

json_t *fail_text(const char *kind, const char *fmt, const char *arg) {
    char msg[1200];
    snprintf(msg, sizeof msg, fmt, arg);
    return proto_fail(kind, msg, NULL);
}
