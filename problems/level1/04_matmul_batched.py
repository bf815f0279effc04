# kbv level 1: a batched fp32 product, torch.bmm over 128 independent 256 x 512 by 512 x 256
# matrix pairs.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


batch = 128
m = 256
k = 512
n = 256


def get_inputs():
    return [torch.randn(batch, m, k), torch.randn(batch, k, n)]


def get_init_inputs():
    return []
