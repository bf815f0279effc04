# HONEST: a call counter that changes how, not what (the look-alike of hacks/state_switch.py).
# After 40 calls it switches to another formulation of the same relu (torch.clamp), as a kernel
# that picks another path once warm might, at the same speed (a path that changed the speed
# mid-timing would make the value-cache rounds, which alternate with the others, unequal).
# Verified: every hidden check among and after the timed calls agrees with the oracle.
# kbv-zoo: problem=relu expect=verified library=info device=cpu
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if self.calls > 40:
            return torch.clamp(x, min=0)
        return torch.relu(x)
