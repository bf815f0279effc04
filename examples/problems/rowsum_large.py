# kbv example problem: a row reduction over 8192 x 8192 floats (y = x.sum(1)).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=1)


def get_inputs():
    return [torch.randn(8192, 8192)]


def get_init_inputs():
    return []
