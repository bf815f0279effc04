# attack: a forged reply with 6,000 guard findings of distinct made-up ids (de-duplicating them
# pairwise pinned kbv's CPU). Findings per reply are capped and ids must be the catalogue's:
# refused at once.
import os, sys
import torch.nn as nn
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import forge


class ModelNew(nn.Module):
    def forward(self, x):
        r = forge.tensor_reply(forge.own_output_path())
        r["guard"] = [{"id": "f%d" % i, "severity": "info", "step": "forward", "detail": ""} for i in range(6000)]
        forge.send_and_hang(r)
