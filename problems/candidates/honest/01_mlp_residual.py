# Honest CUDA candidate for level3/01_mlp_residual: the three GEMMs are cuBLAS (at::mm) inside an
# authored fusion; authored epilogue kernels add each bias and apply GELU (erf) or SiLU in place,
# and the last one adds the bias and the residual x in the same pass.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

// mode 0: GELU (erf), mode 1: SiLU
__global__ void bias_act_inplace(float* __restrict__ y, const float* __restrict__ b, long rows, long cols, int mode) {
    const long n = rows * cols;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        float v = y[i] + b[i % cols];
        y[i] = mode == 0 ? 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f)) : v / (1.0f + expf(-v));
    }
}

__global__ void bias_residual(const float* __restrict__ y, const float* __restrict__ b, const float* __restrict__ x,
                              float* __restrict__ out, long rows, long cols) {
    const long n = rows * cols;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        out[i] = x[i] + (y[i] + b[i % cols]);
}

static unsigned grid_for(long n) { return (unsigned)std::max<long>(1, std::min<long>((n + 255) / 256, 132L * 32)); }

torch::Tensor mlp_residual(torch::Tensor x, torch::Tensor w1, torch::Tensor b1, torch::Tensor w2, torch::Tensor b2,
                           torch::Tensor w3, torch::Tensor b3) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA input expected");
    auto xc = x.contiguous();
    long d = xc.size(-1);
    long rows = d > 0 ? xc.numel() / d : 0;
    auto x2 = xc.view({rows, d});
    auto stream = at::cuda::getCurrentCUDAStream();
    auto b1c = b1.contiguous(), b2c = b2.contiguous(), b3c = b3.contiguous();

    auto h1 = at::mm(x2, w1.t()).contiguous();
    if (h1.numel() > 0) {
        bias_act_inplace<<<grid_for(h1.numel()), 256, 0, stream>>>(h1.data_ptr<float>(), b1c.data_ptr<float>(), h1.size(0), h1.size(1), 0);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    auto h2 = at::mm(h1, w2.t()).contiguous();
    if (h2.numel() > 0) {
        bias_act_inplace<<<grid_for(h2.numel()), 256, 0, stream>>>(h2.data_ptr<float>(), b2c.data_ptr<float>(), h2.size(0), h2.size(1), 1);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    auto y = at::mm(h2, w3.t()).contiguous();
    auto out = torch::empty_like(xc);
    if (y.numel() > 0) {
        bias_residual<<<grid_for(y.numel()), 256, 0, stream>>>(y.data_ptr<float>(), b3c.data_ptr<float>(), x2.data_ptr<float>(),
                                                               out.data_ptr<float>(), y.size(0), y.size(1));
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return out;
}
"""

ext = load_inline(name="kbv_suite_l3_01_mlp_residual",
                  cpp_sources="torch::Tensor mlp_residual(torch::Tensor x, torch::Tensor w1, torch::Tensor b1, torch::Tensor w2, "
                              "torch::Tensor b2, torch::Tensor w3, torch::Tensor b3);",
                  cuda_sources=cuda_source, functions=["mlp_residual"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.mlp_residual(x, self.fc1.weight, self.fc1.bias, self.fc2.weight, self.fc2.bias,
                                self.fc3.weight, self.fc3.bias)
