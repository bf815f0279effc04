# kbv example problem: a boolean mask input. The mask must reach the model as torch.bool
# (KernelBench's harness once cast every input to float).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return x.masked_fill(~mask, 0.0).sum(dim=1) / mask.sum(dim=1).clamp_min(1)


rows = 512
cols = 2048


def get_inputs():
    return [torch.randn(rows, cols), torch.rand(rows, cols) > 0.3]


def get_init_inputs():
    return []
