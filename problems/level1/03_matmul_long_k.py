# kbv level 1: a long-reduction fp32 product (256 x 65536 times 65536 x 256): a small output
# with a very deep inner sum, where the rounding of the accumulation (and TF32) shows most.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


m = 256
k = 65536
n = 256


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n)]


def get_init_inputs():
    return []
