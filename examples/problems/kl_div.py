# kbv example problem: KL divergence between two probability distributions (rows that sum
# to one). It declares nothing: kbv finds by itself that hidden inputs must stay positive
# (domain fallback, docs/correctness.md).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.kl_div(torch.log(predictions), targets, reduction="batchmean")


batch_size = 512
dim = 1024


def get_inputs():
    return [torch.rand(batch_size, dim).softmax(dim=-1), torch.rand(batch_size, dim).softmax(dim=-1)]


def get_init_inputs():
    return []
