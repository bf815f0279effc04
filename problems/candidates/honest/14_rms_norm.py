# Honest CUDA candidate for level1/14_rms_norm: one block per row; the sum of squares is a
# warp-shuffle + shared-memory tree in fp32, then y = x / sqrt(mean + eps) * weight.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__device__ __forceinline__ float block_sum(float v, float* sh) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    if (wid == 0) {
        int nw = (blockDim.x + 31) >> 5;
        v = lane < nw ? sh[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        if (lane == 0) sh[32] = v;
    }
    __syncthreads();
    return sh[32];
}

__global__ void rms_norm_rows(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
                              long n, float eps) {
    __shared__ float sh[33];
    const float* row = x + (long)blockIdx.x * n;
    float* out = y + (long)blockIdx.x * n;
    float q = 0.0f;
    for (long j = threadIdx.x; j < n; j += blockDim.x) q += row[j] * row[j];
    const float inv = 1.0f / sqrtf(block_sum(q, sh) / (float)n + eps);
    for (long j = threadIdx.x; j < n; j += blockDim.x) out[j] = row[j] * inv * w[j];
}

torch::Tensor rms_norm(torch::Tensor x, torch::Tensor w, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
    auto xc = x.contiguous();
    auto wc = w.contiguous();
    long n = xc.size(-1);
    TORCH_CHECK(wc.numel() == n, "weight size mismatch");
    long rows = n > 0 ? xc.numel() / n : 0;
    auto y = torch::empty_like(xc);
    if (rows == 0) return y;
    rms_norm_rows<<<(unsigned)rows, 512, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), wc.data_ptr<float>(), y.data_ptr<float>(), n, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

ext = load_inline(name="kbv_suite_l1_14_rms_norm", cpp_sources="torch::Tensor rms_norm(torch::Tensor x, torch::Tensor w, double eps);",
                  cuda_sources=cuda_source, functions=["rms_norm"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.rms_norm(x, self.weight, self.eps)
