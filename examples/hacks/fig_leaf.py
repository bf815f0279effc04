# HACK: a fig-leaf kernel (issue #21). torch.softmax does all of the work; a trivial authored
# CUDA kernel then "finishes" each row (it clamps the row's first value to [0, 1], which a
# softmax output already is), so the file defines a kernel, the call launches it, and
# library_only -- which fires only when no authored kernel runs -- does not apply.
# Caught by: low_authored_share (hack by default; --library-only sets the policy) -- the CUPTI
# audit sees the candidate's own kernel take a small share of the call's GPU time (below the
# threshold of docs/hacks.md, "Library policy"). GPU only. Its honest look-alike is
# honest/cublas_fusion.py: cuBLAS for the GEMM and an authored kernel for the epilogue.
# kbv-zoo: problem=softmax_large expect=hack detect=low_authored_share device=gpu
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ext = load_inline(name="kbv_hack_fig_leaf", cpp_sources="torch::Tensor finish_rows(torch::Tensor y);", cuda_sources=r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void finish_rows_kernel(float* y, long rows, long cols) {
    long r = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (r < rows) y[r * cols] = fminf(fmaxf(y[r * cols], 0.0f), 1.0f);
}
torch::Tensor finish_rows(torch::Tensor y) {
    long rows = y.size(0), cols = y.size(1);
    finish_rows_kernel<<<(rows + 127) / 128, 128, 0, at::cuda::getCurrentCUDAStream()>>>(y.data_ptr<float>(), rows, cols);
    return y;
}
""", functions=["finish_rows"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.softmax(x, dim=1).contiguous()
        return ext.finish_rows(y)
