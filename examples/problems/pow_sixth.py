# kbv example problem: y = x^6, finite in float64 for every float32 input but above float32's
# range (3.4e38) once |x| > 2^21.3. The high window of kbv's mixed_magnitude case (values up
# to 2^25) overflows PyTorch's own float32 run there, so that case falls back to a narrower
# domain instead of failing every faithful candidate (docs/correctness.md, "Domain fallback").
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * x * x * x * x * x


batch_size = 64
dim = 1024


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
