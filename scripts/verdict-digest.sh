#!/usr/bin/env bash
# verdict-digest.sh -- what kbv decides on every CPU end-to-end case and zoo entry, as one
# line each, so that two builds can be compared (a refactor must leave it unchanged):
#   NAME  STATUS  accuracy=CLASS  cases=P/F/S  findings=ID:SEVERITY,...
# Runs `kbv eval` exactly as tests/e2e/run.sh and tests/zoo.sh do (seed 7, one case per
# distribution). Timing-derived figures are left out: they differ between any two runs.
# Usage: KBV=/path/to/kbv scripts/verdict-digest.sh OUT.txt   (JOBS=N entries at once)
set -u
cd "$(dirname "$0")/.."
KBV=${KBV:-$PWD/kbv}
out=${1:?usage: verdict-digest.sh OUT.txt}
jobs=${JOBS:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$tmp/cache}

# one NAME PROBLEM CANDIDATE [OPTIONS...]
one() {
    local name=$1 prob=$2 cand=$3 key
    shift 3
    key=$(printf '%s' "$name" | tr -c 'A-Za-z0-9_.-' '_')
    mkdir -p "$tmp/s/$key"
    TMPDIR="$tmp/s/$key" "$KBV" eval "$prob" "$cand" --device cpu --quiet --timeout 120 --cases 1 --seed 7 \
        --json "$tmp/$key.json" "$@" >/dev/null 2>&1
    jq -r --arg n "$name" '[$n, .status, "accuracy=\(.accuracy_class // "-")",
        "cases=\([.cases[]? | select(.passed == true)] | length)/\([.cases[]? | select(.passed == false and (.skipped | not))] | length)/\([.cases[]? | select(.skipped == true)] | length)",
        "findings=\([.flags[]? | "\(.id):\(.severity)"] | sort | unique | join(","))"] | join("  ")' \
        "$tmp/$key.json" >"$tmp/$key.line" 2>/dev/null || echo "$name  (no JSON)" >"$tmp/$key.line"
}

n=0
while read -r status rc prob cand opts; do
    case "$status" in ""|\#*) continue ;; esac
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    # shellcheck disable=SC2086
    one "e2e:$n:$(basename "$cand") on $(basename "$prob") $opts" "$prob" "$cand" $opts &
    n=$((n + 1))
done < tests/e2e/cases.txt
for f in examples/hacks/*.py examples/honest/*.py; do
    line=$(grep -m1 '^# kbv-zoo:' "$f") || continue
    case " $line " in *" device=cpu "*) ;; *) continue ;; esac
    problem=$(echo "$line" | sed -n 's/.*problem=\([^ ]*\).*/\1/p')
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    one "zoo:$(basename "$(dirname "$f")")/$(basename "$f")" "examples/problems/$problem.py" "$f" &
done
wait
cat "$tmp"/*.line | sort >"$out"
echo "verdict-digest: $(wc -l <"$out") lines in $out"
