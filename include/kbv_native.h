/* kbv_native.h -- the C entry point of a native kbv candidate (docs/native.md).
 *
 * A native candidate is one source file: .cu (compiled by nvcc, run with --device cuda) or
 * .c / .cpp / .cc (compiled by the system's C or C++ compiler, run with --device cpu). It
 * includes this header and defines kbv_forward. kbv compiles it to a shared object, checks
 * that it was built against this version of the header (kbv_native_abi_version, defined
 * below), and calls kbv_forward from the forward of a class ModelNew(Model) that kbv makes:
 * the candidate is checked, timed and audited as any other.
 *
 * What kbv passes, in this order:
 *   inputs[0 .. k-1]   the problem's forward() arguments, in order (a Python number arrives
 *                      as a 0-dim host value: see KBV_NATIVE_HOST below);
 *   inputs[k ..]       the model's parameters, then its buffers, in named_parameters() and
 *                      named_buffers() order (the model is the problem's Model, built with
 *                      get_init_inputs(), holding the weights kbv checks it with);
 *   outputs[0 .. m-1]  preallocated by kbv, contiguous, on the candidate's device, with the
 *                      shapes and dtypes the reference's forward returns for these inputs;
 *                      kbv_forward writes every element of each;
 *   stream             the current CUDA stream (a cudaStream_t) on the GPU, NULL on the CPU:
 *                      launch on it, and do not synchronise the device.
 * kbv_forward returns 0, or nonzero for a failure (kbv reports runtime_error with the code and,
 * if the candidate defines kbv_native_error, its message). Inputs must not be written.
 *
 * This header is versioned: a change of the structure or the calling convention is a new
 * KBV_NATIVE_ABI_VERSION, and kbv refuses a shared object built against another one.
 */
#ifndef KBV_NATIVE_H
#define KBV_NATIVE_H

#include <stdint.h>

#define KBV_NATIVE_ABI_VERSION 1

/* Element types: kbv's own dtype codes (src/tensor.h's kbv_dtype). */
enum {
    KBV_NATIVE_BOOL = 1, /* one byte, 0 or 1 */
    KBV_NATIVE_UINT8 = 2,
    KBV_NATIVE_INT8 = 3,
    KBV_NATIVE_INT16 = 4,
    KBV_NATIVE_INT32 = 5,
    KBV_NATIVE_INT64 = 6,
    KBV_NATIVE_FLOAT16 = 7,  /* IEEE binary16 */
    KBV_NATIVE_BFLOAT16 = 8, /* bfloat16 */
    KBV_NATIVE_FLOAT32 = 9,
    KBV_NATIVE_FLOAT64 = 10
};

/* Where a tensor's data lives. */
enum {
    KBV_NATIVE_HOST = 0, /* host memory (every tensor with --device cpu; a Python number) */
    KBV_NATIVE_CUDA = 1  /* device memory of the current CUDA device */
};

typedef struct kbv_native_tensor {
    void *data;             /* the first element (already offset); may be NULL when numel is 0 */
    int32_t dtype;          /* KBV_NATIVE_FLOAT32, ... */
    int32_t device;         /* KBV_NATIVE_HOST or KBV_NATIVE_CUDA */
    int32_t ndim;           /* 0 for a scalar */
    const int64_t *shape;   /* ndim extents */
    const int64_t *strides; /* ndim strides in elements (not bytes); outputs are contiguous,
                             * inputs may not be: check, or fail with a nonzero code */
} kbv_native_tensor;

#ifdef __cplusplus
#define KBV_NATIVE_C extern "C"
#else
#define KBV_NATIVE_C
#endif
#define KBV_NATIVE_EXPORT KBV_NATIVE_C __attribute__((visibility("default")))

/* The entry point every native candidate defines. Returns 0, or nonzero on failure. */
KBV_NATIVE_EXPORT int kbv_forward(const kbv_native_tensor *inputs, int n_inputs, kbv_native_tensor *outputs, int n_outputs,
                                  void *stream);
/* Optional: a message for the last nonzero return (kbv copies it at once). */
KBV_NATIVE_EXPORT const char *kbv_native_error(void);

/* The version this file was built against, which kbv checks after dlopen. Defined here, so a
 * candidate gets it by including this header (in exactly one translation unit: a candidate
 * is one file). */
#ifndef KBV_NATIVE_NO_VERSION_SYMBOL
KBV_NATIVE_EXPORT const int kbv_native_abi_version;
KBV_NATIVE_C __attribute__((visibility("default"), used)) const int kbv_native_abi_version = KBV_NATIVE_ABI_VERSION;
#endif

#endif
