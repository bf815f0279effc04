# kbv example problem: the product of two lower-triangular matrices (lower-triangular too).
# Its inputs have exact zeros above the diagonal in every draw; kbv's probe keeps them.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.tril(torch.matmul(A, B))


N = 512


def get_inputs():
    return [torch.tril(torch.rand(N, N)), torch.tril(torch.rand(N, N))]


def get_init_inputs():
    return []
