# fault: network connection -- connects to the TCP port named in the file KBV_FAULT_PORT
# beside the problem (the fault suite runs a listener there) and to a public address.
# kbv's network namespace (or seccomp filter) must make both fail; the guard flags the try.
import os
import socket

import torch.nn as nn

_PORT_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "KBV_FAULT_PORT")


class ModelNew(nn.Module):
    def forward(self, x):
        port = int(open(_PORT_FILE).read()) if os.path.exists(_PORT_FILE) else 9
        for addr in (("127.0.0.1", port), ("1.1.1.1", 53)):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(2)
            s.connect(addr)
            s.sendall(b"leaked\n")
            s.close()
        return x.clamp_min(0)
