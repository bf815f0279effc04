# Honest CUDA candidate for level1/29_embedding: one block per token copies its table row to the
# output (float4 loads and stores when the width allows). An id outside the table writes NaN
# instead of reading out of bounds (PyTorch raises there; kbv's ids are always in range).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void gather_rows(const int64_t* __restrict__ ids, const float* __restrict__ table, float* __restrict__ out,
                            long vocab, long dim) {
    const int64_t id = ids[blockIdx.x];
    float* dst = out + (long)blockIdx.x * dim;
    if (id < 0 || id >= vocab) {
        for (long j = threadIdx.x; j < dim; j += blockDim.x) dst[j] = NAN;
        return;
    }
    const float* src = table + id * dim;
    if ((dim & 3) == 0) {
        const float4* s4 = reinterpret_cast<const float4*>(src);
        float4* d4 = reinterpret_cast<float4*>(dst);
        for (long j = threadIdx.x; j < dim / 4; j += blockDim.x) d4[j] = s4[j];
    } else {
        for (long j = threadIdx.x; j < dim; j += blockDim.x) dst[j] = src[j];
    }
}

torch::Tensor embed(torch::Tensor ids, torch::Tensor table) {
    TORCH_CHECK(ids.is_cuda() && ids.scalar_type() == torch::kInt64, "int64 CUDA ids expected");
    TORCH_CHECK(table.is_cuda() && table.scalar_type() == torch::kFloat32 && table.dim() == 2, "2-d float32 table expected");
    auto ic = ids.contiguous();
    auto tc = table.contiguous();
    long vocab = tc.size(0), dim = tc.size(1);
    auto sizes = ic.sizes().vec();
    sizes.push_back(dim);
    auto out = torch::empty(sizes, tc.options());
    long n = ic.numel();
    if (n == 0 || dim == 0) return out;
    gather_rows<<<(unsigned)n, 256, 0, at::cuda::getCurrentCUDAStream()>>>(ic.data_ptr<int64_t>(), tc.data_ptr<float>(),
                                                                           out.data_ptr<float>(), vocab, dim);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

ext = load_inline(name="kbv_suite_l1_29_embedding", cpp_sources="torch::Tensor embed(torch::Tensor ids, torch::Tensor table);",
                  cuda_sources=cuda_source, functions=["embed"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, vocab_size, embed_dim):
        super().__init__()
        self.table = nn.Embedding(vocab_size, embed_dim)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return ext.embed(ids, self.table.weight)
