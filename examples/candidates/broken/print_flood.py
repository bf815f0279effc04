# expect: verified -- correct, but writes 300 MB on stdout first. kbv keeps the first and
# last bytes of the output, flags output_truncated, and judges the result as usual.
import sys

import torch.nn as nn

_CHUNK = "x" * (1 << 20)


class ModelNew(nn.Module):
    def forward(self, x):
        for _ in range(300):
            sys.stdout.write(_CHUNK)
        sys.stdout.flush()
        return x.clamp_min(0)
