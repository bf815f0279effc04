#!/usr/bin/env bash
# suite-manifest.sh -- (re)write kbv's built-in run manifests, the default of `kbv run`:
#   problems/default-cpu.jsonl   the zoo entries that run on the CPU (examples/hacks, examples/honest)
#   problems/default-cuda.jsonl  the honest CUDA candidates of kbv's suite (problems/suite.jsonl)
#                                and the whole zoo
# Models: "honest" (kbv's suite), "zoo-honest" and "zoo-hack" (examples/). Paths are relative
# to problems/. Run it after adding a zoo file or a suite candidate.
set -eu
cd "$(dirname "$0")/.."
cpu=problems/default-cpu.jsonl
gpu=problems/default-cuda.jsonl
: >"$cpu.tmp"
: >"$gpu.tmp"
[ -f problems/suite.jsonl ] && grep -v '^\s*$' problems/suite.jsonl >>"$gpu.tmp"
for f in examples/hacks/*.py examples/honest/*.py; do
    line=$(grep -m1 '^# kbv-zoo:' "$f") || continue
    problem=$(echo "$line" | sed -n 's/.*problem=\([^ ]*\).*/\1/p')
    device=$(echo "$line" | sed -n 's/.*device=\([^ ]*\).*/\1/p')
    model=zoo-hack
    case "$f" in examples/honest/*) model=zoo-honest ;; esac
    entry="{\"problem\": \"../examples/problems/$problem.py\", \"candidate\": \"../$f\", \"model\": \"$model\", \"sample\": 0}"
    echo "$entry" >>"$gpu.tmp"
    [ "$device" = cpu ] && echo "$entry" >>"$cpu.tmp"
done
mv "$cpu.tmp" "$cpu"
mv "$gpu.tmp" "$gpu"
echo "suite-manifest: $(wc -l <"$cpu") entries in $cpu, $(wc -l <"$gpu") in $gpu"
