# kbv level 1: a depthwise 3x3 convolution (groups = channels, stride 1, padding 1) over
# 48 x 256 x 64 x 64: little arithmetic per byte, so memory traffic bounds it.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=3, padding=1, groups=channels, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 48
channels = 256
height = 64
width = 64


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
