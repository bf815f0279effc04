# Honest CUDA candidate for level1/27_cumsum: one block of 1024 threads per row scans chunks of
# 8192 elements: each thread prefix-sums 8 consecutive values sequentially, thread totals are
# scanned with warp shuffles and then across warps, and a carry links the chunks. fp32 throughout.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#define PER 8

__global__ void __launch_bounds__(1024) cumsum_rows(const float* __restrict__ x, float* __restrict__ y, long cols) {
    __shared__ float warp_tot[32];
    const float* xr = x + (long)blockIdx.x * cols;
    float* yr = y + (long)blockIdx.x * cols;
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
    float carry = 0.0f;
    for (long base = 0; base < cols; base += (long)blockDim.x * PER) {
        const long start = base + (long)threadIdx.x * PER;
        float v[PER];
        float run = 0.0f;
#pragma unroll
        for (int p = 0; p < PER; ++p) {
            long j = start + p;
            run += (j < cols) ? xr[j] : 0.0f;
            v[p] = run;
        }
        // inclusive scan of the thread totals within the warp
        float incl = run;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            float n = __shfl_up_sync(0xffffffffu, incl, o);
            if (lane >= o) incl += n;
        }
        float excl = __shfl_up_sync(0xffffffffu, incl, 1);
        if (lane == 0) excl = 0.0f;
        if (lane == 31) warp_tot[wid] = incl;
        __syncthreads();
        if (wid == 0) {
            float w = lane < nwarps ? warp_tot[lane] : 0.0f;
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) {
                float n = __shfl_up_sync(0xffffffffu, w, o);
                if (lane >= o) w += n;
            }
            if (lane < nwarps) warp_tot[lane] = w;
        }
        __syncthreads();
        const float offset = carry + ((wid > 0 ? warp_tot[wid - 1] : 0.0f) + excl);
#pragma unroll
        for (int p = 0; p < PER; ++p) {
            long j = start + p;
            if (j < cols) yr[j] = offset + v[p];
        }
        carry += warp_tot[nwarps - 1];
        __syncthreads();
    }
}

torch::Tensor cumsum_last(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() == 2, "2-d float32 CUDA tensor expected");
    auto xc = x.contiguous();
    long rows = xc.size(0), cols = xc.size(1);
    auto y = torch::empty_like(xc);
    if (rows == 0 || cols == 0) return y;
    cumsum_rows<<<(unsigned)rows, 1024, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

ext = load_inline(name="kbv_suite_l1_27_cumsum", cpp_sources="torch::Tensor cumsum_last(torch::Tensor x);",
                  cuda_sources=cuda_source, functions=["cumsum_last"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.cumsum_last(x)
