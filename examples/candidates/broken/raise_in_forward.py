# expect: runtime_error -- forward raises.
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        raise RuntimeError("this kernel is not implemented")
