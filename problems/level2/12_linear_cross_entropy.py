# kbv level 2: a classifier head and its loss, cross_entropy(x W^T + b, targets), mean over
# 4096 rows (1024 features -> 1024 classes). KBV_INPUTS keeps hidden targets in range.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
in_features = 1024
num_classes = 1024

KBV_INPUTS = {1: {"int_range": [0, num_classes - 1]}}


class Model(nn.Module):
    def __init__(self, in_features, num_classes):
        super().__init__()
        self.fc = nn.Linear(in_features, num_classes)

    def forward(self, x: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(self.fc(x), targets)


def get_inputs():
    return [torch.randn(batch_size, in_features), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return [in_features, num_classes]
