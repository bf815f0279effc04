# Honest CPU candidate for fp32_only: the same product, with the constant built once.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = torch.linspace(-1.0, 1.0, x.shape[1] * 64, dtype=x.dtype, device=x.device).reshape(x.shape[1], 64)
        return x @ w
