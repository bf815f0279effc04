# kbv level 3: a recurrence-free sequence mixer block: h = LN(x); [u, g] = h W_in^T (two halves);
# u = causal depthwise conv1d along the sequence (kernel 7); y = x + W_out (u * silu(g)).
# 4 sequences of 1024 tokens, width 512. LN affine drawn at construction.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, kernel_size):
        super().__init__()
        self.kernel_size = kernel_size
        self.norm = nn.LayerNorm(dim)
        self.in_proj = nn.Linear(dim, 2 * dim)
        self.conv = nn.Conv1d(dim, dim, kernel_size, groups=dim, bias=True)
        self.out_proj = nn.Linear(dim, dim)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(dim))
            self.norm.bias.copy_(0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        u, g = self.in_proj(self.norm(x)).chunk(2, dim=-1)
        u = F.pad(u.transpose(1, 2), (self.kernel_size - 1, 0))
        u = self.conv(u).transpose(1, 2)
        return x + self.out_proj(u * F.silu(g))


batch_size = 4
seq_len = 1024
dim = 512
kernel_size = 7


def get_inputs():
    return [torch.randn(batch_size, seq_len, dim)]


def get_init_inputs():
    return [dim, kernel_size]
