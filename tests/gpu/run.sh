#!/usr/bin/env bash
# run.sh -- kbv's GPU end-to-end tests (make test-gpu). Skips, with a message and exit
# status 0, where no NVIDIA GPU is present. Set KBV_GPU_OUT=DIR to keep each case's JSON,
# GPU_JOBS=N to run N cases at once (each in its own scratch folder; the cold load_inline
# builds of the CUDA candidates dominate and run on the CPU).
# Usage: run.sh [PATTERN]   runs only the case lines that match the extended regex PATTERN.
# A case line may end in " @jq EXPR": the result JSON must also satisfy the jq expression.
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
out=${KBV_GPU_OUT:-$tmp/json}
jobs=${GPU_JOBS:-1}
mkdir -p "$out" "$tmp/res"
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1)}
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); TORCH_CUDA_ARCH_LIST=$TORCH_CUDA_ARCH_LIST; $jobs at once"

# run_case N STATUS RC PROBLEM CANDIDATE [OPTS...]: one case in its own scratch folder; its
# "ok"/"not ok" line goes to $tmp/res/N.
run_case() {
    local n=$1 expect=$2 status=$3 rc=$4 prob=$5 cand=$6 name got got_rc left t0=$SECONDS
    shift 6
    name="$(basename "$(dirname "$cand")")_$(basename "$cand" .py)_on_$(basename "$prob" .py)"
    export TMPDIR="$tmp/t$n"
    mkdir -p "$TMPDIR"
    "$KBV" eval "$prob" "$cand" --device cuda --quiet --seed 2026 "$@" --json "$out/$n-$name.json" \
        >"$TMPDIR.stdout" 2>"$TMPDIR.stderr"
    got_rc=$?
    got=$(jq -r .status "$out/$n-$name.json" 2>/dev/null || echo "(no JSON)")
    left=$(leftovers)
    {
        if [ "$got_rc" != "$rc" ] || [ "$got" != "$status" ]; then
            echo "not ok - $name: status $got exit $got_rc, expected $status exit $rc; $(tail -c 400 "$TMPDIR.stderr"); $(jq -r .errors "$out/$n-$name.json" 2>/dev/null | tail -c 1200)"
        elif [ -n "$expect" ] && ! jq -e "$expect" "$out/$n-$name.json" >/dev/null 2>&1; then
            echo "not ok - $name: $status as expected, but not: $expect; $(jq -c '{flags, memory, timing, speedup}' "$out/$n-$name.json" 2>/dev/null | head -c 1500)"
        elif [ -n "$left" ]; then
            echo "not ok - $name: processes left behind: $left"
            kill -9 $left 2>/dev/null
        else
            echo "ok - $name ($got, $((SECONDS - t0)) s)"
        fi
    } >"$tmp/res/$n"
    cat "$tmp/res/$n"
}

n=0
while IFS= read -r line; do
    case "$line" in ""|\#*) continue ;; esac
    expect=""
    case "$line" in *" @jq "*) expect=${line#* @jq }; line=${line%% @jq *} ;; esac
    read -r status rc prob cand opts <<<"$line"
    n=$((n + 1))
    if [ -n "${1:-}" ] && ! echo "$status $rc $prob $cand $opts" | grep -Eq -- "$1"; then continue; fi
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    # shellcheck disable=SC2086
    run_case "$n" "$expect" "$status" "$rc" "$prob" "$cand" $opts &
done < tests/gpu/cases.txt
wait
for f in "$tmp"/res/*; do
    [ -e "$f" ] || continue
    case "$(cat "$f")" in "ok - "*) passed=$((passed + 1)) ;; *) failed=$((failed + 1)) ;; esac
done
# The weight cases' redraw gives the same state on the CPU and the GPU under one run seed
# (correctness.md, "Weight cases"): constants (BatchNorm, LayerNorm) and a Linear layer's normals.
if [ -z "${1:-}" ]; then
    for pc in "tests/fixtures/weights/norm_stack.py tests/fixtures/weights/norm_stack_honest.py" \
        "examples/problems/linear_relu.py examples/candidates/linear_relu/honest_cpu.py"; do
        read -r prob cand <<<"$pc"
        name=$(basename "$prob" .py)
        for d in cpu cuda; do
            TMPDIR=$tmp "$KBV" eval "$prob" "$cand" --device $d --seed 2026 --cases 1 --library-only info --no-timing --quiet \
                --json "$tmp/redraw_${name}_$d.json" >/dev/null 2>&1
        done
        c=$(jq -r '.weights.print' "$tmp/redraw_${name}_cpu.json" 2>/dev/null) g=$(jq -r '.weights.print' "$tmp/redraw_${name}_cuda.json" 2>/dev/null)
        [ -n "$c" ] && [ "$c" != null ] && [ "$c" = "$g" ] && ok "the weight cases' redraw of $name is the same on the CPU and the GPU ($c)" ||
            not_ok "the redraw of $name on the CPU and the GPU" "cpu $c, cuda $g: $(jq -c .weights "$tmp/redraw_${name}_cuda.json" 2>/dev/null)"
    done
fi
finish
