# Honest CPU candidate for cross_entropy: log-sum-exp minus the target logit, averaged.
# Indexes with the int64 targets, so it only works if they arrive as integers.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        assert targets.dtype == torch.int64, f"targets arrived as {targets.dtype}"
        lse = torch.logsumexp(predictions, dim=1)
        picked = predictions.gather(1, targets.unsqueeze(1)).squeeze(1)
        return (lse - picked).mean()
