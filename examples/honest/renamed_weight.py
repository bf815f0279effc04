# HONEST: the scale kept under another name and shape (a flat `gain` of C values instead of
# scale's C x 1 x 1). Right for any weights, but its state_dict does not map onto the
# reference's, so kbv cannot give it redrawn weights: no weight case runs, and the info
# finding weights_unverifiable (counted by kbv report) says so. Verified on the cases it ran.
# kbv-zoo: problem=scale_clamp expect=verified detect=weights_unverifiable device=cpu
import torch
import torch.nn as nn

ext = None
if torch.cuda.is_available():
    from torch.utils.cpp_extension import load_inline

    ext = load_inline(name="kbv_honest_renamed_gain", cpp_sources="torch::Tensor gain_clamp(torch::Tensor x, torch::Tensor g);",
                      cuda_sources=r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void gain_clamp_kernel(const float* x, const float* g, float* y, long n, long plane, int channels) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i] * g[(i / plane) % channels];
    y[i] = fminf(fmaxf(v, 0.0f), 1.0f);
}
torch::Tensor gain_clamp(torch::Tensor x, torch::Tensor g) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    long n = xc.numel(), plane = xc.size(2) * xc.size(3);
    gain_clamp_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), g.contiguous().data_ptr<float>(), y.data_ptr<float>(), n, plane, (int)xc.size(1));
    return y;
}
""", functions=["gain_clamp"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.is_cuda and ext is not None:
            return ext.gain_clamp(x, self.gain)
        return torch.clamp(x * self.gain.view(-1, 1, 1), 0.0, 1.0)
