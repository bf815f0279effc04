# fault: thread storm -- starts 6000 sleeping threads with small stacks. kbv kills the
# worker past its thread limit (a crash), or the thread limit of the machine or the worker's
# memory limit refuses a thread first (a runtime_error).
import threading
import time

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        threading.stack_size(64 << 10)
        for _ in range(6000):
            threading.Thread(target=time.sleep, args=(120,), daemon=True).start()
        time.sleep(10)
        return x.clamp_min(0)
