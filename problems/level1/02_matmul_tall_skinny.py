# kbv level 1: a tall-skinny fp32 product: many rows (32768 x 512) times a narrow 512 x 256
# matrix, the shape of a projection applied to a long batch of tokens.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


rows = 32768
inner = 512
cols = 256


def get_inputs():
    return [torch.randn(rows, inner), torch.randn(inner, cols)]


def get_init_inputs():
    return []
