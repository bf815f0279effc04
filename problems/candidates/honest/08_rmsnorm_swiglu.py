# Honest CUDA candidate for level2/08_rmsnorm_swiglu: an authored RMS-norm kernel (one block per
# row, fp32 tree sum of squares) writes h; the two projections are cuBLAS (at::mm) inside the
# authored fusion; one elementwise kernel then computes silu(g) * u.
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

__global__ void rms_norm_rows(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ h,
                              long n, float eps) {
    __shared__ float sh[33];
    const float* row = x + (long)blockIdx.x * n;
    float* out = h + (long)blockIdx.x * n;
    float q = 0.0f;
    for (long j = threadIdx.x; j < n; j += blockDim.x) q += row[j] * row[j];
    const float inv = 1.0f / sqrtf(block_sum(q, sh) / (float)n + eps);
    for (long j = threadIdx.x; j < n; j += blockDim.x) out[j] = row[j] * inv * w[j];
}

__global__ void swiglu(const float* __restrict__ g, const float* __restrict__ u, float* __restrict__ y, long n) {
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        float a = g[i];
        y[i] = a / (1.0f + expf(-a)) * u[i];
    }
}

torch::Tensor rmsnorm_swiglu(torch::Tensor x, torch::Tensor norm_w, torch::Tensor wg, torch::Tensor wu, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() == 2, "2-d float32 CUDA input expected");
    auto xc = x.contiguous();
    auto nw = norm_w.contiguous();
    long rows = xc.size(0), n = xc.size(1);
    auto h = torch::empty_like(xc);
    auto stream = at::cuda::getCurrentCUDAStream();
    if (rows > 0 && n > 0) {
        rms_norm_rows<<<(unsigned)rows, 256, 0, stream>>>(xc.data_ptr<float>(), nw.data_ptr<float>(), h.data_ptr<float>(), n, (float)eps);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    auto g = at::mm(h, wg.t()).contiguous();
    auto u = at::mm(h, wu.t()).contiguous();
    auto y = torch::empty_like(g);
    long total = g.numel();
    if (total == 0) return y;
    long blocks = std::min<long>((total + 255) / 256, 132L * 32);
    swiglu<<<(unsigned)blocks, 256, 0, stream>>>(g.data_ptr<float>(), u.data_ptr<float>(), y.data_ptr<float>(), total);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

ext = load_inline(name="kbv_suite_l2_08_rmsnorm_swiglu",
                  cpp_sources="torch::Tensor rmsnorm_swiglu(torch::Tensor x, torch::Tensor norm_w, torch::Tensor wg, torch::Tensor wu, double eps);",
                  cuda_sources=cuda_source, functions=["rmsnorm_swiglu"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, hidden, inner, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.norm_weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))
        self.gate = nn.Linear(hidden, inner, bias=False)
        self.up = nn.Linear(hidden, inner, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.rmsnorm_swiglu(x, self.norm_weight, self.gate.weight, self.up.weight, self.eps)
