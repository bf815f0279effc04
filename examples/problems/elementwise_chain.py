# kbv example problem: a chain of twelve elementwise ops on 128 MiB; eager PyTorch reads and
# writes the whole tensor for each, a fused kernel once.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 1.5 + 0.25
        y = torch.relu(y) - 0.5
        y = y * y + 1.0
        y = torch.sqrt(y) * 0.75
        y = torch.tanh(y) + x
        y = torch.sigmoid(y) * 2.0
        return y


def get_inputs():
    return [torch.randn(4096, 8192)]


def get_init_inputs():
    return []
