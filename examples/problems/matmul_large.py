# kbv example problem: a large fp32 matmul (16384 x 32768 @ 32768 x 8192), about 20 ms with
# TF32 on an H200 -- the long end of the timing checks in docs/BENCHMARKS.md.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(16384, 32768), torch.randn(32768, 8192)]


def get_init_inputs():
    return []
