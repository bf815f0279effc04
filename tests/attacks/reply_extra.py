# attack: desynchronise the protocol. At import the candidate writes a reply of its own on
# fd 4 ahead of the worker's, so that every later reply answers the command before it (the
# real reply to load_candidate arriving as the answer to build, and so on). kbv checks that a
# reply is the one its command asks for: a protocol violation, not a verdict on shifted data.
import json
import os

import torch.nn as nn

os.write(4, (json.dumps({"ok": True}) + "\n").encode())


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0)
