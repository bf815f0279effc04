/* dl.c -- DLPack exchange between kbv's host tensors and torch (see dl.h). */
#include "dl.h"

#include <dlpack/dlpack.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/gpu.h"

#ifndef KBV_DL_BOOL
#define KBV_DL_BOOL 6 /* kDLBool, DLPack >= 0.8; Debian 12 ships 0.6 */
#endif

static int to_dl_dtype(kbv_dtype dt, DLDataType *o) {
    o->lanes = 1;
    switch (dt) {
    case KBV_DT_BOOL: /* crosses as uint8, converted with .to(torch.bool) */
    case KBV_DT_U8: o->code = kDLUInt, o->bits = 8; return 0;
    case KBV_DT_I8: o->code = kDLInt, o->bits = 8; return 0;
    case KBV_DT_I16: o->code = kDLInt, o->bits = 16; return 0;
    case KBV_DT_I32: o->code = kDLInt, o->bits = 32; return 0;
    case KBV_DT_I64: o->code = kDLInt, o->bits = 64; return 0;
    case KBV_DT_F16: o->code = kDLFloat, o->bits = 16; return 0;
    case KBV_DT_BF16: o->code = kDLBfloat, o->bits = 16; return 0;
    case KBV_DT_F32: o->code = kDLFloat, o->bits = 32; return 0;
    case KBV_DT_F64: o->code = kDLFloat, o->bits = 64; return 0;
    default: return -1;
    }
}

int dl_init(dl_ctx *c, int cuda, kbv_err *err) {
    memset(c, 0, sizeof *c);
    c->cuda = cuda;
    PyObject *dlmod = NULL;
    c->torch = PyImport_ImportModule("torch");
    if (c->torch) dlmod = PyImport_ImportModule("torch.utils.dlpack");
    if (dlmod) {
        c->from_dlpack = PyObject_GetAttrString(dlmod, "from_dlpack");
        c->to_dlpack = c->from_dlpack ? PyObject_GetAttrString(dlmod, "to_dlpack") : NULL;
        c->tensor_type = c->to_dlpack ? PyObject_GetAttrString(c->torch, "Tensor") : NULL;
    }
    Py_XDECREF(dlmod);
    PyObject *tc = c->tensor_type ? PyObject_GetAttrString(c->torch, "_C") : NULL, *base = NULL;
    if (tc) { /* torch 2.x: TensorBase; 1.x: _TensorBase */
        base = PyObject_GetAttrString(tc, "TensorBase");
        if (!base) PyErr_Clear(), base = PyObject_GetAttrString(tc, "_TensorBase");
        Py_DECREF(tc);
    }
    if (base) {
        c->detach = PyObject_GetAttrString(base, "detach");
        c->view = c->detach ? PyObject_GetAttrString(base, "view") : NULL;
        c->dtype = c->view ? PyObject_GetAttrString(base, "dtype") : NULL;
        Py_DECREF(base);
    }
    if (!c->tensor_type || !c->dtype || !Py_TYPE(c->dtype)->tp_descr_get) {
        py_take_error(err, NULL, NULL);
        return kbv_wraperr(err, "cannot import torch");
    }
    return 0;
}

/* tensor.dtype and tensor.detach(), through the methods taken at start (dl_ctx). */
static PyObject *base_dtype(dl_ctx *c, PyObject *t) { return Py_TYPE(c->dtype)->tp_descr_get(c->dtype, t, (PyObject *)Py_TYPE(t)); }
static PyObject *base_detach(dl_ctx *c, PyObject *t) { return PyObject_CallOneArg(c->detach, t); }
static PyObject *base_view_u8(dl_ctx *c, PyObject *t) {
    PyObject *u8 = PyObject_GetAttrString(c->torch, "uint8");
    PyObject *v = u8 ? PyObject_CallFunctionObjArgs(c->view, t, u8, NULL) : NULL; /* same bytes, no copy */
    Py_XDECREF(u8);
    return v;
}

/* What a DLManagedTensor made here owns. */
typedef struct dl_owner {
    DLManagedTensor m;
    int64_t shape[KBV_MAX_DIMS];
    kbv_tensor host; /* host data (CPU tensors point into it) */
    void *dev;       /* device copy (CUDA tensors) */
} dl_owner;

static void owner_delete(DLManagedTensor *m) {
    dl_owner *o = (dl_owner *)m->manager_ctx;
    kbv_tensor_free(&o->host);
    gpu_free(o->dev);
    free(o);
}

static void capsule_destructor(PyObject *cap) {
    /* Called when the capsule dies; if torch consumed it, it was renamed "used_dltensor". */
    if (PyCapsule_IsValid(cap, "dltensor")) {
        DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
        if (m && m->deleter) m->deleter(m);
    }
}

/* Hand o (filled in: dtype, shape, data, device) to torch; consumes o either way. */
static PyObject *wrap(dl_ctx *c, dl_owner *o, kbv_dtype dt, kbv_err *err) {
    DLTensor *d = &o->m.dl_tensor;
    d->shape = o->shape;
    d->strides = NULL; /* C-contiguous */
    d->byte_offset = 0;
    o->m.manager_ctx = o;
    o->m.deleter = owner_delete;
    PyObject *cap = PyCapsule_New(&o->m, "dltensor", capsule_destructor);
    if (!cap) {
        owner_delete(&o->m);
        py_take_error(err, NULL, NULL);
        return NULL;
    }
    PyObject *res = PyObject_CallOneArg(c->from_dlpack, cap);
    Py_DECREF(cap); /* if torch consumed it, its deleter now belongs to the tensor */
    if (res && dt == KBV_DT_BOOL) {
        PyObject *b = PyObject_GetAttrString(c->torch, "bool");
        PyObject *res2 = b ? PyObject_CallMethod(res, "to", "O", b) : NULL;
        Py_XDECREF(b);
        Py_DECREF(res);
        res = res2;
    }
    if (!res) py_take_error(err, NULL, NULL);
    return res;
}

PyObject *dl_to_torch(dl_ctx *c, kbv_tensor *t, kbv_err *err) {
    dl_owner *o = calloc(1, sizeof *o);
    if (!o) return kbv_seterr(err, "out of memory"), NULL;
    o->host = *t;
    memset(t, 0, sizeof *t);
    DLTensor *d = &o->m.dl_tensor;
    if (to_dl_dtype(o->host.dtype, &d->dtype) < 0) {
        kbv_seterr(err, "dtype %s cannot cross DLPack", kbv_dtype_name(o->host.dtype));
        owner_delete(&o->m);
        return NULL;
    }
    memcpy(o->shape, o->host.shape, sizeof o->shape);
    d->ndim = o->host.ndim;
    kbv_dtype dt = o->host.dtype;
    if (c->cuda) {
        if (gpu_malloc(&o->dev, o->host.nbytes, err) < 0 || gpu_copy_to_device(o->dev, o->host.data, o->host.nbytes, err) < 0) {
            owner_delete(&o->m);
            return NULL;
        }
        kbv_tensor_free(&o->host); /* the device copy is all torch needs */
        d->data = o->dev;
        d->device = (DLDevice){kDLCUDA, 0};
    } else {
        d->data = o->host.data;
        d->device = (DLDevice){kDLCPU, 0};
    }
    return wrap(c, o, dt, err);
}

PyObject *dl_wrap_device(dl_ctx *c, kbv_dtype dt, int ndim, const int64_t *shape, void *dev, kbv_err *err) {
    dl_owner *o = calloc(1, sizeof *o);
    if (!o) {
        gpu_free(dev);
        return kbv_seterr(err, "out of memory"), NULL;
    }
    o->dev = dev;
    DLTensor *d = &o->m.dl_tensor;
    if (to_dl_dtype(dt, &d->dtype) < 0 || ndim > KBV_MAX_DIMS) {
        kbv_seterr(err, "dtype %s cannot cross DLPack", kbv_dtype_name(dt));
        owner_delete(&o->m);
        return NULL;
    }
    memcpy(o->shape, shape, sizeof(int64_t) * (size_t)ndim);
    d->ndim = ndim;
    d->data = dev;
    d->device = (DLDevice){kDLCUDA, 0};
    return wrap(c, o, dt, err);
}

static int from_dl_dtype(DLDataType dt, kbv_dtype *o) {
    if (dt.lanes != 1) return -1;
    switch (dt.code) {
    case kDLUInt: *o = dt.bits == 8 ? KBV_DT_U8 : KBV_DT_INVALID; break;
    case kDLInt:
        *o = dt.bits == 8 ? KBV_DT_I8 : dt.bits == 16 ? KBV_DT_I16 : dt.bits == 32 ? KBV_DT_I32 : dt.bits == 64 ? KBV_DT_I64 : KBV_DT_INVALID;
        break;
    case kDLFloat: *o = dt.bits == 16 ? KBV_DT_F16 : dt.bits == 32 ? KBV_DT_F32 : dt.bits == 64 ? KBV_DT_F64 : KBV_DT_INVALID; break;
    case kDLBfloat: *o = dt.bits == 16 ? KBV_DT_BF16 : KBV_DT_INVALID; break;
    case KBV_DL_BOOL: *o = dt.bits == 8 ? KBV_DT_BOOL : KBV_DT_INVALID; break;
    default: *o = KBV_DT_INVALID;
    }
    return *o == KBV_DT_INVALID ? -1 : 0;
}

/* Copy a strided host span into t's contiguous storage. */
static void gather(const char *src, const DLTensor *d, kbv_tensor *t) {
    size_t es = kbv_dtype_size(t->dtype);
    int64_t n = kbv_tensor_numel(t);
    int64_t idx[KBV_MAX_DIMS] = {0};
    char *dst = t->data;
    for (int64_t i = 0; i < n; i++) {
        int64_t off = 0;
        for (int k = 0; k < d->ndim; k++) off += idx[k] * d->strides[k];
        memcpy(dst + (size_t)i * es, src + off * (int64_t)es, es);
        for (int k = d->ndim - 1; k >= 0; k--) {
            if (++idx[k] < d->shape[k]) break;
            idx[k] = 0;
        }
    }
}

static int copy_from_gpu(void *dst, const void *src, size_t n, kbv_err *err) { return gpu_copy_to_host(dst, src, n, err); }

/* dl_from_torch, or with path: dl_save_torch, or with borrowed: dl_borrow_host. */
static int dl_export(dl_ctx *c, PyObject *tensor, kbv_tensor *out, const char *path, int *borrowed, kbv_err *err) {
    memset(out, 0, sizeof *out);
    if (borrowed) *borrowed = 0;
    char dtname[64];
    PyObject *dtype = base_dtype(c, tensor);
    if (!dtype) return py_take_error(err, NULL, NULL), -1;
    py_str(dtype, dtname, sizeof dtname);
    Py_DECREF(dtype);
    kbv_dtype want = kbv_dtype_from_name(dtname);
    if (want == KBV_DT_INVALID) return kbv_seterr(err, "output dtype %s is not supported", dtname);
    PyObject *t = base_detach(c, tensor);
    if (t && want == KBV_DT_BOOL) {
        PyObject *t2 = base_view_u8(c, t);
        Py_DECREF(t);
        t = t2;
    }
    PyObject *cap = t ? PyObject_CallOneArg(c->to_dlpack, t) : NULL;
    if (!cap) {
        Py_XDECREF(t);
        return py_take_error(err, NULL, NULL), -1;
    }
    int rc = -1;
    DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    if (!m) {
        py_take_error(err, NULL, NULL);
        goto done;
    }
    const DLTensor *d = &m->dl_tensor;
    kbv_dtype got;
    if (from_dl_dtype(d->dtype, &got) < 0) {
        kbv_seterr(err, "DLPack dtype code %d bits %d is not supported", d->dtype.code, d->dtype.bits);
        goto done;
    }
    if (want == KBV_DT_BOOL && got == KBV_DT_U8) got = KBV_DT_BOOL;
    if (got != want) {
        kbv_seterr(err, "DLPack reported %s for a %s tensor", kbv_dtype_name(got), dtname);
        goto done;
    }
    if (d->ndim > KBV_MAX_DIMS) {
        kbv_seterr(err, "output has %d dimensions (at most %d)", d->ndim, KBV_MAX_DIMS);
        goto done;
    }
    kbv_tensor meta; /* shape, C-order strides and size, no data */
    if (kbv_tensor_describe(&meta, got, d->ndim, d->shape, err) < 0) goto done;
    int64_t numel = kbv_tensor_numel(&meta);
    DLTensor view = *d;
    int64_t strides[KBV_MAX_DIMS];
    int64_t span = numel ? 1 : 0; /* elements from the first to the last one addressed */
    for (int k = 0; k < d->ndim; k++) {
        strides[k] = d->strides ? d->strides[k] : meta.strides[k];
        if (strides[k] < 0) {
            kbv_seterr(err, "negative strides are not supported");
            goto done;
        }
        if (numel) span += (d->shape[k] - 1) * strides[k];
    }
    view.strides = strides;
    size_t es = kbv_dtype_size(got);
    const char *base = (const char *)d->data + d->byte_offset;
    int contiguous = 1, on_gpu = d->device.device_type == kDLCUDA || d->device.device_type == kDLCUDAManaged;
    int64_t s = 1;
    for (int k = d->ndim - 1; k >= 0; k--) {
        if (d->shape[k] != 1 && strides[k] != s) contiguous = 0;
        s *= d->shape[k];
    }
    if (path && contiguous && (on_gpu || d->device.device_type == kDLCPU)) {
        /* Straight from the tensor's memory into the file: no host copy in between. */
        *out = meta;
        memcpy(out->strides, strides, sizeof(int64_t) * (size_t)d->ndim);
        if (on_gpu && gpu_sync(err) < 0) goto done;
        if (kbv_tensor_write(out, base, on_gpu ? copy_from_gpu : NULL, path, err) < 0) goto done;
        rc = 0;
        goto done;
    }
    if (borrowed && contiguous && d->device.device_type == kDLCPU) {
        *out = meta; /* the tensor's own memory, alive as long as the caller's tensor is */
        out->data = (void *)base;
        *borrowed = 1;
        rc = 0;
        goto done;
    }
    if (kbv_tensor_alloc(out, got, d->ndim, d->shape, err) < 0) goto done;
    memcpy(out->strides, strides, sizeof(int64_t) * (size_t)d->ndim);
    if (d->device.device_type == kDLCPU) {
        if (contiguous) memcpy(out->data, base, out->nbytes);
        else gather(base, &view, out);
    } else if (on_gpu) {
        if (gpu_sync(err) < 0) goto done;
        if (contiguous) {
            if (gpu_copy_to_host(out->data, base, out->nbytes, err) < 0) goto done;
        } else {
            char *tmp = malloc((size_t)span * es + 1);
            if (!tmp) {
                kbv_seterr(err, "out of memory");
                goto done;
            }
            if (gpu_copy_to_host(tmp, base, (size_t)span * es, err) < 0) {
                free(tmp);
                goto done;
            }
            gather(tmp, &view, out);
            free(tmp);
        }
    } else {
        kbv_seterr(err, "output is on an unsupported device (DLPack type %d)", (int)d->device.device_type);
        goto done;
    }
    rc = path ? kbv_tensor_save(out, path, err) : 0;
    if (path) { /* the caller gets the description only */
        free(out->data);
        out->data = NULL;
    }
done:
    if (rc < 0) kbv_tensor_free(out);
    Py_DECREF(cap); /* torch's capsule destructor releases the managed tensor */
    Py_DECREF(t);
    return rc;
}

int dl_from_torch(dl_ctx *c, PyObject *tensor, kbv_tensor *out, kbv_err *err) { return dl_export(c, tensor, out, NULL, NULL, err); }

int dl_save_torch(dl_ctx *c, PyObject *tensor, const char *path, kbv_tensor *meta, kbv_err *err) {
    return dl_export(c, tensor, meta, path, NULL, err);
}

int dl_borrow_host(dl_ctx *c, PyObject *tensor, kbv_tensor *out, int *borrowed, kbv_err *err) {
    return dl_export(c, tensor, out, NULL, borrowed, err);
}

PyObject *dl_locate(dl_ctx *c, PyObject *tensor, const void **ptr, size_t *span, int *contiguous, int *on_gpu, kbv_err *err) {
    PyObject *t = base_detach(c, tensor);
    char dtname[64];
    PyObject *dtype = t ? base_dtype(c, t) : NULL;
    py_str(dtype, dtname, sizeof dtname);
    Py_XDECREF(dtype);
    if (t && kbv_dtype_from_name(dtname) == KBV_DT_BOOL) {
        PyObject *t2 = base_view_u8(c, t);
        Py_DECREF(t);
        t = t2;
    }
    PyObject *cap = t ? PyObject_CallOneArg(c->to_dlpack, t) : NULL;
    Py_XDECREF(t);
    if (!cap) return py_take_error(err, NULL, NULL), NULL;
    DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    if (!m) {
        Py_DECREF(cap);
        return py_take_error(err, NULL, NULL), NULL;
    }
    const DLTensor *d = &m->dl_tensor;
    size_t es = (size_t)(d->dtype.bits / 8) * d->dtype.lanes;
    int64_t numel = 1, extent = 1, expect = 1;
    *contiguous = 1;
    for (int k = d->ndim - 1; k >= 0; k--) {
        int64_t st = d->strides ? d->strides[k] : expect;
        if (d->shape[k] != 1 && st != expect) *contiguous = 0;
        expect *= d->shape[k];
        numel *= d->shape[k];
        if (d->shape[k] > 0) extent += (d->shape[k] - 1) * (st < 0 ? -st : st);
    }
    *ptr = (const char *)d->data + d->byte_offset;
    *span = numel ? (size_t)extent * es : 0;
    *on_gpu = d->device.device_type == kDLCUDA || d->device.device_type == kDLCUDAManaged;
    return cap;
}
