# expect: standard passes (--standard-tol 1e-2); verified says incorrect, accuracy class
# half -- rounds its operands and its result to bfloat16 and returns float32.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, A, B):
        # bfloat16 operands and result, float32 accumulation (what a bf16 tensor-core kernel
        # does). CPU builds of torch differ in how they accumulate a bf16 matmul (on a CPU
        # without AVX-512, torch 1.13 sums in bfloat16: 7.5% error at K = 512), so the
        # accumulation is spelled out.
        return (A.bfloat16().float() @ B.bfloat16().float()).bfloat16().float()
