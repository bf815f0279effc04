# attack: kbv's own output name made a symbolic link to a file elsewhere (in a real run, the
# reference's kept outputs), and a forged reply pointing at it. kbv opens without following
# links: refused.
import os, sys
import torch.nn as nn
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import forge


class ModelNew(nn.Module):
    def forward(self, x):
        os.symlink(forge.right_answer_elsewhere(x), forge.own_output_path())
        forge.send_and_hang(forge.tensor_reply(forge.own_output_path()))
