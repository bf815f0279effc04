# fault: fork storm -- starts 3000 processes that sleep. kbv counts the worker's processes
# once a second and kills them all past its limit (a crash, with the count as evidence);
# without root, RLIMIT_NPROC may refuse the forks first (a runtime_error).
import os

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        for _ in range(3000):
            if os.fork() == 0:
                os.execv("/bin/sleep", ["sleep", "120"])
        os.wait()
        return x.clamp_min(0)
