# kbv level 2: causal attention probabilities, softmax(mask(Q K^T * scale)) with the upper
# triangle (future tokens) at -inf, for Q, K of 4 x 8 heads x 1024 x 64. The mask is built
# inside forward from the sequence length only (deterministic, any dtype).
import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, head_dim):
        super().__init__()
        self.scale = 1.0 / math.sqrt(head_dim)

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        s = q.shape[-2]
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        future = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
        return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)


batch_size = 4
heads = 8
seq_len = 1024
head_dim = 64


def get_inputs():
    return [torch.randn(batch_size, heads, seq_len, head_dim), torch.randn(batch_size, heads, seq_len, head_dim)]


def get_init_inputs():
    return [head_dim]
