#!/usr/bin/env bash
# zoo.sh -- run the hack zoo (examples/hacks) and the honest set (examples/honest) through
# kbv eval and check each against the expectation in its header:
#   # kbv-zoo: problem=NAME expect=STATUS [detect=ID|ID...] device=cpu|gpu [needs=malloc-perturb]
# A hack must get STATUS (never verified) and carry one of the named detector ids; an honest
# candidate must be verified with no finding of severity hack.
# Usage: tests/zoo.sh cpu|cuda [PATTERN]   (cpu: the device=cpu entries; cuda: all of them)
set -u
cd "$(dirname "$0")/.."
KBV=${KBV:-$PWD/kbv}
. tests/e2e/lib.sh
dev=${1:?usage: zoo.sh cpu|cuda [PATTERN]}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TMPDIR="$tmp/t"
mkdir -p "$TMPDIR"
out=${KBV_ZOO_OUT:-$tmp/json}
mkdir -p "$out"
for f in examples/hacks/*.py examples/honest/*.py; do
    [ -n "${2:-}" ] && ! echo "$f" | grep -Eq -- "$2" && continue
    line=$(grep -m1 '^# kbv-zoo:' "$f") || { not_ok "$f" "no '# kbv-zoo:' header"; continue; }
    problem= expect= detect= device=
    for kv in ${line#\# kbv-zoo:}; do
        case "$kv" in problem=*) problem=${kv#problem=} ;; expect=*) expect=${kv#expect=} ;;
                      detect=*) detect=${kv#detect=} ;; device=*) device=${kv#device=} ;; esac
    done
    [ "$dev" = cpu ] && [ "$device" != cpu ] && continue
    if [ -n "${KBV_SANITIZED:-}" ] && echo "$line" | grep -q 'needs=malloc-perturb'; then
        echo "SKIP: $f needs glibc's malloc perturbation, which AddressSanitizer's allocator ignores"
        continue
    fi
    name=$(basename "$(dirname "$f")")/$(basename "$f" .py)
    json="$out/$(basename "$(dirname "$f")")_$(basename "$f" .py).json"
    # On the GPU a candidate with no authored kernel is library_only (hack) by default, which
    # stops the evaluation before the timed rounds: a hack that another detector is meant to
    # catch runs with the library policy lowered, so that its own detector is what decides.
    # Honest candidates and the library-policy hacks keep the default.
    lib=()
    if [ "$dev" = cuda ] && [ "$expect" != verified ]; then
        case "|$detect|" in *"|library_only|"* | *"|unused_kernel|"*) ;; *) lib=(--library-only info) ;; esac
    fi
    t0=$SECONDS
    "$KBV" eval "examples/problems/$problem.py" "$f" --device "$dev" --quiet --cases 1 --seed 7 --timeout 120 \
        ${lib[@]+"${lib[@]}"} --json "$json" >"$tmp/stdout" 2>"$tmp/stderr"
    got=$(jq -r .status "$json" 2>/dev/null || echo "(no JSON)")
    ids=$(jq -r '[.flags[].id] | join(" ")' "$json" 2>/dev/null)
    hacks=$(jq -r '[.flags[] | select(.severity == "hack") | .id] | join(" ")' "$json" 2>/dev/null)
    hit=""
    for d in ${detect//|/ }; do case " $ids " in *" $d "*) hit=$d ;; esac; done
    if [ "$got" != "$expect" ]; then
        not_ok "$name" "status $got, expected $expect; flags: $ids; $(jq -r .errors "$json" 2>/dev/null | tail -c 400)"
    elif [ "$expect" = verified ] && [ -n "$hacks" ]; then
        not_ok "$name" "verified but with hack findings: $hacks"
    elif [ -n "$detect" ] && [ -z "$hit" ]; then
        not_ok "$name" "$got, but none of $detect among the findings: $ids"
    elif [ -n "$(leftovers)" ]; then
        not_ok "$name" "processes left behind"
    else
        ok "$name ($got${hit:+, $hit}, $((SECONDS - t0)) s)"
    fi
done
finish
