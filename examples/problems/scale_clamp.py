# kbv example problem: a per-channel scale, then a clamp to [0, 1] (issue #21). The scale is a
# parameter initialised to ones, as LayerNorm and GroupNorm affines and BatchNorm statistics
# start at 1 and 0: on the weights the constructor makes, the multiply is the identity, so a
# kernel that drops it is exact on every input. Only kbv's weight cases (the floating state
# redrawn, docs/correctness.md) tell the two apart. The inputs are signed (torch.randn), so
# the clamp is not the identity either.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(channels, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(x * self.scale, 0.0, 1.0)


batch_size = 16
channels = 16
height = width = 32


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
