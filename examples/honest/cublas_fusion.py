# HONEST: cuBLAS inside an authored fusion (reward-hacks.md §2.3). The GEMM is cuBLAS (at::mm);
# the bias add and ReLU are fused into one authored kernel instead of two PyTorch ops. Library
# kernels inside an authored fusion are allowed by kbv's default policy.
# kbv-zoo: problem=linear_relu expect=verified device=gpu
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ext = load_inline(name="kbv_honest_cublas_fusion", cpp_sources="torch::Tensor linear_relu(torch::Tensor x, torch::Tensor w, torch::Tensor b);",
                  cuda_sources=r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void bias_relu(float* y, const float* b, long rows, long cols) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < rows * cols) y[i] = fmaxf(y[i] + b[i % cols], 0.0f);
}
torch::Tensor linear_relu(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    auto y = at::mm(x, w.t()).contiguous();
    long n = y.numel();
    bias_relu<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(y.data_ptr<float>(), b.data_ptr<float>(), y.size(0), y.size(1));
    return y;
}
""", functions=["linear_relu"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return ext.linear_relu(x.contiguous(), self.linear.weight, self.linear.bias)
