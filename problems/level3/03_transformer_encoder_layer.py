# kbv level 3: a pre-norm transformer encoder layer: x = x + MHA(LN1(x)); x = x + MLP(LN2(x)),
# with MLP = Linear(512 -> 2048) -> GELU -> Linear(2048 -> 512), 8 heads of 64, a fused qkv
# projection, no mask, no dropout; 4 sequences of 256 tokens. Norm affines drawn at construction.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, heads, ff_dim):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.ln1 = nn.LayerNorm(dim)
        self.ln2 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ff1 = nn.Linear(dim, ff_dim)
        self.ff2 = nn.Linear(ff_dim, dim)
        with torch.no_grad():
            for ln in (self.ln1, self.ln2):
                ln.weight.copy_(1.0 + 0.1 * torch.randn(dim))
                ln.bias.copy_(0.1 * torch.randn(dim))

    def attention(self, h: torch.Tensor) -> torch.Tensor:
        b, s, d = h.shape
        qkv = self.qkv(h).view(b, s, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        att = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim), dim=-1)
        return self.proj(torch.matmul(att, v).transpose(1, 2).reshape(b, s, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.ln1(x))
        return x + self.ff2(F.gelu(self.ff1(self.ln2(x))))


batch_size = 4
seq_len = 256
dim = 512
heads = 8
ff_dim = 2048


def get_inputs():
    return [torch.randn(batch_size, seq_len, dim)]


def get_init_inputs():
    return [dim, heads, ff_dim]
