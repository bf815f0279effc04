# fault: reads the reference's outputs -- at import it forks a watcher that lists the
# evaluation's ref folder in a loop (where the listing is refused too, it tries the names kbv
# gives them, case<N>_<tag>_<output>.kbt) and opens every file that appears there (each lives
# only until kbv has read it), keeping its tally in a file. Landlock must refuse every read:
# forward then raises with the count of refusals (a runtime_error); a readable output would
# be a leak.
import json
import os
import time

import torch.nn as nn

_REF = os.path.join(os.path.dirname(os.getcwd()), "ref")
_TALLY = os.path.join(os.getcwd(), "tally.json")
_GUESSES = ["case%d_%s_%d.kbt" % (c, t, i) for c in range(8) for t in ("oracle", "strict", "tf32") for i in range(2)]

if os.fork() == 0:
    seen, denied, read = set(), 0, []
    last = 0.0
    while True:
        try:
            names = os.listdir(_REF)
        except OSError:
            names = _GUESSES
        for name in names:
            try:
                with open(os.path.join(_REF, name), "rb") as f:
                    f.read(16)
                read.append(name)
            except PermissionError:
                denied += 1
            except OSError:
                continue
            seen.add(name)
        if time.monotonic() - last > 0.05:
            with open(_TALLY + ".tmp", "w") as f:
                json.dump({"files": len(seen), "denied": denied, "read": read[:3]}, f)
            os.replace(_TALLY + ".tmp", _TALLY)
            last = time.monotonic()


class ModelNew(nn.Module):
    def forward(self, x):
        time.sleep(0.2)
        t = json.load(open(_TALLY)) if os.path.exists(_TALLY) else {"files": 0, "denied": 0, "read": []}
        if t["read"]:
            raise RuntimeError("LEAK: read the reference outputs " + ", ".join(t["read"]))
        raise PermissionError(f"{t['denied']} reads of {t['files']} reference output files denied")
