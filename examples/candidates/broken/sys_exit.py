# expect: crash -- forward calls sys.exit (SystemExit).
import sys

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        sys.exit(3)
