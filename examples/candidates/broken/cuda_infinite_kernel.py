# expect: timeout (GPU only) -- the kernel spins forever; kbv must kill the worker.
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = r"""
#include <torch/extension.h>
__global__ void spin(volatile float* y) { while (y[0] == y[0]) { y[1] += 1.0f; } }
torch::Tensor run(torch::Tensor x) {
    auto y = torch::zeros_like(x);
    spin<<<1, 1>>>(y.data_ptr<float>());
    return y;
}
"""
ext = load_inline(name="kbv_broken_cuda_spin", cpp_sources="torch::Tensor run(torch::Tensor x);",
                  cuda_sources=src, functions=["run"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.run(x)
