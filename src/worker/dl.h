/* dl.h -- tensors between C and torch through DLPack.
 *
 * dl_to_torch() builds a torch tensor on the worker's device from a host kbv_tensor (the
 * data is copied once, to the device when it is CUDA); dl_from_torch() copies any torch
 * tensor (any strides, CPU or CUDA) into a contiguous host kbv_tensor, recording the
 * strides it had. Python touches the data only through torch.utils.dlpack.
 * bool tensors cross as uint8, since torch 1.13's DLPack has no bool.
 */
#ifndef KBV_WORKER_DL_H
#define KBV_WORKER_DL_H

#include "py.h"
#include "../tensor.h"

typedef struct dl_ctx {
    PyObject *torch;       /* the torch module */
    PyObject *from_dlpack; /* torch.utils.dlpack.from_dlpack */
    PyObject *to_dlpack;   /* torch.utils.dlpack.to_dlpack */
    PyObject *tensor_type; /* torch.Tensor */
    /* The C methods of torch's tensor base class, taken at start, before any candidate code
     * runs: outputs leave the worker through these, so a candidate that patches
     * torch.Tensor.detach (or .view, .dtype) does not see, or change, what kbv saves. */
    PyObject *detach, *view, *dtype;
    int cuda; /* 1: tensors live on cuda:0 */
} dl_ctx;

int dl_init(dl_ctx *c, int cuda, kbv_err *err);
/* Takes ownership of t's data (t is left empty). Returns a new reference or NULL (err set). */
PyObject *dl_to_torch(dl_ctx *c, kbv_tensor *t, kbv_err *err);
int dl_from_torch(dl_ctx *c, PyObject *tensor, kbv_tensor *out, kbv_err *err);
/* The same written to path as a .kbt file (tensor.h); meta gets the dtype, shape and
 * strides, no data. A contiguous tensor goes from its own memory (host or GPU) into the file
 * with no copy in between. */
int dl_save_torch(dl_ctx *c, PyObject *tensor, const char *path, kbv_tensor *meta, kbv_err *err);
/* dl_from_torch without the copy where it can: for a C-contiguous CPU tensor, out->data is
 * the tensor's own memory (*borrowed = 1: valid while tensor lives, not to be freed or
 * written); otherwise a copy as dl_from_torch makes (*borrowed = 0). */
int dl_borrow_host(dl_ctx *c, PyObject *tensor, kbv_tensor *out, int *borrowed, kbv_err *err);
/* Wrap a device buffer (cudaMalloc'd, C-contiguous) as a torch tensor that owns it. */
PyObject *dl_wrap_device(dl_ctx *c, kbv_dtype dt, int ndim, const int64_t *shape, void *dev, kbv_err *err);

/* Where a tensor's bytes are: device or host pointer, bytes spanned, and whether they are
 * C-contiguous; fills *dt. The capsule (returned, new reference) keeps them alive. */
PyObject *dl_locate(dl_ctx *c, PyObject *tensor, const void **ptr, size_t *span, int *contiguous, int *on_gpu, kbv_err *err);

#endif
