#!/usr/bin/env bash
# run.sh -- the fault-injection suite (docs/RELIABILITY.md). Usage: run.sh cpu|cuda [PATTERN]
# cpu runs the faults of cases.txt marked cpu with --device cpu (CI); cuda runs them all
# with --device cuda (skipped, with a message, where no GPU is present). For each fault:
# the verdict and its evidence, no process left behind, and an honest evaluation right after
# it that must be verified. Then one `kbv run` over faults and honest entries, interleaved,
# that must store every verdict and go on. FAULTS_TABLE=FILE writes the results as a
# Markdown table. FAULTS_CASES=FILE reads another list in the same format, with a seventh
# field CHECK (a shell test run after the evaluation, with $out, $json, $dt and $scratch set):
# the attack suite (tests/attacks/run.sh); the `kbv run` is then left out.
set -u
cd "$(dirname "$0")/../.."
KBV=${KBV:-$PWD/kbv}
. tests/e2e/lib.sh
mode=${1:?usage: run.sh cpu|cuda [PATTERN]}
pattern=${2:-}
if [ "$mode" = cuda ] && { [ ! -e /dev/nvidiactl ] || ! nvidia-smi -L >/dev/null 2>&1; }; then
    echo "SKIP: no NVIDIA GPU on this machine; the GPU faults were not run"
    exit 0
fi
tmp=$(mktemp -d)
export TMPDIR="$tmp/t"
mkdir -p "$TMPDIR/scratch" "$tmp/net"
# A fault whose name ends in _shm runs with its scratch folders under /dev/shm (where a GPU
# machine may keep TMPDIR), so that no rule about /dev/ paths hides it.
shm=$(mktemp -d /dev/shm/kbv-faults.XXXXXX 2>/dev/null) && mkdir -p "$shm/scratch" || shm=
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$tmp/cache}
listener=
cleanup() {
    [ -n "$listener" ] && kill "$listener" 2>/dev/null
    rm -rf "$tmp" ${shm:+"$shm"}
}
trap cleanup EXIT
table=${FAULTS_TABLE:-$tmp/table.md}
printf '| fault | device | verdict | evidence (first line of the errors, or the flags) | s |\n|---|---|---|---|---|\n' >"$table"
P=examples/problems/relu.py
honest=examples/candidates/relu/honest_cpu.py
[ "$mode" = cuda ] && honest=examples/candidates/relu/honest_cuda.py

# Every process whose working folder is in this suite's temporary folder: workers, and
# whatever they forked, run in their scratch folders.
strays() {
    local p
    for p in /proc/[0-9]*; do
        case "$(readlink "$p/cwd" 2>/dev/null)" in "$tmp" | "$tmp"/* | "${shm:-$tmp}"/*) echo "${p#/proc/} $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | cut -c1-60)" ;; esac
    done
}

# The network fault's target: a listener on a free local port that records any connection.
/usr/bin/python3 - "$tmp/net" <<'EOF' &
import os, socket, sys
d = sys.argv[1]
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(os.path.join(d, "KBV_FAULT_PORT.tmp"), "w").write(str(s.getsockname()[1]))
os.rename(os.path.join(d, "KBV_FAULT_PORT.tmp"), os.path.join(d, "KBV_FAULT_PORT"))
while True:
    c, _ = s.accept()
    open(os.path.join(d, "CONNECTED"), "a").write("connection\n")
    c.close()
EOF
listener=$!
for _ in $(seq 100); do [ -e "$tmp/net/KBV_FAULT_PORT" ] && break; sleep 0.1; done
sed "s/^_PORT = 9 /_PORT = $(cat "$tmp/net/KBV_FAULT_PORT") /" tests/faults/network.py >"$tmp/net/network.py"

dev=cpu
[ "$mode" = cuda ] && dev=cuda
while IFS= read -r line; do
    case "$line" in '#'* | '') continue ;; esac
    IFS=';' read -r name _ fdev _ want _ evidence _ cand _ opts _ check <<<"$(sed 's/ *;; */;;/g' <<<"$line")"
    name=$(echo $name) fdev=$(echo $fdev) want=$(echo $want)
    [ "$mode" = cpu ] && [ "$fdev" != cpu ] && [ "$fdev" != cpu_only ] && continue
    [ "$mode" = cuda ] && [ "$fdev" = cpu_only ] && continue # e.g. a memory limit too small for CUDA to start
    [ -n "$pattern" ] && ! [[ $name =~ $pattern ]] && continue
    [ "$name" = network ] && cand=$tmp/net/network.py
    if [ "$name" = host_oom ] && [ -n "${KBV_SANITIZED:-}" ]; then
        echo "SKIP: host_oom: a sanitized build has no data limit (AddressSanitizer reserves terabytes of shadow memory)"
        continue
    fi
    scratch=$TMPDIR/scratch
    if [[ $name == *_shm ]]; then
        [ -n "$shm" ] || { echo "SKIP: $name: /dev/shm is not writable here"; continue; }
        scratch=$shm/scratch
    fi
    t0=$SECONDS
    # shellcheck disable=SC2086
    "$KBV" eval "$P" "$cand" --device "$dev" --quiet --no-timing --cases 1 --seed 11 --timeout 60 \
        --scratch "$scratch" --json "$tmp/$name.json" $opts >"$tmp/$name.out" 2>"$tmp/$name.err"
    rc=$?
    dt=$((SECONDS - t0))
    got=$(jq -r .status "$tmp/$name.json" 2>/dev/null || echo "(no JSON)")
    left=$(strays)
    # These need Landlock, which a machine may not give (and CUDA workers do not get yet:
    # docs/security.md): said, not failed.
    fs=$(jq -r '.sandbox.filesystem // "none"' "$tmp/$name.json" 2>/dev/null)
    case " write_outside write_outside_shm read_reference delete_scratch " in *" $name "*)
        if [[ $fs != landlock* ]]; then
            echo "SKIP: $name: the candidate's worker had no Landlock ($fs)"
            printf '| %s | %s | (skipped: no Landlock) | %s | %s |\n' "$name" "$dev" "$fs" "$((SECONDS - t0))" >>"$table"
            continue
        fi ;;
    esac
    why=
    if ! [[ $got =~ ^($want)$ ]]; then
        # what a verdict decided by timing rests on, so that a failure on a loaded machine says why
        why="verdict $got (exit $rc), expected $want; $(jq -r .errors "$tmp/$name.json" 2>/dev/null | tail -c 600) $(tail -c 300 "$tmp/$name.err"); flags: $(jq -c '[.flags[].id]' "$tmp/$name.json" 2>/dev/null); timing: $(jq -c '.timing | if . == null then null else {stop, note, rounds, speedup: .speedup, wall: (.wall // null)} end' "$tmp/$name.json" 2>/dev/null | cut -c1-700)"
    elif ! jq -e "$evidence" "$tmp/$name.json" >/dev/null 2>&1; then
        why="verdict $got but the evidence does not satisfy: $evidence; errors: $(jq -r .errors "$tmp/$name.json" | tail -c 600); flags: $(jq -c '[.flags[].id]' "$tmp/$name.json"); speedup: $(jq -c '.speedup' "$tmp/$name.json"); wall: $(jq -c '.timing.wall' "$tmp/$name.json" 2>/dev/null | cut -c1-400)"
    elif [ -n "$left" ]; then
        why="processes left behind: $(echo $left | cut -c1-300)"
    elif [ "$name" = network ] && [ -e "$tmp/net/CONNECTED" ]; then
        why="the candidate reached the listener on 127.0.0.1"
    elif [[ $name == write_outside* ]] && ls "$scratch"/kbv-fault-planted.txt >/dev/null 2>&1; then
        why="the candidate wrote outside its scratch folder"
    elif [ -n "${check// /}" ] && ! (out=$tmp/$name.out json=$tmp/$name.json && eval "$check") >/dev/null 2>&1; then
        why="verdict $got, but the check failed: $check"
    fi
    # The next evaluation must run normally.
    if [ -z "$why" ]; then
        "$KBV" eval "$P" "$honest" --device "$dev" --quiet --no-timing --cases 1 --seed 11 \
            --scratch "$TMPDIR/scratch" --json "$tmp/next.json" >/dev/null 2>"$tmp/next.err"
        next=$(jq -r .status "$tmp/next.json" 2>/dev/null || echo "(no JSON)")
        [ "$next" = verified ] || why="the honest evaluation after it was $next: $(tail -c 300 "$tmp/next.err")"
    fi
    ev=$(jq -r '(.errors | split("\n") | map(select(length > 0)) | .[0] // "") as $e | if $e == "" then ([.flags[] | .id] | join(", ")) else $e end' \
        "$tmp/$name.json" 2>/dev/null | cut -c1-160 | sed 's/|/\\|/g')
    printf '| %s | %s | %s | %s | %s |\n' "$name" "$dev" "$got" "$ev" "$dt" >>"$table"
    if [ -z "$why" ]; then ok "$name: $got ($dt s)"; else not_ok "$name" "$why"; fi
done <"${FAULTS_CASES:-tests/faults/cases.txt}"

# One kbv run: faults and honest entries interleaved; every verdict stored, the run goes on.
if [ -z "$pattern" ] && [ "$mode" = cpu ] && [ -z "${FAULTS_CASES:-}" ]; then
    m=$tmp/faults.jsonl
    : >"$m"
    k=0
    for c in examples/candidates/broken/segfault.py tests/faults/close_control_pipe.py tests/faults/fork_storm.py \
        tests/faults/read_reference.py; do
        k=$((k + 1))
        printf '{"problem": "%s", "candidate": "%s", "sample": %d}\n{"problem": "%s", "candidate": "%s", "sample": %d}\n' \
            "$PWD/$P" "$PWD/$c" $k "$PWD/$P" "$PWD/$honest" $k >>"$m"
    done
    "$KBV" run --manifest "$m" --db "$tmp/faults.db" --device cpu --no-timing --cases 1 --quiet --timeout 60 \
        --scratch "$TMPDIR/scratch" >"$tmp/run.out" 2>&1
    rc=$?
    "$KBV" report --db "$tmp/faults.db" --format json >"$tmp/report.json" 2>>"$tmp/run.out"
    q() { /usr/bin/python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$tmp/faults.db" "$1" 2>/dev/null || echo 0; }
    stored=$(q 'select count(*) from evaluations')
    honest_ok=$(q "select count(*) from evaluations where status = 'verified'")
    left=$(strays)
    if [ "$rc" = 0 ] && [ "$stored" = 8 ] && [ "$honest_ok" -ge 4 ] && [ -z "$left" ]; then
        ok "kbv run over 4 faults and 4 honest entries: 8 stored, $honest_ok verified, nothing left behind"
    else
        not_ok "kbv run over faults" "exit $rc, $stored stored, $honest_ok verified, left: $left; $(tail -c 600 "$tmp/run.out")"
    fi
fi
echo "results table: $table"
[ -n "${FAULTS_TABLE:-}" ] || cat "$table"
finish
