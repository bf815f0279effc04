/* device.h -- the worker's device and torch's global state: the seed, the TF32 flags, the
 * caching allocator, memory marks, kbv's timer and stream, and a call made by the timer. */
#ifndef KBV_WORKER_DEVICE_H
#define KBV_WORKER_DEVICE_H

#include "worker.h"

/* torch.cuda (a new reference), or NULL with the Python error pending. */
PyObject *torch_cuda(worker *w);
/* torch.manual_seed(seed): 0, or -1 with the Python error pending. */
int seed_torch(worker *w, unsigned long long seed);
/* TF32 on or off for matmul and cuDNN; the guard takes the new flags as its baseline. */
int set_tf32(worker *w, int on);
/* torch.cuda.empty_cache(): 0, or -1 with the Python error pending. */
int empty_cache(worker *w);
/* torch.cuda.<fn>() in bytes (memory_allocated, max_memory_allocated), or -1. */
long long torch_mem(worker *w, const char *fn);
/* Device memory a model holds: footprint before construction (call with *before) and after. */
void memory_mark(worker *w, long long *cupti, long long *torch_bytes);
/* A tensor moved to the device and made contiguous (a fresh copy); other values as they are. */
PyObject *to_device(worker *w, PyObject *v);

/* One call of callable(*args), in the form the GPU timer calls back (do_call). */
typedef struct call_ctx {
    PyObject *callable, *args; /* args NULL: called without arguments */
    PyObject *out;             /* the last call's result */
} call_ctx;

int do_call(void *p);
/* kbv's timer and torch's ExternalStream over its stream, made once (CUDA only). */
int make_timer(worker *w, kbv_err *err);

#endif
