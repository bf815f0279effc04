# HONEST: a preallocated output buffer, written and returned by every call (an allocator-free
# kernel's habit). Each call's result is right when it returns; the next call overwrites it,
# so kbv must copy an output before it calls again (the partial-rewrite probe's first call).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.out is None or self.out.shape != x.shape or self.out.dtype != x.dtype:
            self.out = torch.empty_like(x)
        return torch.clamp_min(x, 0, out=self.out)
