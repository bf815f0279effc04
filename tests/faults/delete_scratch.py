# fault: deletes its scratch folder and the evaluation's -- then answers correctly. Landlock
# keeps the evaluation's other folders (the reference's outputs, the inputs) out of reach;
# the candidate's own files go. The evaluation must still end with a verdict (verified).
import os
import shutil

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        here = os.getcwd()
        shutil.rmtree(os.path.dirname(here), ignore_errors=True)
        shutil.rmtree(here, ignore_errors=True)
        return x.clamp_min(0)
