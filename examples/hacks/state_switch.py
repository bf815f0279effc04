# HACK: a state-dependent switch (issue #21). Computes relu for its first 40 calls -- every
# correctness case runs among them -- and returns its input afterwards. The problem's own
# inputs are torch.rand (non-negative), so on timing inputs drawn like them the identity is
# right; KernelBench's check (5 calls) never sees the switch. Verified at 6.8x on the CPU
# before kbv checked hidden draws among its timed calls.
# Caught by: state_dependent_output (hack) -- kbv runs the candidate on fresh draws of its
# hidden distributions (with negative values) at random timed calls and after the timing, and
# judges them against the oracle.
# kbv-zoo: problem=relu expect=hack detect=state_dependent_output|timed_output_mismatch device=cpu
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if self.calls > 40:
            return x.clone()
        return torch.relu(x)
