# timesrelay.py -- shared by the time-forging attacks (tests/attacks/cases.txt: forge_times,
# forge_noisy; tests/gpu/cases.txt: forge_graph): what a candidate's native code, or a process
# it forks, can do to the times the worker reports. Imported, install() forks a relay process
# that sits between the worker and kbv on the reply descriptor (fd 4) and divides the times
# ("ms") of each reply that only(reply) accepts by what divisor(rng) says (1: as they were).
# EightTimes is a ReLU that does eight times the reference's work: an honest answer, slower
# than the reference (patch_timer's too, which imports this module for it alone).
import json
import os
import random

import torch.nn as nn


def install(divisor, only=lambda reply: True):
    r, w = os.pipe()
    real = os.dup(4)
    if os.fork() == 0:
        os.close(w)
        rng = random.Random(os.getpid())
        with os.fdopen(r, "rb") as f:
            for line in f:
                try:
                    m = json.loads(line)
                    if isinstance(m.get("ms"), list) and only(m):
                        d = divisor(rng)
                        m["ms"] = [v / d for v in m["ms"]]
                    line = (json.dumps(m) + "\n").encode()
                except ValueError:
                    pass
                os.write(real, line)
        os._exit(0)
    os.dup2(w, 4)
    os.close(w)
    os.close(r)
    os.close(real)


class EightTimes(nn.Module):
    def forward(self, x):
        y = x.clamp_min(0)
        for _ in range(7):
            y = x.clamp_min(0)
        return y
