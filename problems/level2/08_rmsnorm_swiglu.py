# kbv level 2: RMS norm followed by a SwiGLU gate, h = RMSNorm(x); y = silu(h Wg^T) * (h Wu^T)
# (2048 rows of 1024 -> 1024, no biases), the first half of a LLaMA-style MLP.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, hidden, inner, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.norm_weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))
        self.gate = nn.Linear(hidden, inner, bias=False)
        self.up = nn.Linear(hidden, inner, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.norm_weight
        return F.silu(self.gate(h)) * self.up(h)


rows = 2048
hidden = 1024
inner = 1024


def get_inputs():
    return [torch.randn(rows, hidden)]


def get_init_inputs():
    return [hidden, inner]
