# Honest CUDA candidate for level2/01_linear_bias_gelu: the GEMM x W^T is cuBLAS (at::mm) inside
# an authored fusion; one elementwise kernel then adds the bias and applies the exact erf GELU in
# place, instead of PyTorch's separate bias and GELU passes.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void bias_gelu_inplace(float* __restrict__ y, const float* __restrict__ b, long rows, long cols) {
    const long n = rows * cols;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        float v = y[i] + b[i % cols];
        y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
    }
}

torch::Tensor linear_gelu(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() == 2, "2-d float32 CUDA input expected");
    auto y = at::mm(x.contiguous(), w.t()).contiguous();
    auto bc = b.contiguous();
    long rows = y.size(0), cols = y.size(1);
    long n = rows * cols;
    if (n == 0) return y;
    long blocks = std::min<long>((n + 255) / 256, 132L * 32);
    bias_gelu_inplace<<<(unsigned)blocks, 256, 0, at::cuda::getCurrentCUDAStream()>>>(y.data_ptr<float>(), bc.data_ptr<float>(), rows, cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

ext = load_inline(name="kbv_suite_l2_01_linear_bias_gelu",
                  cpp_sources="torch::Tensor linear_gelu(torch::Tensor x, torch::Tensor w, torch::Tensor b);",
                  cuda_sources=cuda_source, functions=["linear_gelu"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.linear_gelu(x, self.fc.weight, self.fc.bias)
