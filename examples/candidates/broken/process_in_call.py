# expect: verified -- correct, but starts a process inside forward (subprocess.run of /bin/true),
# as a candidate that shells out to a compiler or a tool at call time would. kbv reports
# process_in_call (suspect): evidence for the reader, not a verdict. The fault suite checks the
# flag and that nothing outlives the evaluation (tests/faults/cases.txt).
import subprocess

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        subprocess.run(["/bin/true"], check=False)
        return torch.relu(x)
