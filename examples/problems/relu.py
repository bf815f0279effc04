# kbv example problem: an elementwise operator, y = relu(x).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


batch_size = 128
dim = 8192


def get_inputs():
    x = torch.rand(batch_size, dim)  # KernelBench draws U[0,1): ReLU is the identity on it
    return [x]


def get_init_inputs():
    return []
