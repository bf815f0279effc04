#!/usr/bin/env bash
# jobs-small-scratch.sh -- kbv's own exhaustion is never a verdict (#20; docs/RELIABILITY.md,
# BENCHMARKS.md): the same manifest and seed through `kbv run --jobs 1` and the default
# `kbv run` (8 jobs), each with its scratch on a small tmpfs that holds about one large
# evaluation, and the stored verdicts compared. The manifest: kbv's large example problems
# (128-256 MiB inputs) plus a 64M-element ReLU made here, with torch-only honest candidates,
# hacks and broken ones (no load_inline: the figure is admission, not compile time).
# Torch-only candidates are library_only on a GPU (a hack by default): the runs use
# --library-only info, so that each candidate's own verdict is what is compared. KBV_OPTS adds
# options to both runs (e.g. --no-timing); ENTRIES=N keeps the manifest's first N lines;
# PARALLEL=1 runs the two side by side (each on its own tmpfs) to save time. ONLY=1 or ONLY=8
# runs one of the two (the other's database already in OUTDIR); to finish a run that was cut,
# give KBV_OPTS=--resume and WORKDIR= the folder of the cut run's manifest (the runs table's
# settings name it), so that the manifest has the same path.
# Needs root (mount). Usage: scripts/jobs-small-scratch.sh OUTDIR [SCRATCH_MIB] [DEVICE]
set -u
cd "$(dirname "$0")/.."
out=${1:?usage: jobs-small-scratch.sh OUTDIR [SCRATCH_MIB] [DEVICE]}
mib=${2:-3072}
dev=${3:-cuda}
KBV=${KBV:-$PWD/kbv}
mkdir -p "$out"
if [ -n "${WORKDIR:-}" ]; then w=$WORKDIR; mkdir -p "$w"; else w=$(mktemp -d); fi
trap 'umount "$w/s1" "$w/s8" 2>/dev/null; rm -rf "$w"' EXIT
cat >"$w/relu64m.py" <<'PY'
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.randn(8192, 8192)]
def get_init_inputs():
    return []
PY
cand() { printf 'import torch\nimport torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return %s\n' "$2" >"$w/$1.py"; }
cand relu_honest 'x.clamp_min(0)'
cand relu_identity 'x.clone()'
cand relu_wrong 'x.clamp_min(0.5)'
cand scale_honest 'x * 2'
cand scale_constant 'torch.zeros_like(x)'
cand rowsum_honest 'x.sum(dim=1)'
cand rowsum_wrong 'x.sum(dim=1) + 1'
E=$PWD/examples
{
    for c in scale_honest scale_constant; do echo "{\"problem\": \"$E/problems/scale_large.py\", \"candidate\": \"$w/$c.py\"}"; done
    for c in relu_honest relu_identity relu_wrong; do echo "{\"problem\": \"$w/relu64m.py\", \"candidate\": \"$w/$c.py\"}"; done
    for c in rowsum_honest rowsum_wrong; do echo "{\"problem\": \"$E/problems/rowsum_large.py\", \"candidate\": \"$w/$c.py\"}"; done
    echo "{\"problem\": \"$E/problems/relu.py\", \"candidate\": \"$E/candidates/relu/honest_cpu.py\"}"
    echo "{\"problem\": \"$E/problems/relu.py\", \"candidate\": \"$E/hacks/identity_output.py\"}"
    echo "{\"problem\": \"$E/problems/matmul_fp32.py\", \"candidate\": \"$E/candidates/matmul_fp32/honest_cpu.py\"}"
} | head -n "${ENTRIES:-100}" >"$w/m.jsonl"
cp "$w/m.jsonl" "$out/manifest.jsonl"
one() {
    local j=$1 t0 rc
    mkdir -p "$w/s$j"
    mount -t tmpfs -o size=${mib}m tmpfs "$w/s$j" || { echo "cannot mount a tmpfs"; return 1; }
    # shellcheck disable=SC2086
    args=(run --manifest "$w/m.jsonl" --db "$out/jobs$j.db" --device "$dev" --seed 20 --time-budget 1 --library-only info
          --scratch "$w/s$j" ${KBV_OPTS:-})
    [ "$j" = 1 ] && args+=(--jobs 1)
    t0=$SECONDS
    "$KBV" "${args[@]}" >"$out/jobs$j.out" 2>&1
    rc=$?
    echo "jobs $j: exit $rc, $((SECONDS - t0)) s, scratch ${mib} MiB tmpfs" | tee -a "$out/summary.txt"
    umount "$w/s$j"
}
if [ -n "${ONLY:-}" ]; then one "$ONLY"
elif [ -n "${PARALLEL:-}" ]; then one 1 & one 8; wait
else one 1; one 8; fi
for j in 1 8; do python3 -c "
import sqlite3, sys
for k, s in sqlite3.connect(sys.argv[1]).execute('select key, status from evaluations order by key'):
    print(k[:12], k[-40:], s)
" "$out/jobs$j.db" >"$out/verdicts$j.txt" 2>&1; done
if cmp -s "$out/verdicts1.txt" "$out/verdicts8.txt"; then echo "same verdicts ($(wc -l <"$out/verdicts1.txt") stored)" | tee -a "$out/summary.txt"
else echo "VERDICTS DIFFER" | tee -a "$out/summary.txt"; diff "$out/verdicts1.txt" "$out/verdicts8.txt" | tee -a "$out/summary.txt"; fi
