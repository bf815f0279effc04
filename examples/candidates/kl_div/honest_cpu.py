# Honest CPU candidate for kl_div: sum of t * (log t - log p) per row (0 where t is 0, as
# torch defines it), averaged over the batch.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        terms = torch.xlogy(targets, targets) - targets * torch.log(predictions)
        return terms.sum() / predictions.shape[0]
