# Honest CPU candidate for linear_relu whose weights come out different under the same seed:
# it draws a scratch tensor before creating its Linear, so the RNG has moved on. Its
# state_dict has the reference's names and shapes, so kbv loads the reference's weights into
# it (flag weights_loaded) and it is verified.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        torch.rand(16)  # moves the RNG: without kbv's weight loading the outputs would differ
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp_min(torch.addmm(self.fc.bias, x, self.fc.weight.t()), 0.0)
