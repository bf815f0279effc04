# expect: compile_error -- the C++ extension does not compile (load_inline raises at import).
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ext = load_inline(name="kbv_broken_cpp", cpp_sources="torch::Tensor f(torch::Tensor x) { return x.this_method_does_not_exist(); }",
                  functions=["f"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.f(x)
