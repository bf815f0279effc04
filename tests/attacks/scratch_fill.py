# attack: fill the scratch file system from the worker's folder, so that the evaluation
# turns into kbv's own error (not stored, run again) or fails someone else's. At its first
# forward the candidate writes 8 MiB files beneath its working folder, 128 MiB in all, past
# the 0.05 GiB budget (--max-scratch) its case gives it, then waits. kbv measures the folder
# while it waits: the worker is killed and the candidate fails alone (runtime_error, "over
# its budget"); the suite checks that its files are gone. Relu otherwise (verified = kept).
import os
import time
import torch.nn as nn

WROTE = []


class ModelNew(nn.Module):
    def forward(self, x):
        if not WROTE:
            block = b"\xa5" * (8 << 20)
            for i in range(16):
                with open(os.path.join(os.getcwd(), "fill%02d.bin" % i), "wb") as f:
                    f.write(block)
                WROTE.append(i)
            time.sleep(5)
        return x.clamp_min(0)
