#!/usr/bin/env bash
# kill_resume.sh -- crash safety of kbv itself (docs/RELIABILITY.md). Runs a manifest once
# without interruption; then runs it again, killing `kbv run` with SIGKILL at KILLS (default
# 24) random moments and resuming after each, alternating one and two evaluations at a time.
# Checks after every kill that no worker and no child kbv outlives it, and at the end that
# every evaluation is stored exactly once and that the report equals the uninterrupted run's.
# KILL_SEED fixes the moments (default: random, printed).
set -u
cd "$(dirname "$0")/../.."
KBV=${KBV:-$PWD/kbv}
. tests/e2e/lib.sh
kills=${KILLS:-24}
seed=${KILL_SEED:-$RANDOM}
RANDOM=$seed
new_tmp
E=$PWD/examples
opts="--device cpu --cases 1 --seed 5 --no-timing --quiet"
m=$tmp/run.jsonl
for s in 0 1 2; do
    for pc in relu:relu/honest_cpu.py relu:shortcuts/relu_identity.py matmul_fp32:matmul_fp32/honest_cpu.py \
        relu:broken/syntax_error.py relu:broken/segfault.py relu:broken/raise_in_forward.py; do
        printf '{"problem": "%s/problems/%s.py", "candidate": "%s/candidates/%s", "model": "m%s", "sample": %s}\n' \
            "$E" "${pc%%:*}" "$E" "${pc#*:}" "$s" "$s"
    done
done >"$m"
total=$(wc -l <"$m")
echo "kill moments from seed $seed; $total evaluations; $kills kills"

# Processes of this test still alive: workers (their folders are in $TMPDIR) and kbv itself.
survivors() {
    local p
    for p in /proc/[0-9]*; do
        case "$(readlink "$p/cwd" 2>/dev/null)" in "$TMPDIR"/*) echo "${p#/proc/}" ;; esac
    done
    pgrep -f "kbv run --manifest $m" || true
}

t0=$SECONDS
"$KBV" run --manifest "$m" --db "$tmp/full.db" $opts 2>"$tmp/full.err"
"$KBV" report --db "$tmp/full.db" --format json >"$tmp/full.json"
full_s=$((SECONDS - t0))
if jq -e ".evaluations == {\"stored\": $total, \"distinct\": $total}" "$tmp/full.json" >/dev/null; then
    ok "uninterrupted run: $total evaluations in $full_s s"
else not_ok "uninterrupted run" "$(jq -c .evaluations "$tmp/full.json") $(tail -c 300 "$tmp/full.err")"; fi

left_after=0 done_early=0 resumes=0
for k in $(seq 1 "$kills"); do
    jobs=$((k % 2 + 1))
    resume=--resume
    [ "$k" = 1 ] && resume=
    "$KBV" run --manifest "$m" --db "$tmp/kill.db" $opts --jobs $jobs $resume 2>>"$tmp/kill.err" &
    pid=$!
    # A moment from 0.05 s to 3 s: start-up, a worker's load, a forward, a commit.
    sleep "$(printf '%d.%02d' $((RANDOM % 3)) $((RANDOM % 95 + 5)))"
    if kill -0 $pid 2>/dev/null; then
        kill -9 $pid
        wait $pid 2>/dev/null
        resumes=$((resumes + 1))
    else
        wait $pid 2>/dev/null
        done_early=$((done_early + 1))
    fi
    # Workers notice kbv's death (PR_SET_PDEATHSIG) and die with their namespaces.
    for _ in $(seq 1 30); do [ -z "$(survivors)" ] && break; sleep 0.1; done
    s=$(survivors)
    if [ -n "$s" ]; then
        left_after=$((left_after + 1))
        echo "after kill $k: left $(for p in $s; do tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-80; echo; done)"
        kill -9 $s 2>/dev/null
    fi
done
"$KBV" run --manifest "$m" --db "$tmp/kill.db" $opts --resume 2>>"$tmp/kill.err"
rc=$?
"$KBV" report --db "$tmp/kill.db" --format json >"$tmp/kill.json"
if [ "$left_after" = 0 ]; then
    ok "$resumes kills with SIGKILL (and $done_early runs that finished first): no worker or child outlived kbv"
else not_ok "survivors" "$left_after kills left processes behind"; fi
if [ "$rc" = 0 ] && jq -e ".evaluations == {\"stored\": $total, \"distinct\": $total}" "$tmp/kill.json" >/dev/null; then
    ok "after the kills and a last --resume: $total evaluations, each stored exactly once"
else not_ok "stored once" "exit $rc $(jq -c .evaluations "$tmp/kill.json") $(tail -c 400 "$tmp/kill.err")"; fi
if [ "$(jq -S 'del(.evaluations, .runs)' "$tmp/kill.json")" = "$(jq -S 'del(.evaluations, .runs)' "$tmp/full.json")" ]; then
    ok "the report equals the uninterrupted run's"
else not_ok "report" "$(diff <(jq -S 'del(.evaluations, .runs)' "$tmp/full.json") <(jq -S 'del(.evaluations, .runs)' "$tmp/kill.json") | head -20)"; fi
[ "$resumes" -ge 20 ] || not_ok "kill count" "only $resumes of $kills kills hit a running kbv (at least 20 wanted)"
finish
