#!/usr/bin/env bash
# compat.sh -- run `kbv check` over KernelBench's level 1-3 problems (a checkout you supply;
# none of it is part of this repository) and keep one JSON result per problem.
# Usage: scripts/compat.sh KERNELBENCH_DIR OUT_DIR [JOBS] [extra kbv check options...]
# KERNELBENCH_DIR holds level1/ level2/ level3/ (KernelBench/ in their repository).
# Summarise with scripts/compat-report.sh OUT_DIR.
set -u
kb=${1:?usage: compat.sh KERNELBENCH_DIR OUT_DIR [JOBS] [options]}
out=${2:?usage: compat.sh KERNELBENCH_DIR OUT_DIR [JOBS] [options]}
jobs=${3:-4}
shift 3 2>/dev/null || shift $#
kbv=$(cd "$(dirname "$0")/.." && pwd)/kbv
mkdir -p "$out"
export kbv out
find "$kb"/level1 "$kb"/level2 "$kb"/level3 -name '*.py' | sort |
    xargs -P "$jobs" -I{} bash -c 'f="$1"; shift; n="$(basename "$(dirname "$f")")__$(basename "$f" .py)";
        "$kbv" check "$f" --quiet --json "$out/$n.json" "$@" >"$out/$n.log" 2>&1; echo "$? $n" >> "$out/exit-codes.txt"' _ {} "$@"
echo "compat: $(wc -l < "$out/exit-codes.txt") problems checked into $out"
