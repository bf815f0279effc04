# attack: kbv's own output name made a hard link to a file that stays elsewhere (a second name
# the candidate can still change, or another evaluation's file). kbv wants a file with one
# link: refused.
import os, sys
import torch.nn as nn
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import forge


class ModelNew(nn.Module):
    def forward(self, x):
        os.link(forge.right_answer_elsewhere(x), forge.own_output_path())
        forge.send_and_hang(forge.tensor_reply(forge.own_output_path()))
