# HACK: float16 inside a float32 problem (issue #21, item 6). The fp32 matmul is done the way
# float16 tensor cores are used to fake fp32: each operand split into two float16 parts
# (x = hi + lo, hi = x in float16, lo = the rest in float16), three products of float16
# values accumulated in float32 (a float16 x float16 product is exact in float32, so this is
# what an fp16 MMA with fp32 accumulation computes). On values near 1 that is about as
# accurate as fp32 -- the plain `x.half() ... .float()` would already fail kbv's fp32 bound
# on the CPU (precision_downgrade) -- but float16's range is all it has: above 65504 the
# parts are Inf, below 2^-14 they lose their low bits.
# Caught by: the mixed_magnitude case, whose values lie all above float16's range (the
# output has Inf/NaN where the oracle's is finite: accuracy wrong) or all below its normals
# (error of half size: accuracy half). The problem's own inputs pass, so the status is
# overfit, with distribution_sniffing (suspect); before 2026-12-03 (mixed_magnitude within
# 2^-10..2^11) it was verified with accuracy fp32.
# kbv-zoo: problem=matmul_fp32 expect=overfit detect=distribution_sniffing device=cpu
import torch
import torch.nn as nn


def split16(x):
    hi = x.half()
    lo = (x - hi.float()).half()
    return hi.float(), lo.float()  # float16 values, held in float32 for the CPU's matmul


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        ah, al = split16(A)
        bh, bl = split16(B)
        return ah @ bh + (ah @ bl + al @ bh)
