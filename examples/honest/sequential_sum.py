# HONEST: a float32 softmax whose row sums are added left to right, one term at a time, as the
# one-thread-per-row kernels LLMs write for it do (the public KernelBench leaderboard's, judged
# on the H200 on 2026-12-03: docs/BENCHMARKS.md). Each row is then off by one factor of about
# sqrt(16384) float32 ulps, 1e-6 to 2e-6, where PyTorch's tree sum is 2e-7 off: with a float32
# floor of 1e-6 kbv called that half-precision arithmetic (precision_downgrade, a hack). The
# sum here is numpy's float32 accumulate, which adds strictly in order, so it runs on the CPU
# (on a GPU the exponentials go to the host for it and the sums come back).
# kbv-zoo: problem=softmax_wide expect=verified library=info device=cpu
import numpy as np
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        e = torch.exp(x - x.max(dim=1, keepdim=True).values)
        s = np.add.accumulate(e.cpu().numpy(), axis=1, dtype=np.float32)[:, -1:]
        return e / torch.from_numpy(np.ascontiguousarray(s)).to(e.device)
