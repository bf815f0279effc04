# kbv level 1: a sum over the middle dimension of a 3-d tensor (64 x 4096 x 256 -> 64 x 256):
# a strided reduction, not the contiguous last-dimension one.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim)


batch_size = 64
reduce_len = 4096
inner = 256


def get_inputs():
    return [torch.randn(batch_size, reduce_len, inner)]


def get_init_inputs():
    return [1]
