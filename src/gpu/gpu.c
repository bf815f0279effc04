/* gpu.c -- checked CUDA runtime calls for kbv-worker (see gpu.h). */
#include "gpu.h"

#ifdef KBV_HAVE_CUDA
#include "check.h"

int gpu_compiled(void) { return 1; }

int gpu_init(int device, kbv_err *err) {
    GPU_CHECK(cudaSetDevice(device), err);
    GPU_CHECK(cudaFree(0), err); /* create the primary context now, not inside a timed call */
    return 0;
}

int gpu_malloc(void **ptr, size_t n, kbv_err *err) {
    *ptr = NULL;
    GPU_CHECK(cudaMalloc(ptr, n ? n : 1), err);
    return 0;
}

void gpu_free(void *ptr) {
    if (ptr) (void)cudaFree(ptr); /* teardown: a sticky error here is reported by gpu_sync */
}

int gpu_try_malloc(void **ptr, size_t n) {
    *ptr = NULL;
    if (cudaMalloc(ptr, n ? n : 1) == cudaSuccess) return 0;
    (void)cudaGetLastError(); /* out of memory is not sticky: leave no error for the next check */
    *ptr = NULL;
    return -1;
}

int gpu_mem_free(size_t *free_bytes, kbv_err *err) {
    size_t total = 0;
    *free_bytes = 0;
    GPU_CHECK(cudaMemGetInfo(free_bytes, &total), err);
    return 0;
}

int gpu_copy_to_device(void *dst, const void *src, size_t n, kbv_err *err) {
    GPU_CHECK(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice), err);
    return 0;
}

int gpu_copy_to_host(void *dst, const void *src, size_t n, kbv_err *err) {
    GPU_CHECK(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost), err);
    return 0;
}

int gpu_sync(kbv_err *err) {
    GPU_CHECK(cudaDeviceSynchronize(), err);
    GPU_CHECK(cudaGetLastError(), err);
    return 0;
}

int gpu_device_name(char *out, size_t outlen, kbv_err *err) {
    struct cudaDeviceProp prop;
    int dev = 0;
    GPU_CHECK(cudaGetDevice(&dev), err);
    GPU_CHECK(cudaGetDeviceProperties(&prop, dev), err);
    snprintf(out, outlen, "%s", prop.name);
    return 0;
}

#else /* built without CUDA */

static int no_cuda(kbv_err *err) { return kbv_seterr(err, "kbv-worker was built without CUDA"); }
int gpu_compiled(void) { return 0; }
int gpu_init(int device, kbv_err *err) {
    (void)device;
    return no_cuda(err);
}
int gpu_malloc(void **ptr, size_t n, kbv_err *err) {
    (void)n;
    *ptr = NULL;
    return no_cuda(err);
}
void gpu_free(void *ptr) { (void)ptr; }
int gpu_try_malloc(void **ptr, size_t n) {
    (void)n;
    *ptr = NULL;
    return -1;
}
int gpu_mem_free(size_t *free_bytes, kbv_err *err) {
    *free_bytes = 0;
    return no_cuda(err);
}
int gpu_copy_to_device(void *d, const void *s, size_t n, kbv_err *err) {
    (void)d, (void)s, (void)n;
    return no_cuda(err);
}
int gpu_copy_to_host(void *d, const void *s, size_t n, kbv_err *err) {
    (void)d, (void)s, (void)n;
    return no_cuda(err);
}
int gpu_sync(kbv_err *err) { return no_cuda(err); }
int gpu_device_name(char *out, size_t outlen, kbv_err *err) {
    (void)out, (void)outlen;
    return no_cuda(err);
}

#endif
