# Honest CUDA candidate for level2/06_gemm_sigmoid_rowsum: the GEMM x W^T is cuBLAS (at::mm)
# inside an authored fusion; one block per row then adds the bias, applies the sigmoid and sums
# the row (warp-shuffle + shared-memory tree), so the activated matrix is never written.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void bias_sigmoid_rowsum(const float* __restrict__ y, const float* __restrict__ b, float* __restrict__ out, long cols) {
    __shared__ float sh[32];
    const float* row = y + (long)blockIdx.x * cols;
    float s = 0.0f;
    for (long j = threadIdx.x; j < cols; j += blockDim.x) s += 1.0f / (1.0f + expf(-(row[j] + b[j])));
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) sh[wid] = s;
    __syncthreads();
    if (wid == 0) {
        int nw = (blockDim.x + 31) >> 5;
        s = lane < nw ? sh[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0) out[blockIdx.x] = s;
    }
}

torch::Tensor gemm_sigmoid_sum(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() == 2, "2-d float32 CUDA input expected");
    auto y = at::mm(x.contiguous(), w.t()).contiguous();
    auto bc = b.contiguous();
    long rows = y.size(0), cols = y.size(1);
    auto out = torch::empty({rows}, y.options());
    if (rows == 0) return out;
    bias_sigmoid_rowsum<<<(unsigned)rows, 256, 0, at::cuda::getCurrentCUDAStream()>>>(y.data_ptr<float>(), bc.data_ptr<float>(),
                                                                                       out.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

ext = load_inline(name="kbv_suite_l2_06_gemm_sigmoid_rowsum",
                  cpp_sources="torch::Tensor gemm_sigmoid_sum(torch::Tensor x, torch::Tensor w, torch::Tensor b);",
                  cuda_sources=cuda_source, functions=["gemm_sigmoid_sum"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.gemm_sigmoid_sum(x, self.fc.weight, self.fc.bias)
