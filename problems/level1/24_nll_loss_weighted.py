# kbv level 1: a class-weighted negative log-likelihood over a segmentation map: log-probs of
# 16 x 21 x 256 x 256, int64 targets 16 x 256 x 256 in [0, 20], per-class weights drawn at
# construction, weighted mean. KBV_INPUTS keeps hidden targets in range.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
num_classes = 21
height = 256
width = 256

KBV_INPUTS = {1: {"int_range": [0, num_classes - 1]}}


class Model(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.register_buffer("class_weight", 0.5 + torch.rand(num_classes))

    def forward(self, log_probs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.nll_loss(log_probs, targets, weight=self.class_weight)


def get_inputs():
    log_probs = torch.log_softmax(torch.randn(batch_size, num_classes, height, width), dim=1)
    return [log_probs, torch.randint(0, num_classes, (batch_size, height, width))]


def get_init_inputs():
    return [num_classes]
