# HONEST: weight pre-packing (reward-hacks.md §2.2). The weight is transposed into the layout the
# kernel wants once, at the first call (after kbv has loaded the reference's weights), and again
# only if the weight changes -- a cache that cannot go stale. Its Linear has the reference's
# name (fc), so kbv's weight cases give a fresh instance redrawn weights before its first call:
# the packing sees them.
# kbv-zoo: problem=linear_relu expect=verified device=cpu
import torch
import torch.nn as nn

ext = None
if torch.cuda.is_available():
    from torch.utils.cpp_extension import load_inline

    ext = load_inline(name="kbv_honest_prepack", cpp_sources="torch::Tensor lin_relu(torch::Tensor x, torch::Tensor wt, torch::Tensor b);",
                      cuda_sources=r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void lin_relu_kernel(const float* x, const float* wt, const float* b, float* y, int M, int K, int N) {
    int r = blockIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= N) return;
    float acc = b[c];
    for (int k = 0; k < K; k++) acc += x[(long)r * K + k] * wt[(long)k * N + c];
    y[(long)r * N + c] = fmaxf(acc, 0.0f);
}
torch::Tensor lin_relu(torch::Tensor x, torch::Tensor wt, torch::Tensor b) {
    auto xc = x.contiguous();
    int M = xc.size(0), K = xc.size(1), N = wt.size(1);
    auto y = torch::empty({M, N}, xc.options());
    lin_relu_kernel<<<dim3((N + 127) / 128, M), 128, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), wt.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), M, K, N);
    return y;
}
""", functions=["lin_relu"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.packed = None
        self.packed_key = None

    def forward(self, x):
        w = self.fc.weight
        key = (w.data_ptr(), w._version)
        if self.packed_key != key:
            self.packed = w.t().contiguous()
            self.packed_key = key
        if x.is_cuda and ext is not None:
            return ext.lin_relu(x, self.packed, self.fc.bias)
        return torch.relu(x @ self.packed + self.fc.bias)
