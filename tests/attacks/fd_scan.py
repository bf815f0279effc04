# attack: read every descriptor the worker inherited beyond its protocol pair, looking for
# kbv's database, another evaluation's files or a socket to kbv. kbv passes the worker its
# protocol descriptors and the standard ones only (everything else close-on-exec): the
# candidate fails loudly if it finds more.
import os
import stat

import torch.nn as nn

odd = []
for name in os.listdir("/proc/self/fd"):
    fd = int(name)
    try:
        st = os.fstat(fd)
        target = os.readlink("/proc/self/fd/" + name)
    except OSError:
        continue
    if fd <= 4:
        continue
    if stat.S_ISREG(st.st_mode) and (target.endswith(".db") or "/kbv-" in target) and not target.startswith(os.getcwd()):
        odd.append("%d -> %s" % (fd, target))
    if stat.S_ISSOCK(st.st_mode):
        odd.append("%d -> %s" % (fd, target))
if odd:
    raise RuntimeError("inherited descriptors: " + ", ".join(odd))


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0)
