// A native CUDA candidate for examples/problems/relu.py: y = max(x, 0).
//   kbv eval examples/problems/relu.py examples/native/relu.cu --device cuda
// kbv compiles it with nvcc straight to a shared object (no torch headers) and calls
// kbv_forward with device pointers and the current stream, on which the kernel launches.
#include <cstdio>

#include <cuda_runtime.h>

#include "kbv_native.h"

static char last_error[256] = "";

const char *kbv_native_error(void) { return last_error; }

__global__ void relu_kernel(const float *__restrict__ x, float *__restrict__ y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += step) y[i] = fmaxf(x[i], 0.0f);
}

int kbv_forward(const kbv_native_tensor *inputs, int n_inputs, kbv_native_tensor *outputs, int n_outputs, void *stream) {
    if (n_inputs < 1 || n_outputs != 1 || inputs[0].dtype != KBV_NATIVE_FLOAT32) return 1;
    const kbv_native_tensor *x = &inputs[0];
    int64_t n = 1, expect = 1;
    for (int d = x->ndim - 1; d >= 0; d--) {
        if (x->shape[d] != 1 && x->strides[d] != expect) return 2; // contiguous only
        expect *= x->shape[d];
        n *= x->shape[d];
    }
    if (n == 0) return 0;
    int threads = 256;
    int64_t blocks = (n + threads - 1) / threads;
    if (blocks > 65535) blocks = 65535;
    relu_kernel<<<(unsigned)blocks, threads, 0, (cudaStream_t)stream>>>((const float *)x->data, (float *)outputs[0].data, n);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        snprintf(last_error, sizeof last_error, "relu_kernel: %s", cudaGetErrorString(e));
        return 3;
    }
    return 0;
}
