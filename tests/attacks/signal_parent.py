# attack: signal processes outside the worker -- its parent (kbv), pid 1, every process listed
# in /proc and the numbers next to its parent's and its own (kbv's other worker, its helpers).
# It sends signal 0, which the kernel checks exactly as a real one. Where the worker shares
# kbv's PID namespace (kbv not root), Landlock's signal scope refuses each (EPERM); in a PID
# namespace of its own the worker finds no process but its own. forward raises with what
# happened (a runtime_error); a signal that reached a process outside is a LEAK.
import os

import torch.nn as nn


def attempt():
    me = os.getpid()
    own = {me} | {int(t) for t in os.listdir("/proc/self/task")}
    ppid = os.getppid()
    targets = {1} | set(range(max(ppid - 16, 1), ppid + 64)) | set(range(max(me - 64, 1), me + 64))
    try:
        targets |= {int(p) for p in os.listdir("/proc") if p.isdigit()}
    except OSError:
        pass
    refused, reached, absent = [], [], 0
    for pid in ([ppid] if ppid > 0 else []) + sorted(targets - own - {ppid}):
        name = "kill(parent %d)" % pid if pid == ppid else "kill(%d)" % pid
        try:
            os.kill(pid, 0)
            reached.append(name)
        except ProcessLookupError:
            absent += 1
        except OSError as e:
            refused.append("%s: %s" % (name, type(e).__name__))
    return refused, reached, absent


class ModelNew(nn.Module):
    def forward(self, x):
        refused, reached, absent = attempt()
        if reached:
            raise RuntimeError("LEAK: signals reached " + ", ".join(reached[:20]))
        if not refused:
            raise PermissionError("reached no process outside its own (%d numbers name none)" % absent)
        raise PermissionError(("signals refused: %d: %s" % (len(refused), ", ".join(refused)))[:1500])
