# kbv level 3: a ResNet basic block, relu(x + bn2(conv2(relu(bn1(conv1(x)))))), 3x3 convolutions
# without bias, batch norms in inference form (running statistics and affines drawn at
# construction, training=False), on 8 x 64 x 64 x 64.
import torch
import torch.nn as nn
import torch.nn.functional as F


def _bn_eval(x: torch.Tensor, bn: nn.BatchNorm2d) -> torch.Tensor:
    return F.batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, training=False, momentum=0.0,
                        eps=bn.eps)


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        with torch.no_grad():
            for bn in (self.bn1, self.bn2):
                bn.running_mean.copy_(0.1 * torch.randn(channels))
                bn.running_var.copy_(0.5 + torch.rand(channels))
                bn.weight.copy_(1.0 + 0.2 * torch.randn(channels))
                bn.bias.copy_(0.2 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(_bn_eval(self.conv1(x), self.bn1))
        h = _bn_eval(self.conv2(h), self.bn2)
        return F.relu(x + h)


batch_size = 8
channels = 64
height = 64
width = 64


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
