# A broken problem: get_inputs() returns a string among the inputs. kbv must exit 3.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, s):
        return x


def get_inputs():
    return [torch.rand(4), "not a tensor"]


def get_init_inputs():
    return []
