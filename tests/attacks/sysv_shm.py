# attack: a System V shared-memory segment left behind for the next evaluation to read
# (state across evaluations). The worker has its own IPC namespace, gone with it: the segment
# does not survive (the suite checks `ipcs` afterwards). Computes relu honestly otherwise.
import ctypes
import torch.nn as nn

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
KEY = 0x6B627631  # "kbv1"
shmid = libc.shmget(KEY, 4096, 0o1666)  # IPC_CREAT | 0666
if shmid >= 0:
    addr = libc.shmat(shmid, None, 0)
    if addr not in (None, ctypes.c_void_p(-1).value):
        ctypes.memmove(addr, b"left for the next evaluation", 28)


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0)
