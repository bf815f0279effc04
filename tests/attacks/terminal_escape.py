# attack: terminal escape sequences in what the candidate says (an exception message, its
# stderr): they would retitle the window, clear the screen or hide text on the terminal that
# reads kbv's summary. kbv writes control characters as \xNN; the suite checks the summary.
import sys
import torch.nn as nn

sys.stderr.write("\x1b]0;pwned\x07\x1b[2J\x9b31m")


class ModelNew(nn.Module):
    def forward(self, x):
        raise RuntimeError("\x1b[8mhidden\x1b[0m \x1b]0;title\x07 <script>alert(1)</script> `touch /tmp/kbv-attack-canary` a|b,\"c\"")
