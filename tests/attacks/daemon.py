# attack: leave a daemon behind. At import the candidate double-forks a process into its own
# session that outlives the worker and, a few seconds later, writes into the scratch base (where
# the next evaluation's folder will be) and tries to signal processes. kbv kills the worker's
# whole PID namespace (or, without one, its process group and the subreaper's orphans): the
# runner checks that no process is left and that nothing was written.
import os
import time

import torch.nn as nn

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(4)
        try:
            with open(os.path.join(os.path.dirname(os.getcwd()), "kbv-daemon-was-here"), "w") as f:
                f.write("x")
        except OSError:
            pass
        time.sleep(3600)
    os._exit(0)


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0)
