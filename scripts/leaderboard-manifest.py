#!/usr/bin/env python3
"""leaderboard-manifest.py -- a kbv run manifest of the public KernelBench leaderboard's
LLM-written kernels (github anneouyang/KernelBenchLeaderboard), for issue #22's check of real
kernels under the three protocols (docs/BENCHMARKS.md). The leaderboard is not part of kbv:
fetch it yourself; nothing of it is committed here.

Its docs/assets/data.json maps "Level L: P_Name" to at most five entries, one per model,
{"display_name", "torch_speedup", "file"}; the kernels are docs/assets/solutions/<file>.py and
the problems they were written for docs/assets/problems/l<L>_p<P>.py (KernelBench's problems of
January 2025, not today's: each kernel is judged against the problem it was written for).
Each entry becomes one manifest line: problem, candidate, model (the display name), sample 0,
level. Entries whose files are missing are reported on stderr and left out.

Usage: scripts/leaderboard-manifest.py LEADERBOARD_DIR [--levels 1,2,3] [--models a,b]
           [--limit N] > manifest.jsonl
   or, from a bare git mirror: --git-dir DIR (files are extracted under --out DIR first).
"""
import argparse
import json
import os
import re
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", help="a checkout of KernelBenchLeaderboard")
    ap.add_argument("--git-dir", help="a bare git mirror instead of a checkout")
    ap.add_argument("--out", help="with --git-dir: where to extract docs/assets")
    ap.add_argument("--levels", default="1,2,3")
    ap.add_argument("--models", default="", help="comma-separated display names (default: all)")
    ap.add_argument("--limit", type=int, default=0, help="at most N entries (0: all), taken round-robin over the models")
    a = ap.parse_args()
    if a.git_dir:
        if not a.out:
            ap.error("--git-dir needs --out")
        os.makedirs(a.out, exist_ok=True)
        tar = subprocess.run(["git", "--git-dir", a.git_dir, "archive", "HEAD", "docs/assets"], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", a.out], input=tar, check=True)
        root = a.out
    elif a.root:
        root = a.root
    else:
        ap.error("give LEADERBOARD_DIR or --git-dir")
    assets = os.path.join(os.path.abspath(root), "docs", "assets")
    with open(os.path.join(assets, "data.json")) as f:
        data = json.load(f)
    levels = {int(x) for x in a.levels.split(",") if x}
    models = {x for x in a.models.split(",") if x}
    per_model = {}
    missing = 0
    for key in sorted(data):
        m = re.match(r"Level (\d+): (\d+)_", key)
        if not m:
            print("skipped key %r: not 'Level L: P_Name'" % key, file=sys.stderr)
            continue
        level, prob = int(m.group(1)), int(m.group(2))
        if level not in levels:
            continue
        problem = os.path.join(assets, "problems", "l%d_p%d.py" % (level, prob))
        for e in data[key]:
            model = str(e.get("display_name", ""))
            if models and model not in models:
                continue
            cand = os.path.join(assets, "solutions", "%s.py" % e.get("file", ""))
            if not (os.path.isfile(problem) and os.path.isfile(cand)):
                missing += 1
                print("left out %s / %s: file missing" % (key, model), file=sys.stderr)
                continue
            per_model.setdefault(model, []).append(
                {"problem": problem, "candidate": cand, "model": model, "sample": 0, "level": level})
    rows = []
    if a.limit > 0:  # round-robin over the models, so a small run still has every model
        queues = [per_model[m] for m in sorted(per_model)]
        while len(rows) < a.limit and any(queues):
            for q in queues:
                if q and len(rows) < a.limit:
                    rows.append(q.pop(0))
    else:
        rows = [r for m in sorted(per_model) for r in per_model[m]]
    for r in rows:
        print(json.dumps(r))
    print("%d entries, %d models, %d left out" % (len(rows), len({r['model'] for r in rows}), missing), file=sys.stderr)


if __name__ == "__main__":
    main()
