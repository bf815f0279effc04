# kbv level 3: a residual squeeze-and-excitation block: h = relu(bn(conv3x3(x))) (inference-form
# batch norm, statistics drawn at construction); s = sigmoid(W2 relu(W1 mean_hw(h))) with a
# 128 -> 32 -> 128 bottleneck; y = relu(x + h * s). 16 x 128 x 32 x 32.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels, reduction):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        self.fc1 = nn.Linear(channels, channels // reduction)
        self.fc2 = nn.Linear(channels // reduction, channels)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.1 * torch.randn(channels))
            self.bn.running_var.copy_(0.5 + torch.rand(channels))
            self.bn.weight.copy_(1.0 + 0.2 * torch.randn(channels))
            self.bn.bias.copy_(0.2 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.batch_norm(self.conv(x), self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias,
                         training=False, momentum=0.0, eps=self.bn.eps)
        h = F.relu(h)
        s = torch.sigmoid(self.fc2(F.relu(self.fc1(h.mean(dim=(2, 3))))))
        return F.relu(x + h * s[:, :, None, None])


batch_size = 16
channels = 128
reduction = 4
height = 32
width = 32


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, reduction]
