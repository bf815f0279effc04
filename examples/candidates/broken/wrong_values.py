# expect: incorrect -- a leaky ReLU where ReLU was asked: negative inputs give wrong values.
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def forward(self, x):
        return F.leaky_relu(x, 0.01)
