# kbv level 2: conv2d 3x3 with bias -> ReLU -> 2x2 max pooling, stride 2
# (16 x 32 x 128 x 128 -> 64 x 64 x 64).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool2d(F.relu(self.conv(x)), kernel_size=2, stride=2)


batch_size = 16
in_channels = 32
out_channels = 64
height = 128
width = 128


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
