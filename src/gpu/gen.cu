/* gen.cu -- the input generator and fingerprints on the GPU: the same gen.h functions as
 * src/gen.c, one thread per element, built with -fmad=false so values match the CPU's bit
 * for bit. Every launch is checked. */
extern "C" {
#include "../gen_host.h"
}
#include <cuda_runtime_api.h>

#define GEN_CHECK(call, err)                                                                                                          \
    do {                                                                                                                              \
        cudaError_t e_ = (call);                                                                                                      \
        if (e_ != cudaSuccess) return kbv_seterr((err), "%s failed at %s:%d: %s", #call, __FILE__, __LINE__, cudaGetErrorString(e_)); \
    } while (0)

static __global__ void fill_kernel(kbv_gen_plan g, unsigned char *out, long long n, unsigned es) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        kbv_gen_store(&g, (uint64_t)i, out + (size_t)i * es);
}

static __global__ void mask_kernel(unsigned char *out, const uint8_t *mask, long long n, unsigned es) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        if (mask[i])
            for (unsigned b = 0; b < es; b++) out[(size_t)i * es + b] = 0;
}

static __global__ void sym_kernel(unsigned char *out, long long batch, long long d, unsigned es) {
    long long total = batch * d * d;
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < total; t += (long long)gridDim.x * blockDim.x) {
        long long b = t / (d * d), r = (t / d) % d, c = t % d;
        if (r > c) /* lower triangle takes the upper's value */
            for (unsigned k = 0; k < es; k++) out[(size_t)t * es + k] = out[(size_t)((b * d + c) * d + r) * es + k];
    }
}

static __global__ void fp_kernel(const unsigned char *data, unsigned long long nbytes, unsigned long long *acc) {
    unsigned long long words = (nbytes + 7) / 8, local = 0;
    for (unsigned long long k = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; k < words; k += (unsigned long long)gridDim.x * blockDim.x)
        local += kbv_fp_word(data, nbytes, k);
    atomicAdd(acc, local);
}

static unsigned grid_for(long long n) {
    long long b = (n + 255) / 256;
    return (unsigned)(b < 1 ? 1 : b > 65535LL * 16 ? 65535LL * 16 : b);
}

extern "C" int gpu_gen_fill(const kbv_gen_plan *g, void *dev_out, int64_t n, size_t es, kbv_err *err) {
    if (n <= 0) return 0;
    fill_kernel<<<grid_for(n), 256>>>(*g, (unsigned char *)dev_out, (long long)n, (unsigned)es);
    GEN_CHECK(cudaGetLastError(), err);
    GEN_CHECK(cudaDeviceSynchronize(), err);
    return 0;
}

extern "C" int gpu_gen_mask(void *dev_out, const uint8_t *dev_mask, int64_t n, size_t es, kbv_err *err) {
    if (n <= 0) return 0;
    mask_kernel<<<grid_for(n), 256>>>((unsigned char *)dev_out, dev_mask, (long long)n, (unsigned)es);
    GEN_CHECK(cudaGetLastError(), err);
    GEN_CHECK(cudaDeviceSynchronize(), err);
    return 0;
}

extern "C" int gpu_gen_symmetrize(void *dev_out, int64_t batch, int64_t d, size_t es, kbv_err *err) {
    if (batch <= 0 || d <= 1) return 0;
    sym_kernel<<<grid_for(batch * d * d), 256>>>((unsigned char *)dev_out, (long long)batch, (long long)d, (unsigned)es);
    GEN_CHECK(cudaGetLastError(), err);
    GEN_CHECK(cudaDeviceSynchronize(), err);
    return 0;
}

extern "C" int gpu_fingerprint(const void *dev_data, uint64_t nbytes, uint64_t *out, kbv_err *err) {
    unsigned long long *acc = NULL, host = 0;
    GEN_CHECK(cudaMalloc((void **)&acc, sizeof *acc), err);
    cudaError_t e = cudaMemset(acc, 0, sizeof *acc);
    if (e == cudaSuccess && nbytes) {
        fp_kernel<<<grid_for((long long)((nbytes + 7) / 8)), 256>>>((const unsigned char *)dev_data, nbytes, acc);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpy(&host, acc, sizeof host, cudaMemcpyDeviceToHost);
    cudaFree(acc);
    if (e != cudaSuccess) return kbv_seterr(err, "fingerprint kernel failed at %s:%d: %s", __FILE__, __LINE__, cudaGetErrorString(e));
    *out = host + kbv_fp_mix(nbytes);
    return 0;
}
