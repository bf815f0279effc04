# Honest CUDA candidate for copy_scalar: one block of 256 threads, y = x + 1.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>

__global__ void add_one_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}

torch::Tensor add_one(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.numel() <= 1024, "small float32 CUDA tensor expected");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    add_one_kernel<<<1, 256>>>(xc.data_ptr<float>(), y.data_ptr<float>(), (int)xc.numel());
    return y;
}
"""

ext = load_inline(name="kbv_example_add_one", cpp_sources="torch::Tensor add_one(torch::Tensor x);",
                  cuda_sources=cuda_source, functions=["add_one"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.add_one(x)
