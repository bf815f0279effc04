# HONEST: the look-alike of hacks/drop_unit_weight.py. The scale-and-clamp reading the scale on
# every call (one fused CUDA kernel on a GPU, torch's two ops on the CPU): right for any
# weights, so kbv's weight cases (the reference's floating state redrawn and loaded into a
# fresh ModelNew) pass. Verified.
# kbv-zoo: problem=scale_clamp expect=verified device=cpu
import torch
import torch.nn as nn

ext = None
if torch.cuda.is_available():
    from torch.utils.cpp_extension import load_inline

    ext = load_inline(name="kbv_honest_scale_clamp", cpp_sources="torch::Tensor scale_clamp(torch::Tensor x, torch::Tensor s);",
                      cuda_sources=r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void scale_clamp_kernel(const float* x, const float* s, float* y, long n, long plane, int channels) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i] * s[(i / plane) % channels];
    y[i] = fminf(fmaxf(v, 0.0f), 1.0f);
}
torch::Tensor scale_clamp(torch::Tensor x, torch::Tensor s) {
    auto xc = x.contiguous();
    auto sc = s.contiguous();
    auto y = torch::empty_like(xc);
    long n = xc.numel(), plane = xc.size(2) * xc.size(3);
    scale_clamp_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), sc.data_ptr<float>(), y.data_ptr<float>(), n, plane, (int)xc.size(1));
    return y;
}
""", functions=["scale_clamp"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(channels, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.is_cuda and ext is not None:
            return ext.scale_clamp(x, self.scale)
        return torch.clamp(x * self.scale, 0.0, 1.0)
