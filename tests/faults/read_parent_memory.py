# fault: reads kbv's memory -- finds the kbv process (in /proc, by its command line), opens
# its /proc/PID/mem and ptrace()s it. kbv is not dumpable, the worker holds no capabilities
# and seccomp refuses ptrace: every attempt fails (a runtime_error naming the refusals).
import ctypes
import os

import torch.nn as nn


def kbv_pids():
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if argv and os.path.basename(argv[0]) == b"kbv" and len(argv) > 1 and argv[1] in (b"eval", b"run"):
            yield int(pid)


class ModelNew(nn.Module):
    def forward(self, x):
        refused = []
        libc = ctypes.CDLL(None, use_errno=True)
        for pid in kbv_pids():
            try:
                with open(f"/proc/{pid}/mem", "rb") as f:
                    f.read(1)
                raise RuntimeError(f"LEAK: opened /proc/{pid}/mem")
            except OSError as e:
                refused.append(f"/proc/{pid}/mem: {e.__class__.__name__}")
            if libc.ptrace(16, pid, 0, 0) == 0:  # PTRACE_ATTACH
                raise RuntimeError(f"LEAK: ptrace-attached to {pid}")
            refused.append(f"ptrace({pid}): errno {ctypes.get_errno()}")
        raise PermissionError("refused: " + "; ".join(refused) if refused else "found no kbv process")
