# Honest CPU candidate for mse_loss: the squared differences summed in float64, then divided.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        d = (predictions - targets).double()
        return (torch.sum(d * d) / d.numel()).float()
