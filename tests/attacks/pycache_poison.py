# pycache_poison: poison the Python bytecode kbv gives every worker (--pycache always: a tree
# kbv compiled once, read by the reference worker too), so that a later worker runs the
# candidate's code. It makes the folder of torch's bytecode writable (Landlock does not govern
# file modes: that may succeed, and gives nothing), then writes a file into the tree and
# replaces torch's own bytecode there. Landlock refuses both writes: forward raises with the
# refusals (a runtime_error); a write that went through is a LEAK, with what it wrote.
import os
import sys

import torch
import torch.nn as nn


def attempt():
    prefix = sys.pycache_prefix
    if not prefix:
        return None, []
    cached = getattr(torch, "__cached__", None) or ""
    done, refused = [], []
    folder = os.path.dirname(cached) if cached.startswith(prefix + "/") else prefix
    try:
        os.chmod(folder, 0o777)
        chmod = "chmod %s: done" % folder
    except OSError as e:
        chmod = "chmod %s: %s" % (folder, type(e).__name__)
    done, refused = [], []
    for how, path in (("write", os.path.join(folder, "kbv-poison.pyc")), ("replace", cached)):
        try:
            if how == "write":
                with open(path, "wb") as f:
                    f.write(b"poison")
            else:
                if not path.startswith(prefix + "/"):
                    raise FileNotFoundError("torch's bytecode is not in the tree: " + path)
                tmp = path + ".kbv-poison"
                with open(tmp, "wb") as f:
                    f.write(b"poison")
                os.replace(tmp, path)
            done.append("%s %s" % (how, path))
        except OSError as e:
            refused.append("%s %s: %s" % (how, path, type(e).__name__))
    return done, refused + [chmod]


class ModelNew(nn.Module):
    def forward(self, x):
        done, refused = attempt()
        if done is None:
            raise RuntimeError("no bytecode tree: sys.pycache_prefix is not set")
        if done:
            raise RuntimeError("LEAK: wrote kbv's bytecode tree: " + "; ".join(done)[:1500])
        raise PermissionError(("refused: " + "; ".join(refused))[:1500])
