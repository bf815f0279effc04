# kbv example problem: relu whose forward issues a Python warning, as torch's own layers do
# (nn.TransformerEncoder on the GPU). Printing a warning reads its source line from the file
# of the frame that issued it -- this problem file -- so under the standard and paper
# protocols, which run this Model in the candidate's process, the problem file is opened by
# the problem's own code, not by the candidate's (docs/hacks.md, reads_problem_file).
import warnings

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        warnings.warn("this layer's fast path is off")
        return torch.relu(x)


batch_size = 64
dim = 1024


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
