# expect: runtime_error -- the constructor raises.
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        raise ValueError("bad configuration")

    def forward(self, x):
        return x.clamp_min(0)
