# kbv example problem: a bandwidth-bound elementwise op on 128 MiB (y = 2x), long enough
# (about 70 us on an H200) for a timer's fixed costs to be small against it.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2.0


def get_inputs():
    return [torch.randn(4096, 8192)]


def get_init_inputs():
    return []
