# Honest CPU candidate for transpose_view that returns a contiguous copy where the reference
# returns a view (x.t(), swapped strides): the same values in another layout. Values are judged,
# layout is reported: verified, with stride_mismatch (info) among the findings (tests/e2e/run.sh).
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x.transpose(0, 1).contiguous()
