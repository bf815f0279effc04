#!/usr/bin/env bash
# slurm.sh -- kbv slurm on a real Slurm cluster of one node, started here (docs/cluster.md).
# Starts munged, slurmctld and slurmd from Debian's packages (slurm-wlm, munge) on localhost,
# CPU only, with their configuration, keys, state and logs in a temporary folder; runs a
# 9-entry CPU manifest as a job array of 3 shards with kbv slurm; kills one task's kbv run
# with SIGKILL after it stored an evaluation, then replaces the manifest; and checks that kbv
# slurm submits that task again, that the merged database equals an unsharded kbv run of the
# same manifest and seed
# (nothing lost, nothing twice), and that the seed is in no job script, log, `scontrol show
# job` or command line. Before that, without Slurm: the seed file's checks, kbv merge's
# refusal of shards of different runs, and kbv slurm's error where Slurm is missing.
# Needs root (slurmd runs the jobs); skips with a message where Slurm's daemons are absent.
# SLURM_TEST_KEEP=1 keeps the temporary folder (its path is printed).
set -u
cd "$(dirname "$0")/../.."
KBV=${KBV:-$PWD/kbv}
. tests/e2e/lib.sh
new_tmp
E=$PWD/examples
daemons=() sweep_pid=
cleanup() {
    [ -n "$sweep_pid" ] && kill "$sweep_pid" 2>/dev/null
    if [ -n "${SLURM_CONF:-}" ] && [ ${#daemons[@]} -gt 0 ]; then # no job of this cluster outlives it
        scancel --user="$(id -un)" 2>/dev/null
        for _ in $(seq 1 50); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.2; done
    fi
    local p
    for p in "${daemons[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${daemons[@]}"; do
        for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$p" 2>/dev/null
    done
    if [ "${SLURM_TEST_KEEP:-0}" = 1 ]; then echo "# kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
seed=918273645519 # long enough never to turn up by chance in a log
opts="--device cpu --cases 1 --no-timing"
mkdir -p "$tmp/m"
ln -s "$E" "$tmp/m/ex"
for s in 0 1 2; do
    echo "{\"problem\": \"ex/problems/relu.py\", \"candidate\": \"ex/candidates/relu/honest_cpu.py\", \"model\": \"alpha\", \"sample\": $s, \"level\": 1}"
    echo "{\"problem\": \"ex/problems/relu.py\", \"candidate\": \"ex/candidates/shortcuts/relu_identity.py\", \"model\": \"beta\", \"sample\": $s, \"level\": 1}"
    echo "{\"problem\": \"ex/problems/matmul_fp32.py\", \"candidate\": \"ex/candidates/matmul_fp32/honest_cpu.py\", \"model\": \"alpha\", \"sample\": $s, \"level\": 2}"
done >"$tmp/m/run.jsonl"
head -1 "$tmp/m/run.jsonl" >"$tmp/m/one.jsonl"

# --- the seed file (kbv run --seed-file) ------------------------------------------------------------
check() { check_exit "$@"; }
echo "$seed" >"$tmp/seed"
chmod 644 "$tmp/seed"
check "--seed-file readable by others: refused" 2 "others may read or write it; the seed is secret: chmod 600" -- \
    run --manifest "$tmp/m/one.jsonl" --db "$tmp/x.db" --seed-file "$tmp/seed" $opts
chmod 600 "$tmp/seed"
cp -p "$tmp/seed" "$tmp/seed.other" && chown nobody "$tmp/seed.other" 2>/dev/null &&
    check "--seed-file of another user: refused" 2 "owned by another user" -- run --manifest "$tmp/m/one.jsonl" --seed-file "$tmp/seed.other"
ln -s "$tmp/seed" "$tmp/seed.link"
check "--seed-file through a symbolic link: refused" 2 "a symbolic link" -- run --manifest "$tmp/m/one.jsonl" --seed-file "$tmp/seed.link"
printf 'seed=5\n' >"$tmp/seed.bad" && chmod 600 "$tmp/seed.bad"
check "--seed-file holding anything but a number: refused" 2 "needs one non-negative integer" -- run --manifest "$tmp/m/one.jsonl" --seed-file "$tmp/seed.bad"
[ -e "$tmp/x.db" ] && not_ok "seed file" "a refused --seed-file left a database behind"

# --- kbv merge: shards of one run only ----------------------------------------------------------------
# One entry in two shards: one shard evaluates it, the other records its run and nothing else.
one() { "$KBV" run --manifest "$tmp/m/one.jsonl" --quiet $opts "$@" 2>>"$tmp/one.err"; }
one --db "$tmp/a.db" --shard 0/2 --seed-file "$tmp/seed"
one --db "$tmp/b.db" --shard 1/2 --seed 7
one --db "$tmp/c.db" --shard 1/2 --seed-file "$tmp/seed" --cases 2
one --db "$tmp/d.db" --shard 1/2 --seed-file "$tmp/seed"
check "kbv merge refuses shards of two seeds" 5 "shard 1/2 of .*one.jsonl is not from the run of shard 0/2 .*(another seed)" -- \
    merge "$tmp/a.db" "$tmp/b.db" -o "$tmp/ab.db"
grep -qF "$seed" "$tmp/stderr" && not_ok "merge refusal" "the message shows the seed"
check "kbv merge refuses shards of other settings" 5 'other settings: {"cases":2' -- merge "$tmp/a.db" "$tmp/c.db" -o "$tmp/ac.db"
if [ "$(sqlite3 "$tmp/ab.db" 'SELECT COUNT(*) FROM runs' 2>&1)" = 1 ]; then ok "a refused shard adds nothing (its transaction rolled back)"
else not_ok "refused shard" "$(sqlite3 "$tmp/ab.db" 'SELECT uuid, settings FROM runs' 2>&1 | head -c 400)"; fi
if "$KBV" merge "$tmp/a.db" "$tmp/d.db" -o "$tmp/ad.db" 2>"$tmp/stderr" &&
    [ "$(sqlite3 "$tmp/ad.db" 'SELECT COUNT(*) FROM runs; SELECT COUNT(*) FROM evaluations' | tr '\n' ' ')" = "2 1 " ]; then
    ok "kbv merge takes the shards of one run (same seed and settings)"
else not_ok "merge of one run's shards" "$(cat "$tmp/stderr" "$tmp/one.err" | head -c 400)"; fi

# --- kbv slurm without Slurm ----------------------------------------------------------------------
PATH=/nonexistent "$KBV" slurm --manifest "$tmp/m/run.jsonl" --shards 3 --db "$tmp/none.db" $opts 2>"$tmp/stderr"
rc=$?
if [ "$rc" = 4 ] && grep -q "kbv slurm: sbatch is not in PATH: kbv slurm needs Slurm's commands" "$tmp/stderr" && [ ! -e "$tmp/none.db.slurm" ]; then
    ok "kbv slurm where Slurm is missing: a clear error, nothing written"
else not_ok "no Slurm" "exit $rc: $(head -c 400 "$tmp/stderr")"; fi

# --- a one-node cluster -------------------------------------------------------------------------------
for b in munged slurmctld slurmd sbatch squeue scontrol sinfo scancel; do
    if ! command -v "$b" >/dev/null && [ ! -x "/usr/sbin/$b" ]; then
        echo "SKIP: Slurm's $b is not installed (Debian: apt-get install slurm-wlm munge; scripts/install-deps.sh does)"
        finish
        exit $?
    fi
done
if [ "$(id -u)" != 0 ]; then
    echo "SKIP: the local Slurm cluster needs root (slurmd starts the jobs)"
    finish
    exit $?
fi
export PATH="$PATH:/usr/sbin"
check "kbv slurm: kbv run's options are checked before anything is submitted" 2 "kbv run: --cases needs an integer" -- \
    slurm --manifest "$tmp/m/run.jsonl" --shards 3 --db "$tmp/none.db" --cases 0
[ -e "$tmp/none.db.slurm" ] && not_ok "bad options" "kbv slurm left a state folder behind"
S=$tmp/slurm
mkdir -p "$S/state" "$S/spool" "$S/log" "$S/munge"
chmod 711 "$S/munge"
host=$(hostname -s)
port=$((20000 + RANDOM % 20000))
head -c 1024 /dev/urandom >"$S/munge/munge.key"
chmod 600 "$S/munge/munge.key"
munged -F --force --socket="$S/munge/sock" --key-file="$S/munge/munge.key" --pid-file="$S/munge/pid" \
    --log-file="$S/log/munged.log" --seed-file="$S/munge/seed" >"$S/log/munged.out" 2>&1 &
daemons+=($!)
cat >"$S/slurm.conf" <<EOF
ClusterName=kbvtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$S/munge/sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MinJobAge=600
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=500 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$S/slurm.conf
for _ in $(seq 1 50); do [ -S "$S/munge/sock" ] && break; sleep 0.1; done
slurmctld -D -i >"$S/log/slurmctld.out" 2>&1 &
daemons+=($!)
slurmd -D >"$S/log/slurmd.out" 2>&1 &
daemons+=($!)
state=
for _ in $(seq 1 150); do
    state=$(sinfo -h -n "$host" -o %t 2>/dev/null)
    [ "$state" = idle ] && break
    sleep 0.2
done
if [ "$state" = idle ]; then ok "a one-node Slurm cluster on $host (munged, slurmctld, slurmd) is up"
else
    not_ok "local cluster" "node state '$state': $(tail -n 5 "$S"/log/*.out "$S"/log/*.log 2>/dev/null | head -c 1500)"
    finish
    exit $?
fi

# --- the unsharded run, then the same as a job array of 3 ------------------------------------------
t0=$SECONDS
"$KBV" run --manifest "$tmp/m/run.jsonl" --db "$tmp/full.db" --seed "$seed" $opts --quiet 2>"$tmp/full.err"
"$KBV" report --db "$tmp/full.db" --format json >"$tmp/full.json"
full_s=$((SECONDS - t0))
cd "$tmp"
t0=$SECONDS
"$KBV" slurm --manifest m/run.jsonl --shards 3 --db sweep.db --seed-file seed --poll 1 $opts -- --time=10 >"$tmp/slurm.out" 2>&1 &
sweep_pid=$!
st=$tmp/sweep.db.slurm
victim= stored= leak=
for _ in $(seq 1 600); do # shard 1 (4 entries) once it stored one: its kbv run dies with SIGKILL
    victim=$(pgrep -f -- "--db $st/shard-1.db" | head -1)
    stored=$(sqlite3 "$st/shard-1.db" 'SELECT COUNT(*) FROM evaluations' 2>/dev/null)
    if [ -n "$victim" ] && [ "${stored:-0}" -ge 1 ]; then
        leak=$(grep -l -F -f "$tmp/seed" /proc/[0-9]*/cmdline 2>/dev/null | head -3) # -f: not on grep's own command line
        kill -9 "$victim"
        # The manifest now names other entries: the task submitted again must still run its
        # shard's entries as the sweep read them (the state folder's manifest.jsonl).
        mv "$tmp/m/run.jsonl" "$tmp/m/run.jsonl.orig" && cp "$tmp/m/one.jsonl" "$tmp/m/run.jsonl"
        break
    fi
    kill -0 "$sweep_pid" 2>/dev/null || break
    sleep 0.2
done
for _ in $(seq 1 900); do kill -0 "$sweep_pid" 2>/dev/null || break; sleep 0.2; done
if kill -0 "$sweep_pid" 2>/dev/null; then kill "$sweep_pid"; fi
wait "$sweep_pid"
rc=$?
sweep_pid=
sweep_s=$((SECONDS - t0))
cd - >/dev/null
"$KBV" report --db "$tmp/sweep.db" --format json >"$tmp/sweep.json" 2>"$tmp/report.err"
if [ -n "$victim" ] && [ "${stored:-0}" -ge 1 ]; then ok "shard 1's kbv run (pid $victim) killed with SIGKILL after it stored $stored evaluation(s)"
else not_ok "kill" "shard 1 never ran with an evaluation stored (pid '$victim', stored '$stored'): $(tail -c 600 "$tmp/slurm.out")"; fi
if grep -q "shard 1 (job [0-9]*_1) kbv run exited with status 137.*submitting it again" "$tmp/slurm.out" &&
    grep -q "submitted job [0-9]*: array 1 (1 task)" "$tmp/slurm.out" &&
    grep -Eq "resuming run .* [1-9][0-9]* already stored|[1-9][0-9]* already stored" "$st"/logs/shard-1.job-*.log; then
    ok "kbv slurm submitted the killed task again; its kbv run --resume skipped what it had stored (the manifest replaced meanwhile)"
else not_ok "resubmission" "$(tail -c 800 "$tmp/slurm.out") $(tail -n 3 "$st"/logs/shard-1.job-*.log 2>/dev/null | head -c 600)"; fi
if [ "$rc" = 0 ] && jq -e '.evaluations == {"stored": 9, "distinct": 9}' "$tmp/sweep.json" >/dev/null &&
    [ "$(jq -S 'del(.evaluations, .runs)' "$tmp/sweep.json")" = "$(jq -S 'del(.evaluations, .runs)' "$tmp/full.json")" ]; then
    ok "the merged database equals the unsharded run's (9 evaluations, each once; sweep ${sweep_s} s, unsharded ${full_s} s)"
else
    not_ok "merged = unsharded" "exit $rc $(jq -c .evaluations "$tmp/sweep.json" 2>/dev/null) $(tail -c 600 "$tmp/slurm.out")
$(diff <(jq -S 'del(.evaluations, .runs)' "$tmp/full.json") <(jq -S 'del(.evaluations, .runs)' "$tmp/sweep.json") 2>&1 | head -20)"
fi
if [ "$(sqlite3 "$st/shard-1.db" 'SELECT COUNT(*) FROM runs' 2>&1)" = 1 ] && [ "$(stat -c %a "$st/seed")" = 600 ] && [ "$(stat -c %a "$st")" = 700 ]; then
    ok "each task wrote its own database (the killed shard's holds one run); the state folder is 0700, its seed file 0600"
else not_ok "state folder" "$(stat -c '%a %n' "$st" "$st/seed") runs in shard 1: $(sqlite3 "$st/shard-1.db" 'SELECT COUNT(*) FROM runs' 2>&1)"; fi
# The seed: not in the job script, Slurm's view of the jobs, the logs, kbv slurm's output or any
# command line (seen as the victim was killed).
for j in $(cut -d' ' -f1 "$st/jobs"); do scontrol -d show job "$j"; done >"$tmp/scontrol.txt" 2>&1
where=$(grep -l -F "$seed" "$st/job.sh" "$st/jobs" "$st"/logs/* "$tmp/slurm.out" "$tmp/scontrol.txt" "$S"/log/* 2>/dev/null)
if [ -z "$where$leak" ] && grep -q "JobId=" "$tmp/scontrol.txt" && grep -q "(seed from the seed file)" "$st"/logs/shard-0.job-*.log; then
    ok "the seed is in no job script, log, scontrol show job or command line"
else not_ok "seed leak" "in: $where $leak $(head -c 300 "$tmp/scontrol.txt")"; fi

# --- again: --resume finds everything done; without it, the folder is refused ---------------------
cd "$tmp"
[ -f m/run.jsonl.orig ] || cp m/run.jsonl m/run.jsonl.orig
echo "not a manifest" >m/run.jsonl # --resume reads the sweep's own copy of its entries, not this
"$KBV" slurm --manifest m/run.jsonl --shards 3 --db sweep.db --poll 1 $opts --resume -- --time=10 >"$tmp/resume.out" 2>&1
rc=$?
mv -f m/run.jsonl.orig m/run.jsonl
check "kbv slurm on a finished sweep without --resume: refused" 2 "sweep.db.slurm exists: a sweep was started there" -- \
    slurm --manifest m/run.jsonl --shards 3 --db sweep.db $opts -- --time=10
check "kbv slurm --resume with other arguments: refused" 2 "was started with other arguments" -- \
    slurm --manifest m/run.jsonl --shards 3 --db sweep.db --device cpu --cases 2 --no-timing --resume
cd - >/dev/null
if [ "$rc" = 0 ] && grep -q "3 done, 0 running, 0 pending" "$tmp/resume.out" && grep -q "0 run(s), 0 evaluation(s) added" "$tmp/resume.out" &&
    ! grep -q "submitted job" "$tmp/resume.out"; then
    ok "kbv slurm --resume of a finished sweep (its manifest replaced by a bad one) submits nothing and merging again adds nothing"
else not_ok "resume" "exit $rc $(tail -c 500 "$tmp/resume.out")"; fi
echo "# kbv slurm's output:"
sed 's/^/#   /' "$tmp/slurm.out"
finish
