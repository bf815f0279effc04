#!/usr/bin/env bash
# lane.sh NAME MAKE TARGET... -- one lane of `make test` (Makefile, "two lanes"): each TARGET
# through MAKE, one after the other, every line of their output prefixed with [NAME], so that
# two lanes side by side stay readable. Every target runs even after one fails; the lane then
# names each failed one and exits 1.
set -u -o pipefail
name=${1:?usage: lane.sh NAME MAKE TARGET...}
make=${2:?usage: lane.sh NAME MAKE TARGET...}
shift 2
failed=()
for t in "$@"; do
    start=$(date +%s)
    # --no-print-directory: the lane's prefix already says where a line came from.
    $make --no-print-directory "$t" 2>&1 | sed -u "s/^/[$name] /" || failed+=("$t")
    echo "[$name] $t: $(( $(date +%s) - start )) s"
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "[$name] FAILED: ${failed[*]}"
    exit 1
fi
echo "[$name] all ${#@} passed"
