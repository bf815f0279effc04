# kbv level 1: RMS normalisation over the last dimension (8192 rows of 4096):
# y = x / sqrt(mean(x^2) + eps) * weight, with a weight drawn at construction.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        inv = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * inv * self.weight


rows = 8192
hidden = 4096


def get_inputs():
    return [torch.randn(rows, hidden)]


def get_init_inputs():
    return [hidden]
