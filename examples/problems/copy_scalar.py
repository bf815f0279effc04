# kbv example problem: almost no work (y = x + 1 on 256 floats). What is timed is the harness's
# own floor: kbv's time for a candidate whose call is one tiny kernel, against that kernel's
# device time from CUPTI (docs/BENCHMARKS.md, "Overhead").
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1.0


def get_inputs():
    return [torch.randn(256)]


def get_init_inputs():
    return []
