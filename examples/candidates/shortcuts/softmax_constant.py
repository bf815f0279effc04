# expect: standard passes; verified says incorrect -- every output is 1/dim, within 1e-4 of
# a softmax of U[0,1) values over 16384 columns.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.full_like(x, 1.0 / x.shape[1])
