# fault: network connection -- connects to the TCP port of the fault suite's listener (the
# runner writes it into its copy of this file: the worker may read no other file beside it)
# and to a public address. kbv's network namespace (or seccomp filter) must make both fail;
# the guard flags the try.
import socket

import torch.nn as nn

_PORT = 9  # the listener's port, written here by tests/faults/run.sh


class ModelNew(nn.Module):
    def forward(self, x):
        for addr in (("127.0.0.1", _PORT), ("1.1.1.1", 53)):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(2)
            s.connect(addr)
            s.sendall(b"leaked\n")
            s.close()
        return x.clamp_min(0)
