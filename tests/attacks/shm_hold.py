# attack: memory held in System V shared memory, which --max-memory's RLIMIT_DATA does not
# count once detached: at its first forward the candidate makes segments of 1 GiB in all
# (twice the 0.5 GiB its case gives the worker), writes every page, detaches them and keeps
# them in its IPC namespace. The worker's memory cgroup counts them: the kernel's OOM killer
# ends it at its limit, a runtime_error. Computes relu honestly otherwise (verified = held).
import ctypes
import resource

import torch.nn as nn

# twice the worker's limit (--max-memory is its RLIMIT_DATA too): 0.5 GiB on the CPU, more
# where CUDA needs it to start
LIMIT = resource.getrlimit(resource.RLIMIT_DATA)[0]
if LIMIT == resource.RLIM_INFINITY:
    LIMIT = 1 << 30

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
IPC_PRIVATE, IPC_CREAT = 0, 0o1000
HELD = []


def hold(total, chunk=64 << 20):
    while len(HELD) * chunk < total:
        shmid = libc.shmget(IPC_PRIVATE, chunk, IPC_CREAT | 0o600)
        if shmid < 0:
            raise OSError(ctypes.get_errno(), "shmget")
        addr = libc.shmat(shmid, None, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "shmat")
        ctypes.memset(addr, 0x5A, chunk)
        libc.shmdt(addr)
        HELD.append(shmid)


class ModelNew(nn.Module):
    def forward(self, x):
        if not HELD:
            hold(2 * LIMIT)
        return x.clamp_min(0)
