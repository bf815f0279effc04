# kbv example problem: a Cholesky factorisation, defined only for symmetric positive-definite
# matrices. Hidden inputs are symmetric (the probe sees it) but not positive definite, so the
# reference raises; kbv falls back to fresh draws of get_inputs() for those cases.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor) -> torch.Tensor:
        return torch.linalg.cholesky(A)


n = 128


def get_inputs():
    m = torch.rand(n, n)
    return [m @ m.T + n * torch.eye(n)]


def get_init_inputs():
    return []
