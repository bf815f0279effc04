# attack: read kbv's /proc entries -- its command line (where a seed or a database path would
# show), environment, status and memory map -- through /proc/<parent>, and the command line of
# every other process it can name. Where the worker shares kbv's PID namespace (kbv not root),
# Landlock's read allow-list grants /proc's own entries and the worker's /proc/PID only; in a
# PID namespace of its own it sees no other process. Its own /proc/self must stay readable.
# forward raises with what happened (a runtime_error); anything read of another process is a
# LEAK.
import os

import torch.nn as nn


def attempt():
    with open("/proc/self/status") as f:  # its own entry: readable, or the rule is wrong
        f.read()
    me, ppid = os.getpid(), os.getppid()
    own = {me} | {int(t) for t in os.listdir("/proc/self/task")}
    paths = ["/proc/%d/%s" % (ppid, w) for w in ("cmdline", "environ", "status", "maps")] if ppid > 0 else []
    others = {1}
    try:
        others |= {int(p) for p in os.listdir("/proc") if p.isdigit()}
    except OSError:
        pass
    paths += ["/proc/%d/cmdline" % p for p in sorted(others - own - {ppid})]
    refused, read = [], []
    for p in paths:
        try:
            with open(p, "rb") as f:
                data = f.read(200)
            read.append("%s: %r" % (p, data[:60]))
        except FileNotFoundError:
            pass
        except OSError as e:
            refused.append("%s: %s" % (p, type(e).__name__))
    return refused, read


class ModelNew(nn.Module):
    def forward(self, x):
        refused, read = attempt()
        if read:
            raise RuntimeError("LEAK: " + "; ".join(read)[:1500])
        if not refused:
            raise PermissionError("found no process outside its own")
        raise PermissionError(("refused: " + ", ".join(refused))[:1500])
