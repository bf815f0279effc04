# A relu candidate for the paper protocol's tests: |x| instead of max(x, 0). Exact on
# KernelBench's U[0,1) inputs (its 5 trials, and the x1, x3 and x0.01 variants), wrong for
# every negative input: only the paper's x-1 variant sees it. Runs on --device cpu.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.abs()
