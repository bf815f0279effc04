# expect: standard passes; verified says incorrect (output aliases its input) -- returns x
# unchanged, since ReLU is the identity on KernelBench's U[0,1) inputs.
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x
