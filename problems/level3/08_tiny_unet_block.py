# kbv level 3: a one-level U-Net block: down = relu(conv3x3 stride 2 (32 -> 64));
# mid = relu(conv3x3 (64 -> 64)); up = transposed conv 2x2 stride 2 (64 -> 32);
# out = relu(conv3x3(concat(x, up)) (64 -> 32)); 4 x 32 x 128 x 128 in and out.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.down = nn.Conv2d(channels, 2 * channels, kernel_size=3, stride=2, padding=1)
        self.mid = nn.Conv2d(2 * channels, 2 * channels, kernel_size=3, padding=1)
        self.up = nn.ConvTranspose2d(2 * channels, channels, kernel_size=2, stride=2)
        self.fuse = nn.Conv2d(2 * channels, channels, kernel_size=3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = F.relu(self.down(x))
        d = F.relu(self.mid(d))
        u = self.up(d)
        return F.relu(self.fuse(torch.cat([x, u], dim=1)))


batch_size = 4
channels = 32
height = 128
width = 128


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
