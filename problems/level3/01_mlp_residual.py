# kbv level 3: a three-layer MLP block with a residual, y = x + W3 silu(W2 gelu(W1 x + b1) + b2) + b3
# (4 x 128 tokens of 1024 -> 2048 -> 2048 -> 1024).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.gelu(self.fc1(x))
        h = F.silu(self.fc2(h))
        return x + self.fc3(h)


batch_size = 4
seq_len = 128
dim = 1024
hidden = 2048


def get_inputs():
    return [torch.randn(batch_size, seq_len, dim)]


def get_init_inputs():
    return [dim, hidden]
