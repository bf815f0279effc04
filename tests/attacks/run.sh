#!/usr/bin/env bash
# run.sh -- the attack suite: tests/attacks/cases.txt through the fault suite's runner (each
# attack's verdict and evidence, its CHECK, no process left behind, an honest evaluation after
# it verified); then, on the CPU, hostile text through every output format, kbv's own
# exhaustion, and (run as root) three attacks run by user nobody, where kbv makes no namespaces.
# Usage: KBV=/path/to/kbv tests/attacks/run.sh cpu|cuda [PATTERN]
cd "$(dirname "$0")/../.." || exit 1
KBV=${KBV:-$PWD/kbv}
# Decoys for the attacks that look for another run's files and sockets: a results database and
# kept reference outputs in a folder above every scratch folder of the runner (its TMPDIR lies
# beneath), and a listener on an abstract UNIX socket that records any connection in
# $KBV_ATTACK_DECOY/abstract-connected (read_other_db, read_other_scratch, abstract_socket).
export KBV_ATTACK_DECOY
KBV_ATTACK_DECOY=$(mktemp -d)
decoy_listener=
decoy_cleanup() {
    [ -n "$decoy_listener" ] && kill "$decoy_listener" 2>/dev/null
    rm -rf "$KBV_ATTACK_DECOY"
}
trap decoy_cleanup EXIT
mkdir -p "$KBV_ATTACK_DECOY/kbv-attack-sibling/ref"
printf 'KBVTNSR1 another run kept this reference output\n' >"$KBV_ATTACK_DECOY/kbv-attack-sibling/ref/case0_ref_0.kbt"
/usr/bin/python3 - "$KBV_ATTACK_DECOY" <<'PY' &
import os, socket, sqlite3, sys
d = sys.argv[1]
db = sqlite3.connect(os.path.join(d, "kbv-attack-other.db"))
db.execute("create table runs (id integer primary key, seed text)")
db.execute("insert into runs (seed) values ('kbv-attack-decoy-seed-5188146770730811392')")
db.commit()
db.close()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0kbv-attack-abstract-%d" % os.getpid())
s.listen(8)
open(os.path.join(d, "abstract-ready"), "w").close()
while True:
    c, _ = s.accept()
    with open(os.path.join(d, "abstract-connected"), "a") as f:
        f.write("connection\n")
    c.close()
PY
decoy_listener=$!
for _ in $(seq 100); do [ -e "$KBV_ATTACK_DECOY/abstract-ready" ] && break; sleep 0.1; done
TMPDIR=$KBV_ATTACK_DECOY FAULTS_CASES=tests/attacks/cases.txt tests/faults/run.sh "$@"
rc=$?
[ "${1:-}" = cpu ] && [ -z "${2:-}" ] || exit $rc

# Hostile text through every format: a model name and a candidate's error made of terminal
# escapes, HTML, a shell command in backquotes, CSV and Markdown separators. No format may
# carry a raw control character, HTML must be escaped, CSV must parse to its columns, and
# the chart step must run nothing (the canary file stays absent).
. tests/e2e/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; decoy_cleanup' EXIT
canary=/tmp/kbv-attack-canary
rm -f "$canary"
hostile=$'evil\x1b[2J<script>x</script>`touch /tmp/kbv-attack-canary`|a,"b'
P=$PWD/examples/problems/relu.py
/usr/bin/python3 - "$tmp/m.jsonl" "$P" "$PWD/tests/attacks/terminal_escape.py" "$PWD/examples/candidates/relu/honest_cpu.py" "$hostile" <<'PY'
import json, sys
out, p, bad, good, name = sys.argv[1:6]
with open(out, "w") as f:
    for c in (bad, good):
        f.write(json.dumps({"problem": p, "candidate": c, "model": name}) + "\n")
PY
mkdir -p "$tmp/s"
"$KBV" run --manifest "$tmp/m.jsonl" --db "$tmp/r.db" --device cpu --no-timing --cases 1 --quiet --timeout 60 \
    --scratch "$tmp/s" >"$tmp/run.out" 2>&1
why=
for fmt in table md csv json html; do
    "$KBV" report --db "$tmp/r.db" --format "$fmt" >"$tmp/rep.$fmt" 2>"$tmp/rep.$fmt.err" || why="$why; kbv report --format $fmt failed: $(head -c 300 "$tmp/rep.$fmt.err")"
    if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$tmp/rep.$fmt"; then why="$why; a raw control character in --format $fmt"; fi
done
grep -q '<script>' "$tmp/rep.html" && why="$why; unescaped HTML in --format html"
jq -e . "$tmp/rep.json" >/dev/null 2>&1 || why="$why; --format json is not JSON"
# --format csv: blocks separated by blank lines (the summary table, then the paper's tables),
# each parsing to rows of equal length
/usr/bin/python3 -c '
import csv, io, sys
blocks = [b for b in open(sys.argv[1]).read().split("\n\n") if b.strip()]
ok = bool(blocks)
for b in blocks:
    rows = list(csv.reader(io.StringIO(b)))
    ok = ok and bool(rows) and all(len(r) == len(rows[0]) for r in rows)
sys.exit(0 if ok else 1)' \
    "$tmp/rep.csv" || why="$why; --format csv does not parse to blocks of equal rows"
# the candidate's own error text, through kbv eval's summary and kbv inspect's
"$KBV" eval "$P" tests/attacks/terminal_escape.py --device cpu --no-timing --cases 1 --timeout 60 --scratch "$tmp/s" >"$tmp/eval.out" 2>&1
LC_ALL=C grep -q $'[\x1b\x07]' "$tmp/eval.out" && why="$why; a raw escape in kbv eval's summary"
grep -q 'hidden' "$tmp/eval.out" || why="$why; kbv eval's summary lost the candidate's message"
[ -e "$canary" ] && why="$why; a command in the text ran (the canary exists)"
if [ -z "$why" ]; then ok "hostile text through kbv eval and every report format (table, md, csv, json, html): escaped, nothing run"
else not_ok "hostile text through every format" "${why#; }"; fi

# kbv's own exhaustion is never a verdict: with the scratch file system full (an LD_PRELOAD
# shim reports it so), a failing candidate is kbv's error -- not stored, the run goes on and
# says so -- and --resume, with room again, stores it.
if [ -n "${KBV_SANITIZED:-}" ]; then
    echo "SKIP: kbv's own exhaustion: AddressSanitizer must come first among the libraries, so no LD_PRELOAD shim"
elif cc -shared -fPIC -o "$tmp/full_fs.so" tests/attacks/full_fs.c -ldl 2>"$tmp/cc.err"; then
    printf '{"problem": "%s", "candidate": "%s", "sample": 0}\n{"problem": "%s", "candidate": "%s", "sample": 1}\n' \
        "$P" "$PWD/examples/candidates/broken/raise_in_forward.py" "$P" "$PWD/examples/candidates/relu/honest_cpu.py" >"$tmp/x.jsonl"
    LD_PRELOAD=$tmp/full_fs.so "$KBV" run --manifest "$tmp/x.jsonl" --db "$tmp/x.db" --device cpu --no-timing --cases 1 --timeout 60 \
        --scratch "$tmp/s" >"$tmp/x.out" 2>&1
    rc1=$?
    n1=$(/usr/bin/python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from evaluations").fetchone()[0])' "$tmp/x.db" 2>/dev/null)
    "$KBV" run --manifest "$tmp/x.jsonl" --db "$tmp/x.db" --device cpu --no-timing --cases 1 --timeout 60 --scratch "$tmp/s" --resume >"$tmp/y.out" 2>&1
    rc2=$?
    st=$(/usr/bin/python3 -c 'import sqlite3, sys; print(" ".join(r[0] for r in sqlite3.connect(sys.argv[1]).execute("select status from evaluations order by id")))' "$tmp/x.db" 2>/dev/null)
    if [ "$rc1" != 0 ] && [ "$n1" = 1 ] && grep -q "kbv's own" "$tmp/x.out" && grep -q -- "--resume" "$tmp/x.out" && [ "$rc2" = 0 ] && [ "$st" = "verified runtime_error" ]; then
        ok "a full scratch file system is kbv's error: not stored, the run goes on, --resume stores it"
    else
        not_ok "kbv's own exhaustion" "first run exit $rc1 with $n1 stored; resume exit $rc2, statuses: $st; $(tail -c 600 "$tmp/x.out")"
    fi
else
    echo "SKIP: kbv's own exhaustion: cannot build the LD_PRELOAD shim: $(head -c 200 "$tmp/cc.err")"
fi

# Without root: kbv run by an ordinary user may make no namespaces, so its workers share its PID
# and network namespaces and the host's /proc. Landlock alone then keeps kbv's /proc entries
# (its command line), signals to kbv and its other worker, and abstract sockets out of a
# candidate's reach. Three attacks run as user nobody (setpriv) and must be refused by Landlock
# itself; then signal_parent again with the scope left out (KBV_SANDBOX_SKIP=scope) must reach
# kbv, so that the check can fail.
nobody_eval() { # NAME ATTACK [SKIP]: kbv eval as nobody, the result in $nb/NAME.json
    HOME=$nb TMPDIR=$nb XDG_CACHE_HOME=$nb/cache KBV_SANDBOX_SKIP=${3:-} \
        setpriv --reuid=65534 --regid=65534 --clear-groups "$KBV" eval "$P" "$PWD/tests/attacks/$2.py" --device cpu --no-timing \
        --cases 1 --timeout 60 --scratch "$nb" --json "$nb/$1.json" >"$nb/$1.out" 2>&1
}
nb=
if [ "$(id -u)" != 0 ]; then
    echo "SKIP: attacks without root: kbv runs as $(id -un), not root, so it cannot run them as another user (the cases above ran without root)"
elif ! command -v setpriv >/dev/null; then
    echo "SKIP: attacks without root: no setpriv (util-linux) to run kbv as user nobody"
elif ! nb=$(mktemp -d) || ! chown 65534:65534 "$nb" || ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$KBV" -a -r "$P" \
    -a -w "$nb"; then
    echo "SKIP: attacks without root: user nobody cannot run $KBV on $P with a scratch folder of its own"
else
    declare -A want=([read_parent_proc]='refused: /proc/[0-9]+/cmdline: PermissionError' [signal_parent]='kill\(parent [0-9]+\): PermissionError'
        [abstract_socket]='connect @kbv-attack-abstract-[0-9]+: PermissionError')
    for a in read_parent_proc signal_parent abstract_socket; do
        nobody_eval "$a" "$a"
        why=$(jq -r --arg re "${want[$a]}" '
            if .sandbox.pid_namespace != false then "the worker had a PID namespace: nothing shown"
            elif (.sandbox.scope | startswith("signals")) | not then "no Landlock scope: \(.sandbox.scope)"
            elif .status != "runtime_error" or (.errors | test("LEAK")) or (.errors | test($re) | not) then "verdict \(.status): \(.errors[0:400])"
            else empty end' "$nb/$a.json" 2>&1) || why="no result: $(tail -c 400 "$nb/$a.out")"
        if [ -z "$why" ]; then ok "without root: $a refused by Landlock alone (no PID or network namespace)"
        else not_ok "without root: $a" "$why"; fi
    done
    [ -e "$KBV_ATTACK_DECOY/abstract-connected" ] && not_ok "without root: abstract_socket" "the suite's listener recorded a connection"
    nobody_eval control signal_parent scope
    if jq -e '(.sandbox.scope | startswith("none")) and (.errors | test("LEAK: signals reached kill\\(parent"))' "$nb/control.json" >/dev/null 2>&1; then
        ok "without root, the scope left out (KBV_SANDBOX_SKIP=scope): signal_parent reaches kbv, so the check above can fail"
    else
        not_ok "without root, the scope left out" "signal_parent did not reach kbv: $(jq -r '.errors[0:300]' "$nb/control.json" 2>&1 | head -3)"
    fi
fi
[ -n "$nb" ] && rm -rf "$nb"
[ "$rc" = 0 ] || not_ok "the attacks of cases.txt" "the runner failed (exit $rc): its lines above say which"
finish
