# attack: a reply nested 100000 levels deep (a parser that recurses would overflow kbv's
# stack). kbv's parser limits the depth: a protocol violation.
import os

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        os.write(4, b'{"ok": true, "values": ' + b"[" * 100000 + b"]" * 100000 + b"}\n")
        import time
        time.sleep(3600)
