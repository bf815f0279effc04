/* gpu.h -- the few CUDA runtime calls kbv-worker makes, behind a plain-C interface.
 *
 * Built against the CUDA runtime when the Makefile finds it (KBV_HAVE_CUDA); otherwise
 * every call fails with "built without CUDA". Every call is checked and its failure names
 * the call and the file:line. No kernels here (.cu files come with the input generator and
 * the timing code).
 */
#ifndef KBV_GPU_H
#define KBV_GPU_H

#include <stddef.h>

#include "../util.h"

int gpu_compiled(void); /* 1 when built with CUDA */
int gpu_init(int device, kbv_err *err);
int gpu_malloc(void **ptr, size_t n, kbv_err *err);
void gpu_free(void *ptr);
/* cudaMalloc that may fail quietly (no error left behind): 0, or -1 with *ptr NULL. */
int gpu_try_malloc(void **ptr, size_t n);
/* Free device memory now, as cudaMemGetInfo reports it. */
int gpu_mem_free(size_t *free_bytes, kbv_err *err);
int gpu_copy_to_device(void *dst, const void *src, size_t n, kbv_err *err);
int gpu_copy_to_host(void *dst, const void *src, size_t n, kbv_err *err);
/* Device-wide synchronize; a sticky error from an earlier kernel surfaces here. */
int gpu_sync(kbv_err *err);
int gpu_device_name(char *out, size_t outlen, kbv_err *err);

#endif
