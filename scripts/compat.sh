#!/usr/bin/env bash
# compat.sh -- run `kbv check` over KernelBench's level 1-3 problems (a checkout you supply;
# none of it is part of this repository) and keep one JSON result per problem.
# Usage: scripts/compat.sh KERNELBENCH_DIR OUT_DIR [JOBS] [extra kbv check options...]
# KERNELBENCH_DIR holds level1/ level2/ level3/ (KernelBench/ in their repository).
# COMPAT_LEVELS="level2 level3" restricts the levels and sets their order (default: all three).
# Resumable: a problem that already has a result in OUT_DIR is not checked again. A check
# that ran out of GPU memory while sharing the GPU is retried alone at the end, so that an
# out-of-memory verdict is never an artefact of the parallel jobs.
# Summarise with scripts/compat-report.sh OUT_DIR.
set -u
kb=${1:?usage: compat.sh KERNELBENCH_DIR OUT_DIR [JOBS] [options]}
out=${2:?usage: compat.sh KERNELBENCH_DIR OUT_DIR [JOBS] [options]}
jobs=${3:-4}
shift 3 2>/dev/null || shift $#
kbv=$(cd "$(dirname "$0")/.." && pwd)/kbv
mkdir -p "$out"
export kbv out
check_one='f="$1"; shift; n="$(basename "$(dirname "$f")")__$(basename "$f" .py)"
    [ -s "$out/$n.json" ] && [ "${retry:-0}" = 0 ] && exit 0
    "$kbv" check "$f" --quiet --json "$out/$n.json" "$@" >"$out/$n.log" 2>&1
    echo "$? $n" >> "$out/exit-codes.txt"'
oom() { grep -lE 'OutOfMemoryError|CUDA out of memory|out of memory' "$out"/*.json 2>/dev/null; }
for l in ${COMPAT_LEVELS:-level1 level2 level3}; do find "$kb/$l" -name '*.py' | sort; done |
    xargs -P "$jobs" -I{} bash -c "$check_one" _ {} "$@"
for j in $(oom); do
    n=$(basename "$j" .json)
    echo "compat: $n ran out of GPU memory beside other checks; again alone"
    retry=1 bash -c "$check_one" _ "$kb/${n%%__*}/${n#*__}.py" "$@"
done
echo "compat: $(ls "$out"/*.json 2>/dev/null | wc -l) problems have results in $out"
