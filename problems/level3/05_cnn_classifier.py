# kbv level 3: a small CNN classifier: three 3x3 conv + ReLU stages (3 -> 32 -> 64 -> 128
# channels) with 2x2 max pooling after the first two, global average pooling, then a
# Linear(128 -> 64) + ReLU + Linear(64 -> 10) head; 32 RGB images of 128 x 128 -> 32 x 10 logits.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, kernel_size=3, padding=1)
        self.conv3 = nn.Conv2d(64, 128, kernel_size=3, padding=1)
        self.fc1 = nn.Linear(128, 64)
        self.fc2 = nn.Linear(64, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.conv3(x))
        x = x.mean(dim=(2, 3))
        return self.fc2(F.relu(self.fc1(x)))


batch_size = 32
height = 128
width = 128
num_classes = 10


def get_inputs():
    return [torch.randn(batch_size, 3, height, width)]


def get_init_inputs():
    return [num_classes]
