# Honest CUDA candidate for level2/05_attention_scores_softmax: Q K^T is a batched cuBLAS product
# (at::matmul) inside an authored fusion; one kernel per score row then applies the scale and the
# softmax in place (an online max / sum-of-exp pass, then a write pass), instead of PyTorch's
# separate scale and softmax passes.
import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
    if (m2 == -INFINITY) return;
    if (m == -INFINITY) { m = m2; s = s2; return; }
    if (m2 > m) { s = s * expf(m - m2) + s2; m = m2; }
    else s = s + s2 * expf(m2 - m);
}

__global__ void scale_softmax_rows(float* __restrict__ y, long n, float scale) {
    __shared__ float shm[32], shs[32];
    __shared__ float row_m, row_s;
    float* row = y + (long)blockIdx.x * n;
    float m = -INFINITY, s = 0.0f;
    for (long j = threadIdx.x; j < n; j += blockDim.x) merge(m, s, row[j] * scale, 1.0f);
    for (int o = 16; o > 0; o >>= 1) {
        float m2 = __shfl_xor_sync(0xffffffffu, m, o);
        float s2 = __shfl_xor_sync(0xffffffffu, s, o);
        merge(m, s, m2, s2);
    }
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) { shm[wid] = m; shs[wid] = s; }
    __syncthreads();
    if (wid == 0) {
        int nw = (blockDim.x + 31) >> 5;
        m = lane < nw ? shm[lane] : -INFINITY;
        s = lane < nw ? shs[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) {
            float m2 = __shfl_xor_sync(0xffffffffu, m, o);
            float s2 = __shfl_xor_sync(0xffffffffu, s, o);
            merge(m, s, m2, s2);
        }
        if (lane == 0) { row_m = m; row_s = s; }
    }
    __syncthreads();
    const float mx = row_m, sum = row_s;
    for (long j = threadIdx.x; j < n; j += blockDim.x) row[j] = expf(row[j] * scale - mx) / sum;
}

torch::Tensor attn_probs(torch::Tensor q, torch::Tensor k, double scale) {
    TORCH_CHECK(q.is_cuda() && q.scalar_type() == torch::kFloat32 && k.scalar_type() == torch::kFloat32, "float32 CUDA tensors expected");
    auto scores = at::matmul(q.contiguous(), k.contiguous().transpose(-2, -1)).contiguous();
    long n = scores.size(-1);
    long rows = n > 0 ? scores.numel() / n : 0;
    if (rows == 0) return scores;
    scale_softmax_rows<<<(unsigned)rows, 256, 0, at::cuda::getCurrentCUDAStream()>>>(scores.data_ptr<float>(), n, (float)scale);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return scores;
}
"""

ext = load_inline(name="kbv_suite_l2_05_attention_scores_softmax",
                  cpp_sources="torch::Tensor attn_probs(torch::Tensor q, torch::Tensor k, double scale);",
                  cuda_sources=cuda_source, functions=["attn_probs"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, head_dim):
        super().__init__()
        self.scale = 1.0 / math.sqrt(head_dim)

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return ext.attn_probs(q, k, self.scale)
