# kbv example problem: the only input is the same under every seed (a ramp), so there is
# nothing to hide: kbv evaluates the nominal cases and reports the hidden ones as skipped.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=0)


def get_inputs():
    return [torch.arange(1000, dtype=torch.float32) / 1000]


def get_init_inputs():
    return []
