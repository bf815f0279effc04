# Honest CUDA candidate for level1/23_cross_entropy_smoothed: one block per row computes, in one
# pass, an online (max, sum of exp) pair and the row's plain sum, so that with lse = log-sum-exp
# the row loss is (1 - eps)(lse - x[target]) + eps (lse - mean(x)); a second single-block kernel
# takes the batch mean in a fixed order. Targets are read as int64.
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

__global__ void ce_smoothed_rows(const float* __restrict__ logits, const int64_t* __restrict__ targets,
                                 float* __restrict__ row_loss, long C, float eps) {
    __shared__ float shm[32], shs[32], shx[32];
    const float* row = logits + (long)blockIdx.x * C;
    float m = -INFINITY, s = 0.0f, sx = 0.0f;
    for (long j = threadIdx.x; j < C; j += blockDim.x) {
        float v = row[j];
        merge(m, s, v, 1.0f);
        sx += v;
    }
    for (int o = 16; o > 0; o >>= 1) {
        float m2 = __shfl_xor_sync(0xffffffffu, m, o);
        float s2 = __shfl_xor_sync(0xffffffffu, s, o);
        sx += __shfl_xor_sync(0xffffffffu, sx, o);
        merge(m, s, m2, s2);
    }
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) { shm[wid] = m; shs[wid] = s; shx[wid] = sx; }
    __syncthreads();
    if (wid == 0) {
        int nw = (blockDim.x + 31) >> 5;
        m = lane < nw ? shm[lane] : -INFINITY;
        s = lane < nw ? shs[lane] : 0.0f;
        sx = lane < nw ? shx[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) {
            float m2 = __shfl_xor_sync(0xffffffffu, m, o);
            float s2 = __shfl_xor_sync(0xffffffffu, s, o);
            sx += __shfl_xor_sync(0xffffffffu, sx, o);
            merge(m, s, m2, s2);
        }
        if (lane == 0) {
            float lse = m + logf(s);
            int64_t t = targets[blockIdx.x];
            float xt = (t >= 0 && t < C) ? row[t] : NAN;
            row_loss[blockIdx.x] = (1.0f - eps) * (lse - xt) + eps * (lse - sx / (float)C);
        }
    }
}

__global__ void mean_reduce(const float* __restrict__ v, float* __restrict__ out, long n) {
    __shared__ float sh[1024];
    float s = 0.0f;
    for (long i = threadIdx.x; i < n; i += blockDim.x) s += v[i];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) sh[threadIdx.x] += sh[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = sh[0] / (float)n;
}

torch::Tensor ce_smoothed(torch::Tensor logits, torch::Tensor targets, double eps) {
    TORCH_CHECK(logits.is_cuda() && logits.scalar_type() == torch::kFloat32 && logits.dim() == 2, "2-d float32 logits expected");
    TORCH_CHECK(targets.scalar_type() == torch::kInt64 && targets.dim() == 1, "int64 targets expected");
    auto lc = logits.contiguous();
    auto tc = targets.contiguous();
    long B = lc.size(0), C = lc.size(1);
    auto rows = torch::empty({B}, lc.options());
    auto out = torch::empty({}, lc.options());
    auto stream = at::cuda::getCurrentCUDAStream();
    ce_smoothed_rows<<<(unsigned)B, 256, 0, stream>>>(lc.data_ptr<float>(), tc.data_ptr<int64_t>(), rows.data_ptr<float>(), C, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    mean_reduce<<<1, 1024, 0, stream>>>(rows.data_ptr<float>(), out.data_ptr<float>(), B);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

ext = load_inline(name="kbv_suite_l1_23_cross_entropy_smoothed",
                  cpp_sources="torch::Tensor ce_smoothed(torch::Tensor logits, torch::Tensor targets, double eps);",
                  cuda_sources=cuda_source, functions=["ce_smoothed"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, smoothing):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return ext.ce_smoothed(logits, targets, self.smoothing)
