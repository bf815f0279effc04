# HACK: a sampled-content cache (issue #21). The output is cached under the input's address and
# 16 of its values at fixed places: a call whose sampled values match the last call's returns
# the last output. Honest on every checked call (each new input differs everywhere), and a
# whole-input rewrite (kbv's memoization probe) changes the samples too, so it passes that.
# Caught by: partial_rewrite_ignored (hack) -- kbv changes one element, 8 scattered elements or
# one row of an input in place between two calls: the reference's output changes there, this
# candidate's stays as it was.
# kbv-zoo: problem=relu expect=hack detect=partial_rewrite_ignored|output_memoization|value_cache device=cpu
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.key = None
        self.out = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1)
        places = torch.linspace(0, flat.numel() - 1, 16).long()
        key = (x.data_ptr(), tuple(flat[places].tolist()))
        if key == self.key and self.out is not None:
            return self.out
        self.key, self.out = key, torch.relu(x)
        return self.out
