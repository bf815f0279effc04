# Honest CUDA candidate for rowsum_large: one block per row, a shared-memory tree reduction.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>

__global__ void rowsum_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float part[256];
    const float* row = x + (long)blockIdx.x * cols;
    float acc = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) acc += row[j];
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) y[blockIdx.x] = part[0];
}

torch::Tensor rowsum(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() == 2, "2-d float32 CUDA tensor expected");
    auto xc = x.contiguous();
    auto y = torch::empty({xc.size(0)}, xc.options());
    rowsum_kernel<<<(int)xc.size(0), 256>>>(xc.data_ptr<float>(), y.data_ptr<float>(), (int)xc.size(1));
    return y;
}
"""

ext = load_inline(name="kbv_example_rowsum", cpp_sources="torch::Tensor rowsum(torch::Tensor x);",
                  cuda_sources=cuda_source, functions=["rowsum"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.rowsum(x)
