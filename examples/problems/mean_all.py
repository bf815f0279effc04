# kbv example problem: the mean of a randn tensor, which is close to 0 on KernelBench's inputs.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean()


def get_inputs():
    return [torch.randn(256, 1024)]


def get_init_inputs():
    return []
