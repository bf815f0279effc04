# Honest torch candidate for conv2d_fp32: the same convolution through torch.nn.functional
# (cuDNN on a GPU). It only re-expresses the reference: its speedup measures the baseline.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 128, kernel_size=3, padding=1, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.conv2d(x, self.conv.weight, self.conv.bias, padding=1)
