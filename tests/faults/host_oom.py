# fault: host out-of-memory -- allocates host memory in 256 MiB steps until refused. The
# worker's data limit (--max-memory) refuses it: a MemoryError, so a runtime_error.
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        hoard = []
        while True:
            hoard.append(bytearray(256 << 20))
