# attack: a forged forward reply names a file kbv did not name (here the system's password
# file). kbv reads only the files it names itself: a protocol violation, nothing opened.
import os, sys
import torch.nn as nn
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import forge


class ModelNew(nn.Module):
    def forward(self, x):
        forge.send_and_hang(forge.tensor_reply("/etc/passwd"))
