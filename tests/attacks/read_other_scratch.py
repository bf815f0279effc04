# attack: read what lies outside the worker's own files -- another run's kept reference outputs
# in a sibling kbv-* folder (tests/attacks/run.sh plants kbv-attack-sibling/ref/ above the
# suite's scratch folders), this run's scratch base, the user's files under /root, /home and
# /work, the repository the candidate came from (its README.md), a file beside the candidate
# that is not Python source (cases.txt) and the host's /etc/shadow. Landlock's read allow-list
# refuses every one: forward raises with the refusals (a runtime_error); anything read or
# listed is a LEAK.
import os

import torch.nn as nn

here = os.path.dirname(os.path.abspath(__file__))


def attempt():
    files, folders = [], [os.path.dirname(os.path.dirname(os.getcwd())), "/root", "/home", "/work", "/tmp"]
    d = os.getcwd()
    while d != "/":
        d = os.path.dirname(d)
        files.append(os.path.join(d, "kbv-attack-sibling", "ref", "case0_ref_0.kbt"))
        folders.append(os.path.join(d, "kbv-attack-sibling"))
    files += ["/root/.bashrc", "/root/.profile", os.path.join(os.path.dirname(os.path.dirname(here)), "README.md"),
              os.path.join(here, "cases.txt"), "/etc/shadow"]
    refused, read = [], []
    for p in files:
        try:
            with open(p, "rb") as f:
                read.append("%s: %r" % (p, f.read(48)))
        except FileNotFoundError:
            pass
        except OSError as e:
            refused.append("%s: %s" % (p, type(e).__name__))
    for p in folders:
        try:
            read.append("%s lists %s" % (p, sorted(os.listdir(p))[:5]))
        except FileNotFoundError:
            pass
        except OSError as e:
            refused.append("%s/: %s" % (p, type(e).__name__))
    return refused, read


class ModelNew(nn.Module):
    def forward(self, x):
        refused, read = attempt()
        if read:
            raise RuntimeError("LEAK: " + "; ".join(read)[:1500])
        raise PermissionError(("refused: " + ", ".join(refused))[:1800])
