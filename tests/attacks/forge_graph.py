# attack (GPU only: tests/gpu/cases.txt, on examples/problems/conv2d_fp32.py): forge only the
# graph-replay figures. A relay process forked at import (timesrelay.py) divides by 8 the times
# of the replies that carry graph replays ("graphs" in the reply) and leaves every other reply
# alone, while forward does the convolution twice. The eager figures are honest (about 0.5x),
# so kbv's clock around the eager batches agrees with them; the replays report 4x. kbv's clock
# around the replay commands sees the candidate's commands take twice the reference's work, and
# caps speedup_graph at twice what it sees (timing_inconsistent, info, arm "graph"). Until
# 2026-12-06 the 4x stood in speedup_graph.
import os
import sys

import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import timesrelay  # noqa: E402

timesrelay.install(lambda rng: 8, only=lambda reply: "graphs" in reply)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 128, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        y = self.conv(x)
        return self.conv(x) + 0 * y
