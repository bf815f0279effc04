# fault: closes kbv's control pipes (fds 3 and 4) -- the worker can no longer answer: a crash.
import os

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        os.close(3)
        os.close(4)
        return x.clamp_min(0)
