# attack: connect to an abstract UNIX socket outside the worker -- any process's listener is
# named in /proc/net/unix, as a desktop's or a helper of kbv's would be; this one tries the
# suite's (tests/attacks/run.sh binds @kbv-attack-abstract-PID and records every connection).
# Landlock's abstract-socket scope refuses the connection (EPERM); in a network namespace of its
# own the worker sees no such socket at all. forward raises with what happened (a
# runtime_error); a connection is a LEAK.
import socket

import torch.nn as nn


def attempt():
    names = []
    with open("/proc/net/unix") as f:
        for line in f.readlines()[1:]:
            parts = line.split()
            if len(parts) >= 8 and parts[7].startswith("@kbv-attack-abstract-"):
                names.append(parts[7])
    refused, reached, absent = [], [], []
    for name in sorted(set(names)):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect("\0" + name[1:])
            s.sendall(b"connected from a candidate\n")
            reached.append(name)
        except ConnectionRefusedError:
            absent.append(name)
        except OSError as e:
            refused.append("connect %s: %s" % (name, type(e).__name__))
        finally:
            s.close()
    return refused, reached, absent


class ModelNew(nn.Module):
    def forward(self, x):
        refused, reached, absent = attempt()
        if reached:
            raise RuntimeError("LEAK: connected to " + ", ".join(reached))
        if not refused and not absent:
            raise PermissionError("found no abstract socket of the suite in /proc/net/unix")
        raise PermissionError("refused: " + ", ".join(refused + ["connect %s: gone" % n for n in absent]))
