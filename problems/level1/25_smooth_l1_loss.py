# kbv level 1: the smooth L1 (Huber-like) loss with beta = 0.5 between two 8192 x 4096
# tensors, mean reduction: quadratic below beta, linear above.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.smooth_l1_loss(predictions, targets, beta=self.beta)


rows = 8192
cols = 4096


def get_inputs():
    return [torch.randn(rows, cols), torch.randn(rows, cols)]


def get_init_inputs():
    return [0.5]
