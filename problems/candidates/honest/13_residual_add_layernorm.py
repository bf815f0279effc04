# Honest CUDA candidate for level2/13_residual_add_layernorm: one block per row fuses the residual
# add into a three-pass layer norm (mean; sum of squared deviations; normalise + affine), so the
# sum x + residual is never written to memory.
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

__global__ void add_layer_norm_rows(const float* __restrict__ x, const float* __restrict__ r, const float* __restrict__ w,
                                    const float* __restrict__ b, float* __restrict__ y, long n, float eps) {
    __shared__ float sh[33];
    const long off = (long)blockIdx.x * n;
    const float* xr = x + off;
    const float* rr = r + off;
    float* out = y + off;
    float s = 0.0f;
    for (long j = threadIdx.x; j < n; j += blockDim.x) s += xr[j] + rr[j];
    const float mean = block_sum(s, sh) / (float)n;
    float q = 0.0f;
    for (long j = threadIdx.x; j < n; j += blockDim.x) {
        float d = (xr[j] + rr[j]) - mean;
        q += d * d;
    }
    const float rstd = 1.0f / sqrtf(block_sum(q, sh) / (float)n + eps);
    for (long j = threadIdx.x; j < n; j += blockDim.x) out[j] = ((xr[j] + rr[j]) - mean) * rstd * w[j] + b[j];
}

torch::Tensor add_layer_norm(torch::Tensor x, torch::Tensor r, torch::Tensor w, torch::Tensor b, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && r.scalar_type() == torch::kFloat32, "float32 CUDA tensors expected");
    TORCH_CHECK(x.sizes() == r.sizes(), "x and residual must have the same shape");
    auto xc = x.contiguous();
    auto rc = r.contiguous();
    auto wc = w.contiguous();
    auto bc = b.contiguous();
    long n = xc.size(-1);
    TORCH_CHECK(wc.numel() == n && bc.numel() == n, "affine size mismatch");
    long rows = n > 0 ? xc.numel() / n : 0;
    auto y = torch::empty_like(xc);
    if (rows == 0) return y;
    add_layer_norm_rows<<<(unsigned)rows, 512, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), rc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), y.data_ptr<float>(), n, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

ext = load_inline(name="kbv_suite_l2_13_residual_add_layernorm",
                  cpp_sources="torch::Tensor add_layer_norm(torch::Tensor x, torch::Tensor r, torch::Tensor w, torch::Tensor b, double eps);",
                  cuda_sources=cuda_source, functions=["add_layer_norm"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(hidden))
            self.norm.bias.copy_(0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return ext.add_layer_norm(x, residual, self.norm.weight, self.norm.bias, self.norm.eps)
