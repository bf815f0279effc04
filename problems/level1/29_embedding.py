# kbv level 1: an embedding lookup: int64 token ids (48 x 1024) gather rows of a 32000 x 1024
# table (nn.Embedding's own initialisation). KBV_INPUTS keeps hidden ids in range.
import torch
import torch.nn as nn

vocab_size = 32000
embed_dim = 1024
batch_size = 48
seq_len = 1024

KBV_INPUTS = {0: {"int_range": [0, vocab_size - 1]}}


class Model(nn.Module):
    def __init__(self, vocab_size, embed_dim):
        super().__init__()
        self.table = nn.Embedding(vocab_size, embed_dim)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.table(ids)


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len))]


def get_init_inputs():
    return [vocab_size, embed_dim]
