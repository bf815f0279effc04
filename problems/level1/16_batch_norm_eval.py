# kbv level 1: batch normalisation in inference form (running statistics, never updated) over
# 96 x 128 x 64 x 64. The statistics and affine are drawn at construction so that the op is
# not the identity; forward uses training=False explicitly, in eval() mode or not.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels, eps=1e-5)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.5 * torch.randn(channels))
            self.bn.running_var.copy_(0.5 + torch.rand(channels))
            self.bn.weight.copy_(1.0 + 0.2 * torch.randn(channels))
            self.bn.bias.copy_(0.2 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.batch_norm(x, self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias,
                            training=False, momentum=0.0, eps=self.bn.eps)


batch_size = 96
channels = 128
height = 64
width = 64


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
