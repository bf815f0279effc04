# expect: standard passes (--standard-tol 1e-2); verified says incorrect, accuracy class
# half -- multiplies in bfloat16 and returns float32.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, A, B):
        return (A.bfloat16() @ B.bfloat16()).float()
