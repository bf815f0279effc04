import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

add_source = r"""
#include <torch/extension.h>

// One thread per element; the grid covers the whole tensor.
__global__ void add_kernel(const float* __restrict__ x, const float* __restrict__ y,
                           float* __restrict__ out, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] + y[i];
}

torch::Tensor add_cuda(torch::Tensor x, torch::Tensor y) {
    TORCH_CHECK(x.is_cuda() && y.is_cuda(), "add_cuda: CUDA tensors expected");
    TORCH_CHECK(x.sizes() == y.sizes(), "add_cuda: shapes differ");
    auto xc = x.contiguous();
    auto yc = y.contiguous();
    auto out = torch::empty_like(xc);
    int64_t n = xc.numel();
    const int threads = 256;
    const int64_t blocks = (n + threads - 1) / threads;
    add_kernel<<<blocks, threads>>>(xc.data_ptr<float>(), yc.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

add_ext = load_inline(
    name="elementwise_add",
    cpp_sources="torch::Tensor add_cuda(torch::Tensor x, torch::Tensor y);",
    cuda_sources=add_source,
    functions=["add_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    """Model, with the addition done by the custom kernel above."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return add_ext.add_cuda(x, y)
