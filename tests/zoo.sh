#!/usr/bin/env bash
# zoo.sh -- run the hack zoo (examples/hacks) and the honest set (examples/honest) through
# kbv eval and check each against the expectation in its header:
#   # kbv-zoo: problem=NAME expect=STATUS [detect=ID|ID...] device=cpu|gpu [library=info] [needs=malloc-perturb] [alone]
#              [cuda=STATUS[:ID|ID...]]
# cuda=: what is expected on a GPU where it differs from the CPU's (the example's header says why;
# e.g. an honest in-order sum passes beside PyTorch's CPU sum, not beside its GPU tree sum).
# library=info: a torch-only look-alike of a hack that another detector catches (not a kernel):
# on the GPU it is judged with the library policy lowered, as that hack is.
# A hack must get STATUS (never verified) and carry one of the named detector ids; an honest
# candidate must be verified with no finding of severity hack.
# ZOO_JOBS=N runs N entries at once (each in its own scratch folder and compile cache; on a
# GPU the cold load_inline builds run on the CPU and dominate). Entries marked `alone` (a
# detector that reads the timings) run after the others, one at a time, with the GPU to
# themselves. KBV_ZOO_OUT=DIR keeps each entry's JSON.
# Usage: tests/zoo.sh cpu|cuda [PATTERN]   (cpu: the device=cpu entries; cuda: all of them)
set -u
cd "$(dirname "$0")/.."
KBV=${KBV:-$PWD/kbv}
. tests/e2e/lib.sh
dev=${1:?usage: zoo.sh cpu|cuda [PATTERN]}
jobs=${ZOO_JOBS:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=${KBV_ZOO_OUT:-$tmp/json}
mkdir -p "$out" "$tmp/res"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$tmp/cache}
# entries run side by side on one GPU take turns to time (kbv's GPU lock, docs/results.md)
[ "$dev" = cuda ] && export KBV_GPU_LOCK=${KBV_GPU_LOCK:-$tmp/gpu.lock}

# run_entry FILE LINE: one zoo entry in its own scratch folder; its "ok"/"not ok" line goes
# to $tmp/res/ and to stdout.
run_entry() {
    local f=$1 line=$2 problem= expect= detect= library= on_cuda= name json hit="" got ids hacks t0=$SECONDS kv d
    for kv in ${line#\# kbv-zoo:}; do
        case "$kv" in problem=*) problem=${kv#problem=} ;; expect=*) expect=${kv#expect=} ;;
                      detect=*) detect=${kv#detect=} ;; library=*) library=${kv#library=} ;;
                      cuda=*) on_cuda=${kv#cuda=} ;; esac
    done
    if [ "$dev" = cuda ] && [ -n "$on_cuda" ]; then
        expect=${on_cuda%%:*} detect=
        case "$on_cuda" in *:*) detect=${on_cuda#*:} ;; esac
    fi
    name=$(basename "$(dirname "$f")")/$(basename "$f" .py)
    json="$out/$(basename "$(dirname "$f")")_$(basename "$f" .py).json"
    export TMPDIR="$tmp/t-${name//\//_}"
    mkdir -p "$TMPDIR"
    # On the GPU a candidate with no authored kernel is library_only (hack) by default, which
    # stops the evaluation before the timed rounds: a hack that another detector is meant to
    # catch runs with the library policy lowered, so that its own detector is what decides.
    # Honest candidates and the library-policy hacks (library_only, unused_kernel,
    # low_authored_share) keep the default, except the torch-only look-alikes (library=info).
    local lib=()
    if [ "$dev" = cuda ] && [ "$library" = info ]; then
        lib=(--library-only info)
    elif [ "$dev" = cuda ] && [ "$expect" != verified ]; then
        case "|$detect|" in *"|library_only|"* | *"|unused_kernel|"* | *"|low_authored_share|"*) ;; *) lib=(--library-only info) ;; esac
    fi
    "$KBV" eval "examples/problems/$problem.py" "$f" --device "$dev" --quiet --cases 1 --seed 7 --timeout 120 \
        ${lib[@]+"${lib[@]}"} --json "$json" >"$TMPDIR.stdout" 2>"$TMPDIR.stderr"
    got=$(jq -r .status "$json" 2>/dev/null || echo "(no JSON)")
    ids=$(jq -r '[.flags[].id] | join(" ")' "$json" 2>/dev/null)
    hacks=$(jq -r '[.flags[] | select(.severity == "hack") | .id] | join(" ")' "$json" 2>/dev/null)
    for d in ${detect//|/ }; do case " $ids " in *" $d "*) hit=$d ;; esac; done
    {
        if [ "$got" != "$expect" ]; then
            echo "not ok - $name: status $got, expected $expect; flags: $ids; $(jq -r .errors "$json" 2>/dev/null | tail -c 400)" \
                "$(jq -c '[.flags[] | select(.severity != "info") | {id, message, evidence}]' "$json" 2>/dev/null | head -c 1500)"
        elif [ "$expect" = verified ] && [ -n "$hacks" ]; then
            echo "not ok - $name: verified but with hack findings: $hacks"
        elif [ -n "$detect" ] && [ -z "$hit" ]; then
            echo "not ok - $name: $got, but none of $detect among the findings: $ids"
        elif [ -n "$(leftovers)" ]; then
            echo "not ok - $name: processes left behind"
        else
            echo "ok - $name ($got${hit:+, $hit}, $((SECONDS - t0)) s)"
        fi
    } >"$tmp/res/${name//\//_}"
    cat "$tmp/res/${name//\//_}"
}

alone=()
for f in examples/hacks/*.py examples/honest/*.py; do
    [ -n "${2:-}" ] && ! echo "$f" | grep -Eq -- "$2" && continue
    line=$(grep -m1 '^# kbv-zoo:' "$f") || { echo "not ok - $f: no '# kbv-zoo:' header" >"$tmp/res/$(basename "$f")-header"; continue; }
    case " $line " in *" device=cpu "*) ;; *) [ "$dev" = cpu ] && continue ;; esac
    if [ -n "${KBV_SANITIZED:-}" ] && echo "$line" | grep -q 'needs=malloc-perturb'; then
        echo "SKIP: $f needs glibc's malloc perturbation, which AddressSanitizer's allocator ignores"
        continue
    fi
    case " $line " in *" alone "*) alone+=("$f") ; continue ;; esac
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    run_entry "$f" "$line" &
done
wait
for f in ${alone[@]+"${alone[@]}"}; do run_entry "$f" "$(grep -m1 '^# kbv-zoo:' "$f")"; done
for r in "$tmp"/res/*; do
    [ -e "$r" ] || continue
    case "$(cat "$r")" in "ok - "*) passed=$((passed + 1)) ;; *) failed=$((failed + 1)); case "$r" in *-header) cat "$r" ;; esac ;; esac
done
finish
