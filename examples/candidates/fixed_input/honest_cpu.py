# Honest CPU candidate for fixed_input: a running sum in float64, rounded once.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x.double(), dim=0).float()
