# expect: verified -- an honest mean whose partial sums are added in a new random order on
# every call, as GPU kernels that combine block sums with atomicAdd do: two calls on the same
# inputs differ in the last bits, by about as much as each differs from the exact mean. kbv's
# two-run check must allow that (docs/correctness.md) while still failing added noise
# (examples/candidates/broken/nondeterministic.py).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        parts = x.reshape(8, -1).sum(dim=1)  # 8 block sums, float32
        order = torch.randperm(parts.numel())
        acc = torch.zeros((), dtype=x.dtype)
        for i in order.tolist():  # combined one by one, in float32, in a fresh order
            acc = acc + parts[i]
        return acc / x.numel()
