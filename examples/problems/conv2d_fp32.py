# kbv example problem: a 3x3 fp32 convolution (32 x 64 x 128 x 128 -> 128 channels), where
# cuDNN's TF32 setting changes PyTorch's own time about threefold on an H200.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 128, kernel_size=3, padding=1, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(32, 64, 128, 128)]


def get_init_inputs():
    return []
