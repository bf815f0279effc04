# kbv example problem: softmax over 256 rows of 65536 values (64 MiB), with KernelBench's
# U[0,1) inputs; PyTorch's row softmax makes several passes over it (tens of microseconds on an
# H200), so a kernel that does next to nothing beside it takes a small share of the call's
# GPU time (examples/hacks/fig_leaf.py).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


rows = 256
cols = 65536


def get_inputs():
    return [torch.rand(rows, cols)]


def get_init_inputs():
    return []
