# attack: look for kbv's secret seed wherever a process can read about itself and its parent:
# its environment, its own and every visible process's command line and environment, and the
# files its open descriptors name. The run seed (--seed 11 in the suite; kbv's secret
# otherwise) may appear in none of them: the candidate fails loudly if it finds it.
import os

import torch.nn as nn

SEED = "11"
found = []
for k, v in os.environ.items():
    if "SEED" in k.upper() and SEED in v:
        found.append("env " + k)
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    for what in ("cmdline", "environ"):
        try:
            with open("/proc/%s/%s" % (pid, what), "rb") as f:
                words = f.read().split(b"\0")
        except OSError:
            continue
        for i, w in enumerate(words):
            if b"seed" in w.lower() and (SEED.encode() in w or (i + 1 < len(words) and words[i + 1] == SEED.encode())):
                found.append("/proc/%s/%s" % (pid, what))
if found:
    raise RuntimeError("the seed is readable: " + ", ".join(found))


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0)
