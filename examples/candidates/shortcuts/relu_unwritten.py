# expect: verified says incorrect -- leaves the last column of its output unwritten (whatever
# torch.empty returned is what comes back there).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        out[:, :-1] = torch.relu(x[:, :-1])
        return out
