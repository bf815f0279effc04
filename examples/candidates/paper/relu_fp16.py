# A relu candidate for the tolerance tests: its result rounded through float16 (a relative
# error up to 2^-11, about 4.9e-4). Within the paper's atol = rtol = 1e-3 on every input, past
# KernelBench's 1e-4 for outputs near 1. Runs on --device cpu.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.clamp_min(0.0).half().float()
