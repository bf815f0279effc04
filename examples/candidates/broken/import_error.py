# expect: compile_error -- an import fails while loading the module.
import torch.nn as nn
import kbv_no_such_module_anywhere  # noqa: F401


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0)
