# kbv example problem: 32 steps of y = 0.9 tanh(y) + 0.1 x on a small tensor (256 x 512). In
# eager PyTorch each step is three kernel launches, so on a GPU the call costs about 0.4 ms of
# launch overhead for microseconds of work: the fusion an honest kernel would do, and the
# problem the hack zoo's content_cache is judged on (a lookup beats it by far).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x
        for _ in range(32):
            y = torch.tanh(y) * 0.9 + x * 0.1
        return y


def get_inputs():
    return [torch.randn(256, 512)]


def get_init_inputs():
    return []
