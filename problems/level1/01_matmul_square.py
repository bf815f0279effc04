# kbv level 1: a square fp32 matrix product C = A @ B (2048 x 2048 times 2048 x 2048), the
# plain GEMM where cuBLAS's TF32 setting decides PyTorch's own speed and accuracy.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


n = 2048


def get_inputs():
    return [torch.randn(n, n), torch.randn(n, n)]


def get_init_inputs():
    return []
