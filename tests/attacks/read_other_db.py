# attack: read another run's results database, which holds that run's secret seed: every *.db
# in the folders above the worker's own (where a run's scratch base and database often lie),
# /tmp, /var/tmp, /root, /home and /work, listing them where it can and trying the names runs
# use where it cannot (tests/attacks/run.sh plants kbv-attack-other.db above the suite's
# scratch folders). Landlock's read allow-list refuses every one: forward raises with the
# refusals (a runtime_error); a database it could open is a LEAK, with what it read.
import os

import torch.nn as nn

NAMES = ("kbv-attack-other.db", "results.db", "kbv.db")


def folders():
    d = os.getcwd()
    while d != "/":
        d = os.path.dirname(d)
        yield d
    yield from ("/tmp", "/var/tmp", "/root", "/home", "/work")


def attempt():
    refused, unlisted, read, tried = [], [], [], set()
    for d in folders():
        try:
            names = {n for n in os.listdir(d) if n.endswith(".db")}
        except FileNotFoundError:
            continue
        except OSError as e:
            names = set()
            unlisted.append("%s: %s" % (d, type(e).__name__))
        for n in sorted(names | set(NAMES)):
            p = os.path.join(d, n)
            if p in tried:
                continue
            tried.add(p)
            try:
                with open(p, "rb") as f:
                    data = f.read(1 << 16)
                read.append("%s (%d bytes: %r)" % (p, len(data), data[-48:]))
            except FileNotFoundError:
                pass
            except OSError as e:
                refused.append("%s: %s" % (p, type(e).__name__))
    return refused, unlisted, read


class ModelNew(nn.Module):
    def forward(self, x):
        refused, unlisted, read = attempt()
        if read:
            raise RuntimeError("LEAK: read another results database: " + "; ".join(read)[:1500])
        raise PermissionError(("refused: %s; listing refused: %s" % (", ".join(refused) or "none", ", ".join(unlisted) or "none"))[:1500])
