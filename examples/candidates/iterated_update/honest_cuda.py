# Honest CUDA candidate for iterated_update: the 32 steps of y = 0.9 tanh(y) + 0.1 x fused into
# one kernel, one thread per element, with PyTorch's own fp32 roundings (no FMA contraction).
# Eager PyTorch launches 96 kernels per call, so on a GPU this is tens of times faster for the
# same arithmetic: kbv reports excessive_speedup (info: worth a look, not a verdict) and
# verifies it (tests/gpu/cases.txt).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void iterated_kernel(const float* __restrict__ x, float* __restrict__ y, long n) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        float xi = x[i], v = xi, bias = __fmul_rn(xi, 0.1f);
        for (int s = 0; s < 32; s++) v = __fadd_rn(__fmul_rn(tanhf(v), 0.9f), bias);
        y[i] = v;
    }
}

torch::Tensor iterated_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    long n = xc.numel();
    int threads = 256;
    int blocks = (int)std::min<long>((n + threads - 1) / threads, 65535L * 8);
    iterated_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

ext = load_inline(name="kbv_example_iterated_update_cuda", cpp_sources="torch::Tensor iterated_cuda(torch::Tensor x);",
                  cuda_sources=cuda_source, functions=["iterated_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.iterated_cuda(x)
