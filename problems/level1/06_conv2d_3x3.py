# kbv level 1: a 3x3 fp32 convolution with padding 1 (16 x 64 x 64 x 64 -> 128 channels),
# implicit-GEMM work where cuDNN's TF32 setting matters.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 16
in_channels = 64
out_channels = 128
height = 64
width = 64


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
