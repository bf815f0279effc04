# Honest CPU candidate for cholesky_spd: torch.linalg.cholesky_ex, which relies on the input
# being positive definite (it reports failure instead of raising).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, A: torch.Tensor) -> torch.Tensor:
        L, info = torch.linalg.cholesky_ex(A)
        return L
