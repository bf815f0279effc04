# kbv example problem: the logarithm of a positive input. It declares its input's domain
# (KBV_INPUTS, docs/correctness.md), so hidden cases draw values inside [0.01, 2].
import torch
import torch.nn as nn

KBV_INPUTS = {0: {"range": [0.01, 2.0]}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(x) * 0.5 + x


batch_size = 256
dim = 4096


def get_inputs():
    return [torch.rand(batch_size, dim) * 1.99 + 0.01]


def get_init_inputs():
    return []
