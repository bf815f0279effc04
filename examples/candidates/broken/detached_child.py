# expect: verified -- correct, but leaves a detached process behind (fork + setsid + sleep).
# kbv must kill it when the evaluation ends: no process may outlive the evaluation.
import os
import time

import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(3600)
            os._exit(0)

    def forward(self, x):
        return x.clamp_min(0)
