# Honest CPU candidate for matmul_fp32: a blocked product over K in float32 (no library
# matmul of the whole problem), so its rounding differs from the reference's but stays
# well inside fp32 tolerance. Runs on --device cpu.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(A.shape[0], B.shape[1], dtype=A.dtype, device=A.device)
        step = 256
        for k in range(0, A.shape[1], step):
            out += A[:, k:k + step] @ B[k:k + step, :]
        return out
