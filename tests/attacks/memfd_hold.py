# attack: memory held outside the heap, where --max-memory's RLIMIT_DATA does not count it:
# at its first forward the candidate fills memfds (memfd_create, ftruncate, every page
# written) to 1 GiB, twice the 0.5 GiB its case gives the worker, and keeps them open. The
# worker's memory cgroup counts them: the kernel's OOM killer ends it at its limit, a
# runtime_error as a MemoryError is. Computes relu honestly otherwise (verified = held).
import os
import resource

import torch.nn as nn

# twice the worker's limit (--max-memory is its RLIMIT_DATA too): 0.5 GiB on the CPU, more
# where CUDA needs it to start
LIMIT = resource.getrlimit(resource.RLIMIT_DATA)[0]
if LIMIT == resource.RLIM_INFINITY:
    LIMIT = 1 << 30

HELD = []


def hold(total, chunk=64 << 20):
    page = b"\x5a" * (1 << 20)
    while len(HELD) * chunk < total:
        fd = os.memfd_create("kbv-attack-hold")
        os.ftruncate(fd, chunk)
        for off in range(0, chunk, len(page)):
            os.pwrite(fd, page, off)
        HELD.append(fd)


class ModelNew(nn.Module):
    def forward(self, x):
        if not HELD:
            hold(2 * LIMIT)
        return x.clamp_min(0)
