# expect: compile_error (GPU only) -- the CUDA source does not compile.
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = r"""
#include <torch/extension.h>
__global__ void k(float* y) { y[threadIdx.x] = undeclared_identifier; }
torch::Tensor run(torch::Tensor x) { return x; }
"""
ext = load_inline(name="kbv_broken_cuda_compile", cpp_sources="torch::Tensor run(torch::Tensor x);",
                  cuda_sources=src, functions=["run"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.run(x)
