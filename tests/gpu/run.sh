#!/usr/bin/env bash
# run.sh -- kbv's GPU end-to-end tests (make test-gpu). Skips, with a message and exit
# status 0, where no NVIDIA GPU is present. Set KBV_GPU_OUT=DIR to keep each case's JSON.
# Usage: run.sh [PATTERN]   runs only the case lines that match the extended regex PATTERN.
set -u
cd "$(dirname "$0")/../.."
KBV=${KBV:-$PWD/kbv}
. tests/e2e/lib.sh
if [ ! -e /dev/nvidiactl ] || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "SKIP: no NVIDIA GPU on this machine (no /dev/nvidiactl or nvidia-smi fails); GPU tests not run"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TMPDIR="$tmp/t"
mkdir -p "$TMPDIR"
out=${KBV_GPU_OUT:-$tmp/json}
mkdir -p "$out"
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1)}
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); TORCH_CUDA_ARCH_LIST=$TORCH_CUDA_ARCH_LIST"
n=0
while read -r status rc prob cand opts; do
    case "$status" in ""|\#*) continue ;; esac
    n=$((n + 1))
    if [ -n "${1:-}" ] && ! echo "$status $rc $prob $cand $opts" | grep -Eq -- "$1"; then continue; fi
    name="$(basename "$(dirname "$cand")")_$(basename "$cand" .py)_on_$(basename "$prob" .py)"
    t0=$SECONDS
    # shellcheck disable=SC2086
    "$KBV" eval "$prob" "$cand" --device cuda --quiet --seed 2026 $opts --json "$out/$n-$name.json" \
        >"$tmp/stdout" 2>"$tmp/stderr"
    got_rc=$?
    got=$(jq -r .status "$out/$n-$name.json" 2>/dev/null || echo "(no JSON)")
    left=$(leftovers)
    if [ "$got_rc" != "$rc" ] || [ "$got" != "$status" ]; then
        not_ok "$name" "status $got exit $got_rc, expected $status exit $rc; $(tail -c 400 "$tmp/stderr"); $(jq -r .errors "$out/$n-$name.json" 2>/dev/null | tail -c 1200)"
    elif [ -n "$left" ]; then
        not_ok "$name" "processes left behind: $left"
        kill -9 $left 2>/dev/null
    else
        ok "$name ($got, $((SECONDS - t0)) s)"
    fi
done < tests/gpu/cases.txt
finish
