# Honest CUDA candidate for scale_large: one vectorised grid-stride kernel.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>

__global__ void scale2_kernel(const float4* __restrict__ x, float4* __restrict__ y, long n4) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n4; i += (long)gridDim.x * blockDim.x) {
        float4 v = x[i];
        y[i] = make_float4(2.0f * v.x, 2.0f * v.y, 2.0f * v.z, 2.0f * v.w);
    }
}

torch::Tensor scale2(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.numel() % 4 == 0, "float32 CUDA tensor, numel % 4 == 0");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    long n4 = xc.numel() / 4;
    scale2_kernel<<<132 * 8, 256>>>((const float4*)xc.data_ptr<float>(), (float4*)y.data_ptr<float>(), n4);
    return y;
}
"""

ext = load_inline(name="kbv_example_scale2", cpp_sources="torch::Tensor scale2(torch::Tensor x);",
                  cuda_sources=cuda_source, functions=["scale2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.scale2(x)
