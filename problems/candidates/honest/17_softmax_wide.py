# Honest CUDA candidate for level1/17_softmax_wide: one block per row. Pass 1 keeps an online
# (max, sum of exp) pair per thread and merges the pairs through warp shuffles and shared
# memory; pass 2 writes exp(x - max) / sum. Works for any row width and any finite values.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

// Merge the online pair (m, s) with (m2, s2): s is a sum of exp(x - m).
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
    if (m2 == -INFINITY) return;
    if (m == -INFINITY) { m = m2; s = s2; return; }
    if (m2 > m) { s = s * expf(m - m2) + s2; m = m2; }
    else s = s + s2 * expf(m2 - m);
}

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, long n) {
    __shared__ float shm[32], shs[32];
    __shared__ float row_m, row_s;
    const float* row = x + (long)blockIdx.x * n;
    float* out = y + (long)blockIdx.x * n;
    float m = -INFINITY, s = 0.0f;
    for (long j = threadIdx.x; j < n; j += blockDim.x) merge(m, s, row[j], 1.0f);
    for (int o = 16; o > 0; o >>= 1) {
        float m2 = __shfl_xor_sync(0xffffffffu, m, o);
        float s2 = __shfl_xor_sync(0xffffffffu, s, o);
        merge(m, s, m2, s2);
    }
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) { shm[wid] = m; shs[wid] = s; }
    __syncthreads();
    if (wid == 0) {
        int nw = (blockDim.x + 31) >> 5;
        m = lane < nw ? shm[lane] : -INFINITY;
        s = lane < nw ? shs[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) {
            float m2 = __shfl_xor_sync(0xffffffffu, m, o);
            float s2 = __shfl_xor_sync(0xffffffffu, s, o);
            merge(m, s, m2, s2);
        }
        if (lane == 0) { row_m = m; row_s = s; }
    }
    __syncthreads();
    const float mx = row_m, sum = row_s;
    for (long j = threadIdx.x; j < n; j += blockDim.x) out[j] = expf(row[j] - mx) / sum;
}

torch::Tensor softmax_last(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
    auto xc = x.contiguous();
    long n = xc.size(-1);
    long rows = n > 0 ? xc.numel() / n : 0;
    auto y = torch::empty_like(xc);
    if (rows == 0) return y;
    softmax_rows<<<(unsigned)rows, 1024, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

ext = load_inline(name="kbv_suite_l1_17_softmax_wide", cpp_sources="torch::Tensor softmax_last(torch::Tensor x);",
                  cuda_sources=cuda_source, functions=["softmax_last"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.softmax_last(x)
