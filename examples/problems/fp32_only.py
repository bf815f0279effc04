# kbv example problem whose forward hard-codes float32 (a constant matrix made inside it), so
# its float64 copy fails: kbv falls back to the strict float32 run as the oracle, and says so.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = torch.linspace(-1.0, 1.0, x.shape[1] * 64, dtype=torch.float32, device=x.device).reshape(x.shape[1], 64)
        return torch.matmul(x, w)


def get_inputs():
    return [torch.rand(128, 256)]


def get_init_inputs():
    return []
