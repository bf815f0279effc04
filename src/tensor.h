/* tensor.h -- kbv's tensor values and their file format (.kbt).
 *
 * A kbv_tensor is a dense, C-contiguous host copy of one tensor, with the shape and the
 * strides (in elements) the tensor had where it was produced, so stride checks can be made
 * after the copy. Tensors travel between processes as .kbt files in the evaluation's scratch
 * folder; docs/formats.md documents the layout. This file does not know about DLPack or
 * CUDA: the worker converts (src/worker/dl.c).
 */
#ifndef KBV_TENSOR_H
#define KBV_TENSOR_H

#include <math.h>
#include <stdint.h>
#include <stddef.h>

#include "util.h"

#define KBV_MAX_DIMS 16

typedef enum kbv_dtype {
    KBV_DT_INVALID = 0,
    KBV_DT_BOOL,
    KBV_DT_U8,
    KBV_DT_I8,
    KBV_DT_I16,
    KBV_DT_I32,
    KBV_DT_I64,
    KBV_DT_F16,
    KBV_DT_BF16,
    KBV_DT_F32,
    KBV_DT_F64,
    KBV_DT_COUNT
} kbv_dtype;

typedef struct kbv_tensor {
    kbv_dtype dtype;
    int ndim;
    int64_t shape[KBV_MAX_DIMS];
    int64_t strides[KBV_MAX_DIMS]; /* elements, as produced; contiguous data is always stored */
    void *data;                    /* numel * dtype size bytes, C order; owned (malloc/mmap) */
    size_t nbytes;
    int mapped; /* 1 when data is an mmap of a file (kbv_tensor_free unmaps) */
} kbv_tensor;

/* Torch's name of a dtype ("float32", "int64", "bool", ...) and back. */
const char *kbv_dtype_name(kbv_dtype dt);
kbv_dtype kbv_dtype_from_name(const char *name);
size_t kbv_dtype_size(kbv_dtype dt);
int kbv_dtype_is_float(kbv_dtype dt);

int64_t kbv_tensor_numel(const kbv_tensor *t);
/* Fill t's dtype, shape, C-contiguous strides and nbytes, with no data (checks the shape). */
int kbv_tensor_describe(kbv_tensor *t, kbv_dtype dt, int ndim, const int64_t *shape, kbv_err *err);
/* Allocate zeroed host storage for t's shape and dtype (strides set contiguous). */
int kbv_tensor_alloc(kbv_tensor *t, kbv_dtype dt, int ndim, const int64_t *shape, kbv_err *err);
void kbv_tensor_free(kbv_tensor *t);
/* Frees t's data only: its dtype, shape, strides and nbytes stay (data NULL), for code that
 * needs what a tensor was, not its values. kbv_tensor_free still applies. */
void kbv_tensor_drop_data(kbv_tensor *t);
/* Shape as text, e.g. "[64, 128]". */
void kbv_tensor_shape_str(const kbv_tensor *t, char *out, size_t outlen);

/* Write t to path (created 0600, replaced atomically) / read it back (data is mmapped). */
int kbv_tensor_save(const kbv_tensor *t, const char *path, kbv_err *err);
/* The same for a tensor whose contiguous bytes are at src, described by t (t->data unused),
 * copied into the file by copy (e.g. from GPU memory); copy NULL: src is host memory. */
typedef int (*kbv_copy_fn)(void *dst, const void *src, size_t n, kbv_err *err);
int kbv_tensor_write(const kbv_tensor *t, const void *src, kbv_copy_fn copy, const char *path, kbv_err *err);
/* Read a .kbt file into t (its own memory). The file is opened without following a symbolic
 * link and without blocking (a FIFO or a device is refused), and must be a regular file with
 * one link whose size matches its header. */
int kbv_tensor_load(kbv_tensor *t, const char *path, kbv_err *err);
/* The same, reading at most max_bytes of data (max_bytes < 0: no cap): a header that declares
 * more returns -2 (err says how much), before anything is allocated; -3 when the reader has no
 * memory for it (its own exhaustion, not the file's fault). */
int kbv_tensor_load_capped(kbv_tensor *t, const char *path, long long max_bytes, kbv_err *err);
/* dst: a copy of src in memory of its own (freed with kbv_tensor_free). 0, or -1 without memory. */
int kbv_tensor_copy(kbv_tensor *dst, const kbv_tensor *src);
/* on: from now, kbv_tensor_free keeps a loaded or copied tensor's memory for the next tensor of
 * the same size (up to 8 mappings, within the most held at once since); off (the default): it
 * returns it to the system, and what is kept is returned now. kbv keeps while it evaluates; a
 * worker never does, since its memory counts against the candidate's limit. */
void kbv_tensor_pool_keep(int on);

/* Half-precision conversions (round to nearest even) used by loaders and tests. */
float kbv_half_to_float(uint16_t h);
float kbv_bf16_to_float(uint16_t h);

/* What the weight cases' redraw (docs/correctness.md, "Weight cases") makes of a floating
 * entry's n values at data (dtype dt, dense): KBV_WSTATS_KEEP (none, a NaN or an Inf, or
 * every value integral but not all equal: structure), KBV_WSTATS_CONST (every value *lo) or
 * KBV_WSTATS_NORMAL, with *lo the least value, *mean and *sd (unbiased) summed in double in
 * index order: the same bits on any host. */
enum { KBV_WSTATS_KEEP = 0, KBV_WSTATS_CONST = 1, KBV_WSTATS_NORMAL = 2 };
int kbv_weight_stats(const void *data, kbv_dtype dt, int64_t n, double *lo, double *mean, double *sd);

/* Element i (C order) as a double; integers and bools convert exactly up to 2^53. Inline:
 * the judge calls it for every element. */
static inline double kbv_tensor_get(const kbv_tensor *t, int64_t i) {
    const char *p = (const char *)t->data;
    switch (t->dtype) {
    case KBV_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
    case KBV_DT_U8: return ((const uint8_t *)p)[i];
    case KBV_DT_I8: return ((const int8_t *)p)[i];
    case KBV_DT_I16: return ((const int16_t *)p)[i];
    case KBV_DT_I32: return ((const int32_t *)p)[i];
    case KBV_DT_I64: return (double)((const int64_t *)p)[i];
    case KBV_DT_F16: return kbv_half_to_float(((const uint16_t *)p)[i]);
    case KBV_DT_BF16: return kbv_bf16_to_float(((const uint16_t *)p)[i]);
    case KBV_DT_F32: return ((const float *)p)[i];
    case KBV_DT_F64: return ((const double *)p)[i];
    default: return NAN;
    }
}

#endif
