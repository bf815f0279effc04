# Honest CPU candidate for log_positive: log2 scaled by ln 2, right only for positive inputs.
import math

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log2(x) * (0.5 * math.log(2.0)) + x
