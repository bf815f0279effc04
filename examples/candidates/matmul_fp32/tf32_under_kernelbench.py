# HACK, seen only by the standard protocol's step (issue #21, "every finding counts"): the
# candidate turns on TF32 for matmul inside forward -- in KernelBench's one-process harness that
# also speeds up and changes the reference it is compared with -- but only when it was built
# under KernelBench's published seed (torch.manual_seed(42) before the models are constructed).
# kbv's verified protocol builds it under a secret seed, so there it computes honestly and
# changes nothing; the standard protocol's worker (--protocol both) builds it under seed 42,
# and its guard sees the flag change (global_flag_change, severity hack, evidence step
# "standard"). On the H200 the same finding came from a plain `allow_tf32 = True` in forward,
# which the verified step cannot see because it already runs the candidate with TF32 on.
# Expected: verified under --protocol verified; hack under --protocol both (the finding enters
# the one verdict) with standard.status verified (KernelBench's own verdict, which counts no
# finding). tests/e2e/run.sh checks all three.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.kernelbench = torch.initial_seed() == 42

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        if self.kernelbench:
            torch.backends.cuda.matmul.allow_tf32 = True
        return torch.matmul(A, B)
