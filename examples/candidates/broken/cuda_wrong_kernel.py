# expect: incorrect (GPU only) -- a kernel with an off-by-one bound leaves the last element unset (left at 12345).
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = r"""
#include <torch/extension.h>
__global__ void relu_k(const float* x, float* y, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n - 1) y[i] = fmaxf(x[i], 0.0f);
}
torch::Tensor run(torch::Tensor x) {
    auto y = torch::full_like(x, 12345.0f);
    long n = x.numel();
    relu_k<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
ext = load_inline(name="kbv_broken_cuda_wrong", cpp_sources="torch::Tensor run(torch::Tensor x);",
                  cuda_sources=src, functions=["run"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.run(x.contiguous())
