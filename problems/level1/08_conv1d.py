# kbv level 1: a 1-d fp32 convolution, kernel 5, padding 2 (32 x 128 x 2048 -> 256
# channels), as in audio and sequence encoders.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 32
in_channels = 128
out_channels = 256
length = 2048
kernel_size = 5


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
