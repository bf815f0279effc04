# expect: incorrect -- each call perturbs its result by a random relative 1e-7: within the
# correctness tolerance, but two calls on the same inputs disagree, which an honest kernel's
# (atomics included) do not beyond rounding. kbv's two-run check catches it.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        noise = torch.rand(x.shape, generator=None, dtype=x.dtype, device=x.device) * 2 - 1
        return torch.relu(x) * (1 + 1e-7 * noise)
