/* device.c -- the worker's device and torch's global state (see device.h).
 *
 * Small wrappers over torch calls that several commands share: seeding, the TF32 flags (kbv
 * sets them per call, and the guard must not take that for the candidate's change), the
 * caching allocator, the memory marks of build, kbv's timer with its torch stream, and the
 * call the timer makes. Nothing here runs a command or builds a reply.
 */
#include "device.h"

#include "../gpu/audit.h"
#include "../gpu/timer.h"
#include "guard.h"

int do_call(void *p) {
    call_ctx *c = p;
    c->out = c->args ? PyObject_CallObject(c->callable, c->args) : PyObject_CallNoArgs(c->callable);
    return c->out ? 0 : -1;
}

PyObject *torch_cuda(worker *w) { return PyObject_GetAttrString(w->dl.torch, "cuda"); }

int make_timer(worker *w, kbv_err *err) {
    if (!w->cuda || w->timer) return 0;
    if (gpu_timer_create(&w->timer, err) < 0) {
        gpu_timer_destroy(w->timer), w->timer = NULL;
        return -1;
    }
    PyObject *cu = torch_cuda(w);
    w->stream = cu ? PyObject_CallMethod(cu, "ExternalStream", "K", (unsigned long long)gpu_timer_stream(w->timer)) : NULL;
    Py_XDECREF(cu);
    if (!w->stream) return kbv_seterr(err, "torch.cuda.ExternalStream failed"), -1;
    return 0;
}

int seed_torch(worker *w, unsigned long long seed) {
    PyObject *r = PyObject_CallMethod(w->dl.torch, "manual_seed", "K", seed);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

int set_tf32(worker *w, int on) {
    PyObject *backends = PyObject_GetAttrString(w->dl.torch, "backends");
    PyObject *cuda = backends ? PyObject_GetAttrString(backends, "cuda") : NULL;
    PyObject *matmul = cuda ? PyObject_GetAttrString(cuda, "matmul") : NULL;
    PyObject *cudnn = backends ? PyObject_GetAttrString(backends, "cudnn") : NULL;
    int rc = matmul && cudnn && PyObject_SetAttrString(matmul, "allow_tf32", on ? Py_True : Py_False) == 0 &&
                     PyObject_SetAttrString(cudnn, "allow_tf32", on ? Py_True : Py_False) == 0
                 ? 0
                 : -1;
    Py_XDECREF(cudnn), Py_XDECREF(matmul), Py_XDECREF(cuda), Py_XDECREF(backends);
    guard_flags_rebase(); /* kbv's own setting is not the candidate's change */
    return rc;
}

int empty_cache(worker *w) {
    PyObject *cu = PyObject_GetAttrString(w->dl.torch, "cuda");
    PyObject *r = cu ? PyObject_CallMethod(cu, "empty_cache", NULL) : NULL;
    Py_XDECREF(r), Py_XDECREF(cu);
    return r ? 0 : -1;
}

long long torch_mem(worker *w, const char *fn) {
    PyObject *cu = torch_cuda(w);
    PyObject *v = cu ? PyObject_CallMethod(cu, fn, NULL) : NULL;
    long long b = v && PyLong_Check(v) ? PyLong_AsLongLong(v) : -1;
    Py_XDECREF(v), Py_XDECREF(cu);
    PyErr_Clear();
    return b;
}

void memory_mark(worker *w, long long *cupti, long long *torch_bytes) {
    kbv_err err;
    *cupti = -1, *torch_bytes = -1;
    if (!w->cuda) return;
    if (w->audit && audit_footprint(cupti, &err) < 0) *cupti = -1;
    *torch_bytes = torch_mem(w, "memory_allocated");
}

/* The device the worker runs on, as torch names it. */
static const char *devname(const worker *w) { return w->cuda ? "cuda" : "cpu"; }

/* A tensor moved to the device and made contiguous; other values as they are. */
PyObject *to_device(worker *w, PyObject *v) {
    if (PyObject_IsInstance(v, w->dl.tensor_type) != 1) return Py_INCREF(v), v;
    /* Always a fresh copy: kept nominal inputs must not be changed by the model. */
    PyObject *d = PyObject_CallMethod(v, "to", "s", devname(w));
    PyObject *c = d ? PyObject_CallMethod(d, "clone", NULL) : NULL;
    PyObject *e = c ? PyObject_CallMethod(c, "contiguous", NULL) : NULL;
    Py_XDECREF(d), Py_XDECREF(c);
    return e;
}
