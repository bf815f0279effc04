#!/usr/bin/env bash
# bench-h200.sh OUT_DIR -- the measurements behind docs/BENCHMARKS.md (issue #4), in one run on
# a GPU machine: A/A, overhead, agreement with Nsight Compute, the TF32 baselines, memory, and
# the cost of a whole evaluation. Each evaluation's JSON lands in OUT_DIR; summarise with
# scripts/bench-summary.sh OUT_DIR. Runs one evaluation at a time (timings must not overlap),
# after compiling every CUDA candidate in parallel so the cost figures have a warm cache.
# BENCH_STEPS (default "aa overhead agree tf32 memory cost") picks the parts to run.
set -u
steps=" ${BENCH_STEPS:-aa overhead agree tf32 memory cost} "
step() { [[ $steps == *" $1 "* ]]; }
out=${1:?usage: bench-h200.sh OUT_DIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
P=examples/problems
C=examples/candidates
ev() { # ev NAME PROBLEM CANDIDATE [options]
    local name=$1
    shift
    local t0=$SECONDS
    ./kbv eval "$@" --device cuda --seed 2026 --quiet --json "$out/$name.json" >"$out/$name.txt" 2>&1
    echo "$name: $(jq -r '.status' "$out/$name.json" 2>/dev/null) ($((SECONDS - t0)) s)"
}
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
# 0. compile cache: every CUDA candidate once, correctness only, in parallel
for pc in copy_scalar relu scale_large rowsum_large matmul_fp32; do
    ./kbv eval $P/$pc.py $C/$pc/honest_cuda.py --device cuda --no-timing --cases 1 --quiet --json "$tmp/w_$pc.json" >/dev/null 2>&1 &
done
wait
echo "compile cache warm: $(for f in "$tmp"/w_*.json; do jq -r .status "$f"; done | sort | uniq -c | tr '\n' ' ')"
# 1. A/A: the reference against an identical copy of itself (all library kernels: the library
#    policy is set to info so that it is timed)
#    (relu also with --prime never and with another seed: the short-call bias check)
if step aa; then
    #    (the relu variants run before the 20 ms matmul, the longest evaluation, so that a time
    #    limit cuts the matmul, not them)
    for p in relu scale_large rowsum_large conv2d_fp32 matmul_large; do
        { cat $P/$p.py; printf '\nModelNew = Model\n'; } >"$tmp/aa_$p.py"
    done
    ev aa_relu $P/relu.py "$tmp/aa_relu.py" --cases 1 --library-only info
    ev aa_relu_noprime $P/relu.py "$tmp/aa_relu.py" --cases 1 --library-only info --prime never
    ev aa_relu_seed2027 $P/relu.py "$tmp/aa_relu.py" --cases 1 --library-only info --seed 2027
    for p in scale_large rowsum_large conv2d_fp32 matmul_large; do
        ev "aa_$p" $P/$p.py "$tmp/aa_$p.py" --cases 1 --library-only info
    done
fi
# 2. overhead: a one-tiny-kernel candidate; the JSON holds kbv's time and CUPTI's kernel time
step overhead && ev overhead_copy_scalar $P/copy_scalar.py $C/copy_scalar/honest_cuda.py --cases 1
# 3. agreement with Nsight Compute's gpu__time_duration (boost clocks, caches flushed)
step agree && for pk in scale_large:scale2_kernel rowsum_large:rowsum_kernel matmul_fp32:matmul_tiled; do
    p=${pk%%:*} k=${pk#*:}
    ev "agree_$p" $P/$p.py $C/$p/honest_cuda.py --cases 1
    # (kbv's compile cache, warm from step 0, so the candidate is not built again under ncu)
    TORCH_EXTENSIONS_DIR=${XDG_CACHE_HOME:-$HOME/.cache}/kbv/torch_extensions \
    ncu --clock-control none --cache-control all --metrics gpu__time_duration.sum --launch-skip 3 --launch-count 5 \
        -k "regex:$k" --csv "$(command -v python3)" scripts/ncu-time.py $P/$p.py $C/$p/honest_cuda.py >"$out/ncu_$p.csv" 2>"$out/ncu_$p.err"
    echo "ncu $p: $(grep -c gpu__time_duration "$out/ncu_$p.csv") kernel records"
done
# 4. TF32: the strict and TF32 baselines side by side, and the standard protocol's speedup
step tf32 && ev tf32_matmul $P/matmul_fp32.py $C/matmul_fp32/honest_cuda.py --protocol both
step tf32 && ev tf32_conv $P/conv2d_fp32.py $C/conv2d_fp32/honest_cpu.py --protocol both --library-only info
# 5. memory: a raw cudaMalloc workspace
step memory && ev memory_workspace $P/relu.py $C/relu/cuda_workspace.py --cases 1
# 6. cost: whole verified evaluations, default settings, compile cache warm
step cost && ev cost_small $P/relu.py $C/relu/honest_cuda.py
step cost && ev cost_medium $P/matmul_fp32.py $C/matmul_fp32/honest_cuda.py
step cost && ev cost_large $P/conv2d_fp32.py $C/conv2d_fp32/honest_cpu.py --library-only info
echo "== done $(date -u +%FT%TZ)"
