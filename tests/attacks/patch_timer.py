# attack: patch the Python clocks a harness might time with (time.perf_counter, time.time,
# time.monotonic) to run 20 times slow, while forward does eight times the reference's work.
# kbv's timers are C (CUDA events on its own stream, or clock_gettime on the CPU) and its
# batches run on kbv's clock: the candidate is timed as the slow kernel it is (verified,
# no speedup above 1, and the guard reports the patched clocks: torch_patched).
import time

import torch.nn as nn

for name in ("perf_counter", "time", "monotonic"):
    f = getattr(time, name)
    setattr(time, name, lambda f=f: f() / 20)


class ModelNew(nn.Module):
    def forward(self, x):
        y = x.clamp_min(0)
        for _ in range(7):
            y = x.clamp_min(0)
        return y
