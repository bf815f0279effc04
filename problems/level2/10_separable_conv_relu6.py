# kbv level 2: a depthwise-separable convolution, depthwise 3x3 -> pointwise 1x1 -> ReLU6
# (16 x 128 x 64 x 64 -> 256 channels), the MobileNet building block without its norm.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, kernel_size=3, padding=1, groups=in_channels, bias=True)
        self.pointwise = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu6(self.pointwise(self.depthwise(x)))


batch_size = 16
in_channels = 128
out_channels = 256
height = 64
width = 64


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
