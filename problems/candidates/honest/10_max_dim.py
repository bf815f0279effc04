# Honest CUDA candidate for level1/10_max_dim: one block per row, a strided per-thread maximum
# then a warp-shuffle and shared-memory tree maximum (NaN propagates, as torch.amax does).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__device__ __forceinline__ float nan_max(float a, float b) {
    return (a > b || a != a) ? a : b;
}

__global__ void row_amax(const float* __restrict__ x, float* __restrict__ y, long cols) {
    __shared__ float part[32];
    const float* row = x + (long)blockIdx.x * cols;
    float m = -INFINITY;
    for (long j = threadIdx.x; j < cols; j += blockDim.x) m = nan_max(m, row[j]);
    for (int o = 16; o > 0; o >>= 1) m = nan_max(m, __shfl_xor_sync(0xffffffffu, m, o));
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) part[wid] = m;
    __syncthreads();
    if (wid == 0) {
        int nw = (blockDim.x + 31) >> 5;
        m = lane < nw ? part[lane] : -INFINITY;
        for (int o = 16; o > 0; o >>= 1) m = nan_max(m, __shfl_xor_sync(0xffffffffu, m, o));
        if (lane == 0) y[blockIdx.x] = m;
    }
}

torch::Tensor amax_last(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() >= 1, "float32 CUDA tensor expected");
    TORCH_CHECK(x.size(-1) > 0, "empty reduction");
    auto xc = x.contiguous();
    long cols = xc.size(-1);
    long rows = xc.numel() / cols;
    auto sizes = xc.sizes().vec();
    sizes.pop_back();
    auto y = torch::empty(sizes, xc.options());
    if (rows == 0) return y;
    row_amax<<<(unsigned)rows, 256, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

ext = load_inline(name="kbv_suite_l1_10_max_dim", cpp_sources="torch::Tensor amax_last(torch::Tensor x);",
                  cuda_sources=cuda_source, functions=["amax_last"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.amax_last(x)
