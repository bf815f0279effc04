# expect: timeout -- forward never returns (run with a short --timeout).
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        while True:
            pass
