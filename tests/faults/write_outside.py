# fault: writes outside its scratch folder -- into the folder above it (the evaluation's
# scratch root) and into the scratch base. Landlock refuses (PermissionError, so a
# runtime_error) and the guard names the path; the files must not exist afterwards.
import os

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        here = os.getcwd()
        for target in (os.path.join(os.path.dirname(here), "planted.txt"),
                       os.path.join(os.path.dirname(os.path.dirname(here)), "kbv-fault-planted.txt")):
            with open(target, "w") as f:
                f.write("written by a candidate\n")
        return x.clamp_min(0)
