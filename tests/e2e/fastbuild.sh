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

# kbv run --build fast without timing, cold: the headers build in the background while the
# first evaluations start (their builds take the stock path until the headers are there:
# build.md), the verdicts are kbv eval's above, and the headers are built when the run ends.
# A run stopped by SIGINT stops the headers' build too.
if [ "${fast[0]}" = --build ]; then
    for c in examples/candidates/relu/honest_cpp.py examples/candidates/broken/cpp_compile_error.py; do
        printf '{"problem": "%s", "candidate": "%s"}\n' "$PWD/$(problem_of "$c")" "$PWD/$c"
    done >"$tmp/run.jsonl"
    "$KBV" run --manifest "$tmp/run.jsonl" --db "$tmp/r.db" --device cpu --no-timing --seed 7 --jobs 2 --build fast \
        --cache-dir "$tmp/cr" >"$tmp/r.out" 2>"$tmp/r.err"
    rc=$?
    got=$(sqlite3 "$tmp/r.db" "select c.name || ' ' || e.status from evaluations e join candidates c on c.id = e.candidate_id order by c.name" 2>&1 | tr '\n' ' ')
    [ $rc -eq 0 ] && [ "$got" = "cpp_compile_error compile_error honest_cpp verified " ] &&
        ok "kbv run --build fast: the verdicts of kbv eval ($got)" || not_ok "kbv run --build fast" "exit $rc, stored '$got': $(tail -5 "$tmp/r.err")"
    # The first candidate's build began seconds into the run, the headers' build takes far
    # longer: built before the headers, it took the stock path (with the headers built first,
    # as before, it took the fast one).
    log=$(cat "$tmp/cr/$(sha256sum examples/candidates/relu/honest_cpp.py | cut -c1-16)"/*/kbv_build.log 2>/dev/null | head -1)
    grep -q '^stock: ' <<<"$log" && grep -q "^built " "$tmp/r.out" && ls "$tmp"/cr/pch/*/torch_ext.h.gch >/dev/null 2>&1 &&
        ok "the headers built in the background: the first build did not wait for them ($log), and they are there at the end" ||
        not_ok "headers in the background" "first build: '$log'; $(head -3 "$tmp/r.out")"
    "$KBV" run --manifest "$tmp/run.jsonl" --db "$tmp/s.db" --device cpu --no-timing --seed 7 --jobs 2 --build fast \
        --cache-dir "$tmp/cs2" >/dev/null 2>"$tmp/s.err" &
    kpid=$!
    for _ in $(seq 1 300); do grep -q "to evaluate in" "$tmp/s.err" && break; sleep 0.1; done
    sleep 2
    # (the pattern "cs2/[p]ch" does not match grep's own command line)
    running=$(grep -l "cs2/[p]ch" /proc/[0-9]*/cmdline 2>/dev/null | wc -l)
    # ... each of them 10 nicer than the run (at most 19)
    want_ni=$(awk '{n = $19 + 10; print (n > 19 ? 19 : n)}' /proc/$$/stat)
    nis=$(for f in $(grep -l "cs2/[p]ch" /proc/[0-9]*/cmdline 2>/dev/null); do awk '{print $19}' "${f%cmdline}stat" 2>/dev/null; done | sort -u | tr '\n' ' ')
    [ "$nis" = "$want_ni " ] && ok "the headers build at nice $want_ni" || not_ok "the headers build nicer than the run" "nice values seen: '$nis', want $want_ni"
    kill -INT $kpid
    wait $kpid
    rc=$?
    sleep 1
    left=$(grep -l "cs2/[p]ch" /proc/[0-9]*/cmdline 2>/dev/null | wc -l)
    [ $rc -eq 130 ] && [ "$running" -ge 1 ] && [ "$left" -eq 0 ] &&
        ok "SIGINT while the headers build: exit 130, their build stopped" ||
        not_ok "SIGINT while the headers build" "exit $rc, builders running before $running, after $left: $(tail -3 "$tmp/s.err")"
fi
# An extension torch built by the stock path and finds up to date is kept as built under
# --build fast: its objects are not compiled again with the header (on the GPU, compiles ahead
# made before the headers existed were each compiled twice: build.md, "The fallback").
L=tests/fixtures/load_once.py
"$KBV" eval examples/problems/relu.py "$L" --device cpu --no-timing --seed 7 --cache-dir "$tmp/cf" --build stock --json "$tmp/lo1.json" --quiet >/dev/null 2>&1
obj=$(find "$tmp/cf" -path '*load_once_relu/*.o' | head -1)
m1=$(stat -c %Y.%y "$obj" 2>/dev/null)
"$KBV" eval examples/problems/relu.py "$L" --device cpu --no-timing --seed 7 --cache-dir "$tmp/cf" --build fast --json "$tmp/lo2.json" --quiet >/dev/null 2>&1
m2=$(stat -c %Y.%y "$obj" 2>/dev/null)
blog=$(tail -1 "$(dirname "$obj")/kbv_build.log" 2>/dev/null)
[ "$(jq -r .status "$tmp/lo1.json" 2>/dev/null) $(jq -r .status "$tmp/lo2.json" 2>/dev/null)" = "verified verified" ] && [ -n "$m1" ] && [ "$m1" = "$m2" ] &&
    [[ $blog == "stock: built before"* ]] && ok "built by the stock path and up to date: kept under --build fast ($blog)" ||
    not_ok "an up-to-date stock build kept" "statuses $(jq -r .status "$tmp/lo1.json" "$tmp/lo2.json" 2>/dev/null | tr '\n' ' '), object $obj $m1 -> $m2, log '$blog'"
finish
