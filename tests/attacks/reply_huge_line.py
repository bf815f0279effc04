# attack: flood the control channel with one reply line of 8 MiB (a finding detail the size of
# the pipe many times over). kbv reads at most 1 MiB per line: a protocol violation, bounded in
# time and memory.
import os
import time

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        os.write(4, b'{"ok": true, "message": "' + b"A" * (8 << 20) + b'"}\n')
        time.sleep(3600)
