# kbv level 1: cross-entropy with label smoothing 0.1 over 4096 classes (12288 rows), mean over
# the batch. The targets are int64 class indices; KBV_INPUTS keeps hidden targets in range.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 12288
num_classes = 4096

KBV_INPUTS = {1: {"int_range": [0, num_classes - 1]}}


class Model(nn.Module):
    def __init__(self, smoothing):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, targets, label_smoothing=self.smoothing)


def get_inputs():
    return [torch.randn(batch_size, num_classes), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return [0.1]
