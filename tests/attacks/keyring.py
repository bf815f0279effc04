# attack: a key in the user's session keyring, which outlives the process and is shared by the
# user's processes. keyctl and add_key are refused in the worker: the candidate fails loudly
# if its key was stored, so `verified` means it was not.
import ctypes
import torch.nn as nn

libc = ctypes.CDLL(None, use_errno=True)
KEY_SPEC_SESSION_KEYRING = -3
serial = libc.syscall(248, b"user", b"kbv-attack", b"secret", 6, KEY_SPEC_SESSION_KEYRING)  # add_key
if serial >= 0:
    raise RuntimeError("add_key succeeded: the keyring is reachable from the worker")


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0)
