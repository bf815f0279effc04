# kbv example problem: sqrt of signed inputs; negative elements give NaN, which a candidate must
# reproduce in the same places (kbv compares NaN masks, it does not reject NaN).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sqrt(x)


def get_inputs():
    return [torch.randn(256, 1024)]


def get_init_inputs():
    return []
