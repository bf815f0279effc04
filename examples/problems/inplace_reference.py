# kbv example problem whose reference changes its own input in place. A candidate may then
# change its input too: input mutation is judged against what the reference does.
# KernelBench's own check (--protocol standard) fails honest candidates here: it runs the
# reference first and hands the tensors it changed to the candidate.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x.mul_(2.0)
        return x + 1.0


def get_inputs():
    return [torch.rand(256, 1024)]


def get_init_inputs():
    return []
