# Honest but memory-hungry CUDA candidate for relu: each call takes a 64 MiB scratch workspace
# with raw cudaMalloc (outside torch's allocator), computes through it, and frees it.
# torch.cuda.max_memory_allocated() cannot see the workspace; kbv's CUPTI audit must
# (memory.peak_bytes_candidate >= 64 MiB; docs/timing.md, "Memory").
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void relu_to(const float* __restrict__ x, float* __restrict__ w, long n) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        w[i] = fmaxf(x[i], 0.0f);
}

torch::Tensor relu_ws(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    long n = xc.numel();
    size_t bytes = 64ull << 20;
    TORCH_CHECK((size_t)n * sizeof(float) <= bytes, "input larger than the workspace");
    float* ws = nullptr;
    TORCH_CHECK(cudaMalloc(&ws, bytes) == cudaSuccess, "cudaMalloc failed");
    int threads = 256;
    int blocks = (int)std::min<long>((n + threads - 1) / threads, 65535L * 8);
    relu_to<<<blocks, threads>>>(xc.data_ptr<float>(), ws, n);
    TORCH_CHECK(cudaMemcpyAsync(y.data_ptr<float>(), ws, n * sizeof(float), cudaMemcpyDeviceToDevice) == cudaSuccess,
                "copy failed");
    TORCH_CHECK(cudaFree(ws) == cudaSuccess, "cudaFree failed");
    return y;
}
"""

ext = load_inline(name="kbv_example_relu_workspace", cpp_sources="torch::Tensor relu_ws(torch::Tensor x);",
                  cuda_sources=cuda_source, functions=["relu_ws"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_ws(x)
