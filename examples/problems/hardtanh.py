# kbv example problem: HardTanh(-1, 1) on KernelBench-style U[0,1) inputs, where it is the
# identity (KernelBench level 1 has the same pattern).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardtanh(x, min_val=-1.0, max_val=1.0)


def get_inputs():
    return [torch.rand(64, 4096)]


def get_init_inputs():
    return []
