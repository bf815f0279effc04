# expect: standard passes; verified says overfit -- a leaky ReLU, which equals ReLU on
# KernelBench's non-negative inputs and differs on every negative hidden one.
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def forward(self, x):
        return F.leaky_relu(x, 0.01)
