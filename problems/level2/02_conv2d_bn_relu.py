# kbv level 2: conv2d 3x3 (no bias) -> batch norm with running statistics (inference form) ->
# ReLU, on 16 x 64 x 64 x 64 -> 128 channels. The statistics and affine are drawn at
# construction; forward uses training=False explicitly, so nothing is ever updated.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels, eps=1e-5)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.1 * torch.randn(out_channels))
            self.bn.running_var.copy_(0.5 + torch.rand(out_channels))
            self.bn.weight.copy_(1.0 + 0.2 * torch.randn(out_channels))
            self.bn.bias.copy_(0.2 * torch.randn(out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        y = F.batch_norm(y, self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias,
                         training=False, momentum=0.0, eps=self.bn.eps)
        return F.relu(y)


batch_size = 16
in_channels = 64
out_channels = 128
height = 64
width = 64


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
