# attack: skip work on the timed calls that will not be checked. After its first 60 calls the
# candidate computes only one call in four and returns its last output otherwise (4.2x
# "verified" when kbv told the worker in advance which outputs it would save). Which timed
# outputs are checked is drawn after each call returns: a stale output is caught.
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.n = 0
        self.last = None

    def forward(self, x):
        self.n += 1
        if self.n > 60 and self.n % 4 and self.last is not None and self.last.shape == x.shape:
            return self.last
        self.last = x.clamp_min(0)
        return self.last
