# kbv level 1: layer normalisation over the last dimension (12288 rows of 4096), with an affine
# weight and bias. The affine parameters are drawn at construction (kbv seeds torch before),
# so they are not the identity that nn.LayerNorm starts with.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(hidden))
            self.norm.bias.copy_(0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


rows = 12288
hidden = 4096


def get_inputs():
    return [torch.randn(rows, hidden)]


def get_init_inputs():
    return [hidden]
