# kbv example problem: an op whose reference returns a view of its input (x.t()).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.t()


def get_inputs():
    return [torch.randn(512, 256)]


def get_init_inputs():
    return []
