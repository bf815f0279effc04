# attack: patch torch.Tensor.detach, through which the worker used to save outputs: forward
# returns an unwritten tensor (fast), and the patched detach computes the right answer only
# when kbv saves it, so every checked output looked right (3.6x "verified" before). The
# worker saves through the tensor methods it took at start: what is saved is what forward
# returned.
import torch
import torch.nn as nn

_detach = torch.Tensor.detach


def detach(self):
    src = getattr(self, "_kbv_attack_src", None)
    if src is not None:
        return _detach(src.clamp_min(0))
    return _detach(self)


torch.Tensor.detach = detach


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        y._kbv_attack_src = x
        return y
