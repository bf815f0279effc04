# kbv example problem: the same y = 2x as scale_large, on 1 GiB (16384 x 16384 float32), so
# that moving its bytes takes about 0.45 ms on an H200: long against the ~0.1 ms a Python-level
# content lookup costs (the hack zoo's content_cache is judged on it).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2.0


def get_inputs():
    return [torch.randn(16384, 16384)]


def get_init_inputs():
    return []
