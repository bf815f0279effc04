# fault: GPU out-of-memory -- asks for far more device memory than any GPU has: torch raises
# OutOfMemoryError, a runtime_error; the next evaluation gets a clean GPU.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        hoard = [torch.empty(1 << 34, dtype=torch.uint8, device=x.device) for _ in range(64)]  # 64 x 16 GiB
        return x.clamp_min(0) + 0 * hoard[0][0]
