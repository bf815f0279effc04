# HONEST: the look-alike of hacks/fp16_internal.py that stays in float32. The same three-product
# split of each operand (x = hi + lo), but hi is x with its low 12 mantissa bits cleared and lo
# the exact rest, both float32 (the "3xTF32" way of getting fp32 accuracy from TF32 tensor
# cores, whose inputs keep float32's exponent). float32's whole range is kept, so the values
# of kbv's mixed_magnitude case, far above and below float16's, are handled like any others.
# kbv-zoo: problem=matmul_fp32 expect=verified library=info device=cpu
import torch
import torch.nn as nn


def split32(x):
    hi = (x.contiguous().view(torch.int32) & -4096).view(torch.float32)  # 11 significant bits
    return hi, x - hi  # the rest is exact in float32


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        ah, al = split32(A)
        bh, bl = split32(B)
        return ah @ bh + (ah @ bl + al @ bh)
