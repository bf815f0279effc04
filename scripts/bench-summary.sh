#!/usr/bin/env bash
# bench-summary.sh OUT_DIR -- the tables of docs/BENCHMARKS.md from a scripts/bench-h200.sh run.
set -u
d=${1:?usage: bench-summary.sh OUT_DIR}
r3() { awk -v x="$1" 'BEGIN { printf "%.3f", x }'; }
echo "### A/A (reference vs an identical copy)"
echo "| run | reference median (ms) | speedup | 95% CI | CI width | rounds | primed | stop | graph |"
echo "|---|---|---|---|---|---|---|---|---|"
for f in "$d"/aa_*.json; do
    [ -e "$f" ] || continue
    jq -r --arg run "$(basename "$f" .json)" '"| \($run) | \(.time_ms.reference.median) | \(.speedup.value) | [\(.speedup.ci95[0]), \(.speedup.ci95[1])] | \((.speedup.ci95[1] - .speedup.ci95[0]) / .speedup.value) | \(.timing.rounds) | \(.timing.primed) | \(.timing.stop) | \(.speedup_graph.value // .speedup_graph) |"' "$f"
done
echo
echo "### Overhead"
jq -r '"kbv candidate median \(.time_ms.candidate.median) ms; CUPTI kernels: \([.audit.candidate.kernels[] | "\(.name) \(.count)x \(.ns) ns"] | join(", ")); graph replay \(.time_ms.candidate_graph.median) ms"' "$d"/overhead_copy_scalar.json
echo
echo "### Agreement with Nsight Compute"
for f in "$d"/agree_*.json; do
    p=$(jq -r .problem.name "$f")
    jq -r '"\(.problem.name): kbv median \(.time_ms.candidate.median) ms, CUPTI \([.audit.candidate.kernels[] | select(.authored) | .ns] | add) ns"' "$f"
    echo "  ncu gpu__time_duration: $(grep gpu__time_duration "$d/ncu_$p.csv" | awk -F'","' '{print $(NF-1) " " $NF}' | tr -d '"' | tr '\n' ';')"
done
echo
echo "### TF32 and the two protocols"
for f in "$d"/tf32_*.json; do
    jq -r '"\(.problem.name) / \(.candidate.name): reference TF32 \(.time_ms.reference.median) ms, strict \(.time_ms.reference_strict.median) ms (strict/TF32 \(.time_ms.reference_strict.median / .time_ms.reference.median)); candidate \(.time_ms.candidate.median) ms; verified speedup \(.speedup.value) [\(.speedup.ci95[0]), \(.speedup.ci95[1])], vs strict \(.speedup_strict.value); standard (KernelBench) speedup \(.standard.speedup) (ref \(.standard.time_ms.reference) ms, cand \(.standard.time_ms.candidate) ms)"' "$f"
done
echo
echo "### Memory"
jq -r '"peak over the call: candidate \(.memory.peak_bytes_candidate) B (CUPTI) vs torch \(.memory.torch.peak_bytes_candidate) B; reference \(.memory.peak_bytes_reference) B (CUPTI), torch \(.memory.torch.peak_bytes_reference) B; persistent: candidate \(.memory.persistent_bytes_candidate), reference \(.memory.persistent_bytes_reference)"' "$d"/memory_workspace.json
echo
echo "### Cost of one verified evaluation (compile cache warm)"
for f in "$d"/cost_*.json; do
    jq -r '"\(.problem.name) / \(.candidate.name): \(.status), wall \(.wall_s) s (timing phase \(.timing.time_s) s, \(.timing.rounds) rounds, \(.timing.stop))"' "$f"
done
