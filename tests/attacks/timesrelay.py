# timesrelay.py -- shared by the time-forging attacks (tests/attacks/cases.txt: forge_times,
# forge_noisy; tests/gpu/cases.txt: forge_graph): what a candidate's native code, or a process
# it forks, can do to the times the worker reports. Imported, install() forks a relay process
# that sits between the worker and kbv on the reply descriptor (fd 4) and divides the times
# ("ms") of each reply that only(reply) accepts by what divisor(rng) says (1: as they were);
# relay(edit) is that process for any change to the replies (probe_evade).
# EightTimes is a ReLU that does eight times the reference's work: an honest answer, slower
# than the reference (patch_timer's too, which imports this module for it alone).
import json
import os
import random

import torch.nn as nn


def relay(edit):
    """Fork the relay: each reply (a JSON object) goes through edit(reply, rng), which may
    change it in place, on its way to kbv."""
    r, w = os.pipe()
    real = os.dup(4)
    if os.fork() == 0:
        os.close(w)
        rng = random.Random(os.getpid())
        with os.fdopen(r, "rb") as f:
            for line in f:
                try:
                    m = json.loads(line)
                    if isinstance(m, dict):
                        edit(m, rng)
                    line = (json.dumps(m) + "\n").encode()
                except ValueError:
                    pass
                os.write(real, line)
        os._exit(0)
    os.dup2(w, 4)
    os.close(w)
    os.close(r)
    os.close(real)


def install(divisor, only=lambda reply: True):
    def divide(m, rng):
        if isinstance(m.get("ms"), list) and only(m):
            d = divisor(rng)
            m["ms"] = [v / d for v in m["ms"]]

    relay(divide)


class EightTimes(nn.Module):
    def forward(self, x):
        y = x.clamp_min(0)
        for _ in range(7):
            y = x.clamp_min(0)
        return y
