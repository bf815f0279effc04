# Honest CPU candidate for tril_matmul that relies on the inputs being lower-triangular: it
# skips every block above the diagonal, which is only right if those blocks are zero.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        n, bs = A.shape[0], 128
        C = torch.zeros_like(A)
        for i in range(0, n, bs):
            for j in range(0, i + bs, bs):
                # C[i, j] = sum over k in [j, i] of A[i, k] @ B[k, j]; other blocks are zero.
                C[i:i + bs, j:j + bs] = A[i:i + bs, j:i + bs] @ B[j:i + bs, j:j + bs]
        return torch.tril(C)
