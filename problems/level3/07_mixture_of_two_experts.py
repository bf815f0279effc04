# kbv level 3: a dense mixture of two experts with a soft gate: p = softmax(x Wg^T + bg) over 2
# experts, each expert a Linear(512 -> 1024) -> GELU -> Linear(1024 -> 512) MLP, y = p0 e0(x) +
# p1 e1(x); 2048 tokens of width 512. Every token goes through both experts (no routing).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Expert(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x)))


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate = nn.Linear(dim, 2)
        self.expert0 = Expert(dim, hidden)
        self.expert1 = Expert(dim, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p = torch.softmax(self.gate(x), dim=-1)
        return p[:, 0:1] * self.expert0(x) + p[:, 1:2] * self.expert1(x)


tokens = 2048
dim = 512
hidden = 1024


def get_inputs():
    return [torch.randn(tokens, dim)]


def get_init_inputs():
    return [dim, hidden]
