# expect: runtime_error (GPU only) -- the kernel writes far out of bounds: an illegal
# memory access, reported by CUDA at the next synchronisation.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = r"""
#include <torch/extension.h>
__global__ void bad(float* y, long n) { y[n * 1000000000L + threadIdx.x] = 1.0f; }
torch::Tensor run(torch::Tensor x) {
    auto y = torch::empty_like(x);
    bad<<<1, 32>>>(y.data_ptr<float>(), x.numel());
    return y;
}
"""
ext = load_inline(name="kbv_broken_illegal_address", cpp_sources="torch::Tensor run(torch::Tensor x);",
                  cuda_sources=src, functions=["run"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.run(x)
