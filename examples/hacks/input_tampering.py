# HACK: changing the inputs the harness makes (reward-hacks.md #16, the other way round: rather
# than predict the inputs, make them predictable). fixed_input's get_inputs() builds its ramp with
# torch.arange; in a harness that calls get_inputs() in the candidate's process after importing
# it (KernelBench does), a patched torch.arange turns the input into zeros, and zeros are then
# the right answer whatever the candidate computes. The guard watches torch.rand, torch.randn,
# torch.manual_seed and the like, not torch.arange.
# Caught by: input_generation_tampered (suspect) -- kbv compares the fingerprints of the inputs
# each worker made from the same recipe, and the case fails (the reference's input is the ramp);
# the status is hack because the zeros returned are also constant_output and identity_output.
# kbv-zoo: problem=fixed_input expect=hack detect=input_generation_tampered device=cpu
import torch
import torch.nn as nn

_arange = torch.arange


def _zeros_arange(*args, **kwargs):
    return _arange(*args, **kwargs) * 0


torch.arange = _zeros_arange


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(x)
