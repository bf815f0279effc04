# kbv level 1: KL divergence KL(target || pred) summed per row and averaged over 8192 rows of
# 2048 (reduction "batchmean"), from probabilities: kl_div(log(pred), target). Both inputs are
# probability rows in get_inputs(); KBV_INPUTS declares the range (0, 1] for both, so hidden
# inputs stay positive (they are not renormalised: the formula holds for any positive values).
import torch
import torch.nn as nn
import torch.nn.functional as F

KBV_INPUTS = {0: {"range": [1e-6, 1.0]}, 1: {"range": [1e-6, 1.0]}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.kl_div(torch.log(predictions), targets, reduction="batchmean")


rows = 8192
cols = 2048


def get_inputs():
    pred = torch.softmax(torch.randn(rows, cols), dim=-1)
    target = torch.softmax(torch.randn(rows, cols), dim=-1)
    return [pred, target]


def get_init_inputs():
    return []
