# A degenerate problem (issue #22): min(x, 0) then clamp to [0, 1] is 0 for any input, so
# every kernel that returns zeros is exact and any speedup on it means nothing. KernelBench-
# Verified leaves three such level 2 problems out of its tables; kbv finds them from the
# reference's outputs over its cases (result field `degenerate`, docs/results.md) and
# `kbv report` leaves them out of its aggregates.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(torch.minimum(x, torch.zeros_like(x)), 0.0, 1.0)


def get_inputs():
    return [torch.randn(128, 256)]


def get_init_inputs():
    return []
