# attack: kbv's own output name made a FIFO, and a forged reply pointing at it: a plain open()
# would block kbv forever. kbv opens without blocking and wants a regular file: refused.
import os, sys
import torch.nn as nn
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import forge


class ModelNew(nn.Module):
    def forward(self, x):
        p = forge.own_output_path()
        os.mkfifo(p)
        forge.send_and_hang(forge.tensor_reply(p))
