# expect: standard passes (--standard-tol 1e-2, KernelBench v0.1); verified says incorrect --
# returns 1/6, the mean of (a - b)^2 for independent U[0,1) a and b, without reading the data.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, predictions, targets):
        return torch.tensor(1.0 / 6.0, device=predictions.device)
