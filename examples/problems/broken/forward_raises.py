# A broken problem: the reference's forward raises. kbv must exit 3.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x @ x  # 1-D @ 1-D of the wrong sizes below


def get_inputs():
    return [torch.rand(3, 4)]


def get_init_inputs():
    return []
