#!/usr/bin/env bash
# fastbuild.sh -- the fast load_inline build (docs/build.md): every CPU candidate of examples/
# whose load_inline has cpp_sources and no cuda_sources, evaluated with the stock build and
# with the fast one (cold caches of their own), must give the same status and the same errors,
# case by case; the fast one must have used kbv's precompiled header (its build log says
# "fast:", and -Werror=invalid-pch would have failed it otherwise); the build-time ratio is
# printed. The precompiled header is built first by kbv-worker --build-pch (minutes, once).
# Usage: KBV=/path/to/kbv tests/e2e/fastbuild.sh
set -u
cd "$(dirname "$0")/../.."
KBV=${KBV:-$PWD/kbv}
WORKER=${KBV_WORKER:-$(dirname "$KBV")/kbv-worker}
. tests/e2e/lib.sh
new_tmp

if ! "$WORKER" --help 2>&1 | grep -q -- --build-pch; then
    ok "skipped: this kbv-worker has no --build-pch (docs/build.md, integration)"
    finish
    exit
fi
# kbv --build fast finds its headers beside the candidates' folders: CACHE/pch
PCH=$tmp/cf/pch
if "$WORKER" --build-pch "$PCH" >"$tmp/pch.log" 2>&1 && ls "$PCH"/*/torch_ext.h.gch >/dev/null 2>&1; then
    ok "kbv-worker --build-pch: $(grep -c '^built\|^kept' "$tmp/pch.log") header(s) under $PCH"
else not_ok "build-pch" "$(tail -c 800 "$tmp/pch.log")"; fi
find "$PCH" -type f -perm /222 | grep -q . && not_ok "pch read-only" "$(find "$PCH" -type f -perm /222)"

# The fast build through kbv's switch where it has one, else through the worker's environment.
if "$KBV" eval --help 2>&1 | grep -q -- '--build '; then fast=(--build fast) stock=()
else
    stock=(--no-sandbox)
    printf '#!/bin/sh\nKBV_BUILD=fast KBV_PCH_DIR=%s exec %s "$@"\n' "$PCH" "$WORKER" >"$tmp/worker-fast"
    chmod +x "$tmp/worker-fast"
    fast=(--no-sandbox)
fi

# problem of a candidate: from tests/e2e/cases.txt, else its kbv-zoo line.
problem_of() {
    local p
    p=$(awk -v c="$1" '$4 == c {print $3; exit}' tests/e2e/cases.txt)
    [ -z "$p" ] && p=$(sed -n 's/.*kbv-zoo: problem=\([^ ]*\).*/examples\/problems\/\1.py/p' "$1" | head -1)
    echo "$p"
}

n=0
for cand in $(grep -rl 'load_inline' examples --include='*.py' | xargs grep -L 'cuda_sources' | sort); do
    prob=$(problem_of "$cand")
    [ -f "$prob" ] || { not_ok "$cand" "no problem found for it"; continue; }
    n=$((n + 1))
    name=$(basename "$cand" .py)
    s0=$(date +%s.%N)
    "$KBV" eval "$prob" "$cand" --device cpu --no-timing --seed 7 --cache-dir "$tmp/cs" --json "$tmp/stock-$n.json" --quiet \
        "${stock[@]}" >/dev/null 2>&1
    s1=$(date +%s.%N)
    if [ "${fast[0]}" = --build ]; then
        "$KBV" eval "$prob" "$cand" --device cpu --no-timing --seed 7 --cache-dir "$tmp/cf" --json "$tmp/fast-$n.json" --quiet \
            "${fast[@]}" >/dev/null 2>&1
    else
        KBV_WORKER=$tmp/worker-fast "$KBV" eval "$prob" "$cand" --device cpu --no-timing --seed 7 --cache-dir "$tmp/cf" \
            --json "$tmp/fast-$n.json" --quiet "${fast[@]}" >/dev/null 2>&1
    fi
    s2=$(date +%s.%N)
    q='{status, errors, cases: [.cases[]? | {passed, evaluated, skipped, accuracy_class, max_abs_err, max_rel_err}]}'
    # The cache folders' names are as long as each other, so that any truncation of an error
    # text falls at the same place; then both are named CACHE.
    a=$(jq -cS "$q" "$tmp/stock-$n.json" 2>&1 | sed "s#$tmp/cs#CACHE#g")
    b=$(jq -cS "$q" "$tmp/fast-$n.json" 2>&1 | sed "s#$tmp/cf#CACHE#g")
    sha=$(sha256sum "$cand" | cut -c1-16)
    log=$(cat "$tmp/cf/$sha"/*/kbv_build.log 2>/dev/null)
    if [ "$a" != "$b" ]; then not_ok "$name: same verdict and errors" "stock $a | fast $b"
    elif ! grep -q '^fast: ' <<<"$log" && [ "$(jq -r .status "$tmp/stock-$n.json")" != compile_error ]; then
        not_ok "$name: fast path used" "build log: $log"
    else
        ok "$name: $(jq -r .status "$tmp/stock-$n.json") both ways, same errors; eval $(awk -v a="$s0" -v b="$s1" 'BEGIN {printf "%.1f", b - a}') s stock, $(awk -v a="$s1" -v b="$s2" 'BEGIN {printf "%.1f", b - a}') s fast; $(head -1 <<<"$log")"
    fi
done
[ "$n" -ge 2 ] || not_ok "candidates" "found $n CPU load_inline candidates, want at least 2"
finish
