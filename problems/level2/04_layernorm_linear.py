# kbv level 2: layer norm (affine drawn at construction) followed by a linear layer,
# y = LN(x) W^T + b over 4096 rows of 1024 -> 1024: a pre-norm projection.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, out_features):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)
        self.fc = nn.Linear(hidden, out_features)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(hidden))
            self.norm.bias.copy_(0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.norm(x))


rows = 4096
hidden = 1024
out_features = 1024


def get_inputs():
    return [torch.randn(rows, hidden)]


def get_init_inputs():
    return [hidden, out_features]
