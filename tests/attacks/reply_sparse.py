# attack: kbv's own output name holds a sparse file whose header declares 2^32 float32 values
# (16 GiB, taking no disk): reading it would cost kbv 16 GiB of memory. kbv reads at most what
# the reference's output holds: the output is refused unread (the case fails).
import os, sys
import torch.nn as nn
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import forge


class ModelNew(nn.Module):
    def forward(self, x):
        p = forge.own_output_path()
        h = forge.tensor_header([1 << 16, 1 << 16])
        with open(p, "wb") as f:
            f.write(h)
            f.truncate(len(h) + (1 << 34))
        forge.send_and_hang(forge.tensor_reply(p))
