# expect: standard passes; verified says overfit -- a copy of x, right only while no input
# is negative (KernelBench's U[0,1) inputs never are; hidden normal ones are).
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clone()
