# kbv level 1: an fp32 product with the second operand stored transposed, C = A @ B^T
# (A: 2048 x 1024, B: 2048 x 1024), the layout nn.Linear keeps its weight in.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B.t())


m = 2048
k = 1024
n = 2048


def get_inputs():
    return [torch.randn(m, k), torch.randn(n, k)]


def get_init_inputs():
    return []
