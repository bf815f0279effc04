# expect: standard passes; verified says incorrect (input mutated) -- applies ReLU to its
# input in place and returns a copy. KernelBench runs the reference first, so it never sees it.
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        x.clamp_(min=0)
        return x.clone()
