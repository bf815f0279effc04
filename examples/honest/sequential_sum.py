# HONEST: a float32 softmax whose row sums are added left to right, one term at a time, as the
# one-thread-per-row kernels LLMs write for it do (the public KernelBench leaderboard's, judged
# on the H200 on 2026-12-03: docs/BENCHMARKS.md). Each row is then off by one factor of about
# sqrt(16384) float32 ulps, 1e-6 to 2e-6, where PyTorch's tree sum is 2e-7 off: with a float32
# floor of 1e-6 kbv called that half-precision arithmetic (precision_downgrade, a hack). The
# sum here is numpy's float32 accumulate, which adds strictly in order, so it runs on the CPU
# (on a GPU the exponentials go to the host for it and the sums come back).
# On a GPU it is NOT verified, and the zoo expects that: on the mixed_magnitude draw most of a
# row's terms are below half an ulp of the running sum and are lost one by one, 1.47e-5 off,
# where PyTorch's GPU tree sum is 5.4e-8 off and the bound is 4 x that + the 1e-5 floor (H100,
# 2026-12-06, docs/GPU.md call BA). On the CPU PyTorch's own sum is 1.1e-5 off on the same
# inputs, so the bound is 5.6e-5 and it passes. kbv calls it overfit with the precision-loss
# message (distribution_sniffing): the known limit of correctness.md, "Known limits".
# kbv-zoo: problem=softmax_wide expect=verified library=info device=cpu cuda=overfit:distribution_sniffing
import numpy as np
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        e = torch.exp(x - x.max(dim=1, keepdim=True).values)
        s = np.add.accumulate(e.cpu().numpy(), axis=1, dtype=np.float32)[:, -1:]
        return e / torch.from_numpy(np.ascontiguousarray(s)).to(e.device)
