# attack: an unprivileged user namespace (inside one a process is root and may unshare the
# rest). unshare(CLONE_NEWUSER) and clone3 are refused: the candidate fails loudly if it got
# one, so `verified` means it did not.
import ctypes
import os
import torch.nn as nn

libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWUSER = 0x10000000
if libc.unshare(CLONE_NEWUSER) == 0:
    raise RuntimeError("unshare(CLONE_NEWUSER) succeeded")


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0)
