#!/usr/bin/env bash
# bad_input.sh -- bad input never crashes kbv (issue #7, item 4): malformed problem and
# candidate files, bad manifests, corrupt, foreign, locked and read-only databases, unknown
# options and bad values. Each case asserts the documented exit status (docs/cli.md), that
# stderr is exactly one line "kbv <command>: ..." naming the file (for kbv eval and check:
# the JSON status and errors instead), and that nothing is left behind: no worker, no scratch
# folder, no database created or changed, no SQLite -wal/-shm files beside an input.
# Usage: KBV=/path/to/kbv tests/e2e/bad_input.sh   (make test-e2e sets KBV)
# BAD_INPUT_TABLE=FILE also writes the "input | message | exit" rows of docs/RELIABILITY.md.
set -u
cd "$(dirname "$0")/../.."
KBV=${KBV:-$PWD/kbv}
. tests/e2e/lib.sh
tmp=$(mktemp -d)
chmod 755 "$tmp" # the unreadable and read-only cases run kbv as another user (see as_user)
holder=""
trap '[ -n "$holder" ] && kill "$holder" 2>/dev/null; rm -rf "$tmp"' EXIT
export TMPDIR="$tmp/t"
S=$TMPDIR/scratch # under $TMPDIR, where leftovers() looks for workers
mkdir -p "$TMPDIR" "$S" "$tmp/f"
chmod 1777 "$TMPDIR" "$S"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$tmp/cache}
table=${BAD_INPUT_TABLE:-/dev/null}
case "$table" in /*) ;; *) table=$PWD/$table ;; esac
ROOT=$PWD
F=$PWD/tests/fixtures/bad
P=$PWD/examples/problems/relu.py
C=$PWD/examples/candidates/relu/honest_cpu.py
EX=$PWD/examples
PY=$(command -v python3 || echo /usr/bin/python3)
t_start=$SECONDS
# Away from the repository: a regression that ignored a bad option would find no built-in
# suite or example here, instead of running it into ./kbv.db.
mkdir -p "$tmp/work"
cd "$tmp/work" || exit 1

# as_user CMD...: run as an unprivileged user, so that file permissions apply (root reads
# and writes everything); status 99 when that is not possible here (see can_drop).
as_user() {
    if [ "$(id -u)" != 0 ]; then "$@"
    elif command -v setpriv >/dev/null; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
    else return 99; fi
}
can_drop=1
if [ "$(id -u)" = 0 ] && ! command -v setpriv >/dev/null; then can_drop=0; fi

row() { # INPUT MESSAGE EXIT: one row of the table in docs/RELIABILITY.md (paths made short)
    local msg=${2//$tmp\//}
    msg=${msg//$ROOT\//}
    msg=${msg//|/\\|}
    printf '| %s | `%s` | %s |\n' "$1" "${msg:0:220}" "$3" >>"$table"
}

# left_behind: workers still running, scratch folders not removed, SQLite side files. The GPU
# locks (kbv-gpu-*.lock and its .turn), which every kbv on a GPU takes in $TMPDIR or --scratch,
# are meant to stay there (docs/timing.md, "Several GPUs"): not counted.
not_lock() { grep -Ev '^kbv-gpu-.*\.lock(\.turn)?$'; }
left_behind() {
    local l
    l=$(leftovers)
    [ -n "$l" ] && { echo "workers left running: $l"; kill -9 $l 2>/dev/null; }
    [ -n "$(ls -A "$S" | not_lock)" ] && { echo "scratch left: $(ls -A "$S")"; rm -rf "${S:?}"/*; }
    [ -n "$(ls "$TMPDIR" | grep '^kbv-' | not_lock)" ] && { echo "scratch left in TMPDIR: $(ls "$TMPDIR")"; rm -rf "$TMPDIR"/kbv-*; }
    ls "$tmp"/db/*-wal "$tmp"/db/*-shm 2>/dev/null | grep -v -e '/lock' -e '/live' | sed 's/^/side file left: /'
}

# expect NAME WANT_RC FILE WHAT [as_user] -- kbv ARGS...: exit WANT_RC, stderr one line
# starting "kbv <command>: ", mentioning FILE (when not empty) and WHAT, no sanitizer report.
expect() {
    local name=$1 want=$2 file=$3 what=$4
    shift 4
    local runner=""
    if [ "$1" = as_user ]; then
        runner=as_user
        shift
        [ "$can_drop" = 1 ] || { echo "SKIP: $name (root, and no setpriv to drop privileges)"; shift; return; }
    fi
    shift # --
    $runner "$KBV" "$@" >"$tmp/stdout" 2>"$tmp/stderr" </dev/null
    local rc=$? lines first left prefix="kbv: "
    case "$1" in eval | check | inspect | run | report | merge | version) prefix="kbv $1: " ;; esac
    lines=$(wc -l <"$tmp/stderr")
    first=$(head -n 1 "$tmp/stderr")
    left=$(left_behind)
    if [ "$rc" != "$want" ]; then not_ok "$name" "exit $rc, want $want; stderr: $(head -c 600 "$tmp/stderr")"
    elif [ "$lines" != 1 ]; then not_ok "$name" "stderr has $lines lines, want 1: $(head -c 600 "$tmp/stderr")"
    elif [ "${first#"$prefix"}" = "$first" ]; then not_ok "$name" "stderr does not start with '$prefix': $first"
    elif [ -n "$file" ] && ! grep -qF -- "$file" "$tmp/stderr"; then not_ok "$name" "stderr does not name $file: $first"
    elif ! grep -qF -- "$what" "$tmp/stderr"; then not_ok "$name" "stderr does not say '$what': $first"
    elif grep -qE 'Sanitizer|runtime error:' "$tmp/stdout" "$tmp/stderr"; then not_ok "$name" "sanitizer report"
    elif [ -n "$left" ]; then not_ok "$name" "$left"
    else ok "$name (exit $rc)"; row "$name" "$first" "$rc"; fi
}

# expect_eval NAME STATUS WANT_RC ERRORS_REGEX FILE [as_user] -- kbv eval|check ARGS...: the JSON
# result has STATUS, its errors match ERRORS_REGEX, the problem or candidate path ends in FILE;
# exit WANT_RC; nothing on stderr (--quiet), nothing left behind.
expect_eval() {
    local name=$1 status=$2 want=$3 re=$4 file=$5
    shift 5
    local runner=""
    if [ "$1" = as_user ]; then
        runner=as_user
        shift
        [ "$can_drop" = 1 ] || { echo "SKIP: $name (root, and no setpriv to drop privileges)"; shift; return; }
    fi
    shift # --
    rm -f "$tmp/t/out.json"
    local t0=$SECONDS
    $runner "$KBV" "$@" --device cpu --quiet --cases 1 --seed 3 --no-timing --scratch "$S" \
        --json "$tmp/t/out.json" >"$tmp/stdout" 2>"$tmp/stderr" </dev/null
    local rc=$? got errs left
    got=$(jq -r .status "$tmp/t/out.json" 2>/dev/null || echo "(no JSON)")
    errs=$(jq -r .errors "$tmp/t/out.json" 2>/dev/null)
    left=$(left_behind)
    if [ "$rc" != "$want" ] || [ "$got" != "$status" ]; then
        not_ok "$name" "status $got exit $rc, want $status exit $want; stderr: $(head -c 400 "$tmp/stderr"); errors: ${errs:0:600}"
    elif ! grep -qE -- "$re" <<<"$errs"; then not_ok "$name" "errors do not match /$re/: ${errs:0:600}"
    elif ! jq -e --arg f "$file" '(.problem.path | endswith($f)) or (.candidate.path | endswith($f))' "$tmp/t/out.json" >/dev/null; then
        not_ok "$name" "the result does not name $file: $(jq -c '[.problem.path, .candidate.path]' "$tmp/t/out.json")"
    elif [ -s "$tmp/stderr" ]; then not_ok "$name" "stderr not empty under --quiet: $(head -c 400 "$tmp/stderr")"
    elif grep -qE 'Sanitizer|runtime error:' "$tmp/stdout"; then not_ok "$name" "sanitizer report"
    elif [ -n "$left" ]; then not_ok "$name" "$left"
    else ok "$name ($got, exit $rc, $((SECONDS - t0)) s)"; row "$name" "$status: $(head -n 1 <<<"$errs")" "$rc"; fi
}

# ---- problem files (kbv eval PROBLEM honest; cases.txt has syntax_error, no_model,
# non_tensor_inputs, forward_raises and a missing file) --------------------------------------
printf '| input | message | exit |\n|---|---|---|\n' >"$table"
truncate -s 100M "$tmp/f/huge_file.py"
cp "$P" "$tmp/f/unreadable.py" && chmod 000 "$tmp/f/unreadable.py"
pe() { # NAME ERRORS_REGEX FIXTURE [options]
    local name=$1 re=$2 fx=$3
    shift 3
    expect_eval "problem: $name" problem_error 3 "$re" "$(basename "$fx")" -- eval "$fx" "$C" "$@"
}
pe "empty file" "defines no callable Model" $F/problem_empty.py
pe "binary file" "null bytes" $F/problem_binary.py
pe "a folder" "problem_dir.py: is a folder, not a file" $F/problem_dir.py
pe "/dev/zero" "/dev/zero: not a regular file" /dev/zero
pe "100 MB file" "huge_file.py: larger than 64 MiB" "$tmp/f/huge_file.py"
pe "module raises at import" "ImportError: deliberately broken at import" $F/problem_import_raises.py
pe "Model is not a class" "defines no callable Model" $F/problem_model_not_class.py
pe "no get_inputs" "defines no callable get_inputs" $F/problem_no_get_inputs.py
pe "get_inputs raises" "get_inputs\(\): ValueError: deliberately broken get_inputs" $F/problem_get_inputs_raises.py
pe "get_inputs returns an int" "get_inputs\(\): TypeError: 'int' object is not iterable" $F/problem_get_inputs_not_list.py
pe "get_inputs returns a dict" "value 0: a dict is neither a tensor nor a number" $F/problem_get_inputs_dict.py
pe "get_inputs 10^7 x 10^7" "get_inputs\(\).*(allocate|more than half of this machine's memory)" $F/problem_huge_shape.py
pe "get_inputs 60% of memory (lazy)" "value 0: .* more than half of this machine's memory" $F/problem_ram_shape.py
pe "get_inputs never returns" "get_inputs\(\) probe timed out after 3 s" $F/problem_get_inputs_hangs.py --timeout 3
pe "get_init_inputs raises" "get_init_inputs\(\): RuntimeError: deliberately broken" $F/problem_init_inputs_raises.py
pe "get_init_inputs returns an int" "get_init_inputs\(\): TypeError" $F/problem_init_inputs_not_list.py
pe "Model needs an argument" "missing 1 required positional argument: 'dim'" $F/problem_init_args_missing.py
pe "forward returns a str" "forward returned a str, not a tensor" $F/problem_forward_returns_str.py
expect_eval "problem: unreadable" problem_error 3 "unreadable.py: Permission denied" unreadable.py as_user -- eval "$tmp/f/unreadable.py" "$C"
expect_eval "kbv check: get_inputs raises" problem_error 3 "deliberately broken get_inputs" problem_get_inputs_raises.py -- check $F/problem_get_inputs_raises.py
expect_eval "kbv check: a folder" problem_error 3 "is a folder, not a file" problem_dir.py -- check $F/problem_dir.py

# ---- candidate files (cases.txt has syntax_error, no_modelnew, import_error, missing) -------
cp "$C" "$tmp/f/unreadable_c.py" && chmod 000 "$tmp/f/unreadable_c.py"
ce() {
    expect_eval "candidate: $1" compile_error 1 "$2" "$(basename "$3")" -- eval "$P" "$3"
}
ce "empty file" "defines no callable ModelNew" $F/candidate_empty.py
ce "binary file" "null bytes" $F/candidate_binary.py
ce "a folder" "candidate_dir.py: is a folder, not a file" $F/candidate_dir.py
ce "/dev/zero" "/dev/zero: not a regular file" /dev/zero
ce "ModelNew is not a class" "defines no callable ModelNew" $F/candidate_modelnew_not_class.py
expect_eval "candidate: unreadable" compile_error 1 "unreadable_c.py: Permission denied" unreadable_c.py as_user -- eval "$P" "$tmp/f/unreadable_c.py"
expect "inspect: a folder" 2 candidate_dir.py "is a folder" -- inspect $F/candidate_dir.py
expect "inspect: /dev/zero" 2 /dev/zero "not a regular file" -- inspect /dev/zero
expect "inspect: unreadable" 2 unreadable_c.py "Permission denied" as_user -- inspect "$tmp/f/unreadable_c.py"
"$KBV" inspect $F/candidate_binary.py --json "$tmp/t/ins.json" >/dev/null 2>"$tmp/stderr"
rc=$?
if [ "$rc" = 0 ] && jq -e '.syntax_error | test("null bytes")' "$tmp/t/ins.json" >/dev/null && [ ! -s "$tmp/stderr" ]; then
    ok "inspect: a binary file is a syntax error in the result, exit 0"
    row "inspect: binary file" "syntax error: $(jq -r .syntax_error "$tmp/t/ins.json")" 0
else not_ok "inspect: binary file" "exit $rc $(cat "$tmp/t/ins.json" 2>/dev/null | head -c 300) $(head -c 300 "$tmp/stderr")"; fi

# ---- manifests (run_db.sh has: no candidate, a garbage line, a CSV without the columns, a
# missing manifest). The manifest is read before the database is opened: none may appear. ----
M=$tmp/m
mkdir -p "$M" && ln -s "$EX" "$M/ex"
good='{"problem": "ex/problems/relu.py", "candidate": "ex/candidates/relu/honest_cpu.py"'
: >"$M/empty.jsonl"
printf '# nothing but a comment\n\n' >"$M/comments.jsonl"
printf '%s}\n{"problem": "a.py", "candidate": \n' "$good" >"$M/truncated.jsonl"
printf '{"problem": 5, "candidate": "b.py"}\n' >"$M/number_path.jsonl"
printf '%s, "sample": "zero"}\n' "$good" >"$M/string_sample.jsonl"
printf '%s, "sample": -5}\n' "$good" >"$M/negative_sample.jsonl"
printf '%s, "level": 99999999999}\n' "$good" >"$M/huge_level.jsonl"
printf '%s, "model": "%s"}\n' "$good" "$(printf 'm%.0s' $(seq 1 300))" >"$M/long_model.jsonl"
"$PY" -c "print('{\"problem\": \"' + 'a' * 5000000 + '\", \"candidate\": \"b.py\"}')" >"$M/long_line.jsonl"
printf '[1, 2]\n' >"$M/array.jsonl"
printf 'problem: relu.py\ncandidate: honest.py\n' >"$M/manifest.yaml"
printf 'problem,candidate\n"ex/problems/relu.py,ex/candidates/relu/honest_cpu.py\n' >"$M/open_quote.csv"
printf '%s}\n\x80\xfe binary \x00 data\n' "$good" >"$M/binary.jsonl"
mkdir -p "$M/folder.jsonl"
cp "$M/empty.jsonl" "$M/unreadable.jsonl" && printf '%s}\n' "$good" >"$M/unreadable.jsonl" && chmod 000 "$M/unreadable.jsonl"
me() { # NAME FILE WHAT [as_user]
    expect "manifest: $1" 2 "$2" "$3" ${4:-} -- run --manifest "$M/$2" --db "$tmp/never.db" --device cpu --quiet
    [ -e "$tmp/never.db" ] && { not_ok "manifest: $1" "a database was created"; rm -f "$tmp/never.db"*; }
}
me "empty" empty.jsonl "empty.jsonl: no evaluations in the manifest"
me "only comments" comments.jsonl "comments.jsonl: no evaluations in the manifest"
me "truncated JSON line" truncated.jsonl "truncated.jsonl:2: not a JSON object"
me "a number for a path" number_path.jsonl "number_path.jsonl:1: 'problem' must be a string"
me "a string for sample" string_sample.jsonl "string_sample.jsonl:1: 'sample' and 'level' must be integers"
me "a negative sample" negative_sample.jsonl "negative_sample.jsonl:1: 'sample' and 'level' must be integers from 0"
me "a level over 10^9" huge_level.jsonl "huge_level.jsonl:1: 'sample' and 'level' must be integers from 0"
me "a 300-character model" long_model.jsonl "long_model.jsonl:1: 'model' is longer than 127 bytes"
me "a 5 MB line" long_line.jsonl "long_line.jsonl:1: the 'problem' path is longer than"
me "a JSON array" array.jsonl "array.jsonl:1: not a JSON object"
me "YAML (unknown format)" manifest.yaml "manifest.yaml:1: neither a JSON object nor a CSV/TSV header"
me "CSV quote not closed" open_quote.csv "open_quote.csv:2: a quoted field is not closed"
me "binary (a NUL byte)" binary.jsonl "binary.jsonl:2: a NUL byte: not a text file"
me "a folder" folder.jsonl "folder.jsonl: is a folder, not a manifest"
me "unreadable" unreadable.jsonl "unreadable.jsonl: cannot read the manifest: Permission denied" as_user
expect "manifest: /dev/zero" 2 /dev/zero "a NUL byte: not a text file" -- run --manifest /dev/zero --db "$tmp/never.db" --quiet
expect "manifest: --runs folder missing" 2 "$tmp/nowhere" "cannot read the runs folder: No such file or directory" -- \
    run --kernelbench "$tmp" --runs "$tmp/nowhere" --db "$tmp/never.db" --quiet
[ -e "$tmp/never.db" ] && not_ok "manifests" "a database was created"

# A run goes on past bad entries: each is stored with its verdict, a duplicate is evaluated once.
mkdir -p "$M/problem_folder.py"
{
    printf '{"problem": "nothere.py", "candidate": "ex/candidates/relu/honest_cpu.py"}\n'
    printf '{"problem": "ex/problems/relu.py", "candidate": "nothere_c.py"}\n'
    printf '{"problem": "%s/problem_get_inputs_raises.py", "candidate": "ex/candidates/relu/honest_cpu.py"}\n' "$F"
    printf '{"problem": "problem_folder.py", "candidate": "ex/candidates/relu/honest_cpu.py"}\n'
    printf '%s}\n%s}\n' "$good" "$good"
} >"$M/mixed.jsonl"
"$KBV" run --manifest "$M/mixed.jsonl" --db "$tmp/mixed.db" --device cpu --cases 1 --no-timing --seed 3 \
    --scratch "$S" >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
"$KBV" report --db "$tmp/mixed.db" --format json >"$tmp/t/mixed.json" 2>/dev/null
dir_err=$("$PY" -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT group_concat(result) FROM evaluations WHERE status = ?", ("problem_error",)).fetchone()[0])' "$tmp/mixed.db" 2>&1)
left=$(left_behind)
if [ "$rc" = 0 ] && jq -e '.evaluations == {"stored": 5, "distinct": 5} and .overall.verified == 1 and .overall.errors == 4' "$tmp/t/mixed.json" >/dev/null &&
    grep -qF "mixed.jsonl:6: the same evaluation as line 5" "$tmp/stderr" && grep -qF "problem_folder.py: is a folder" <<<"$dir_err" &&
    grep -qF "nothere.py: No such file or directory" <<<"$dir_err" && [ -z "$left" ]; then
    ok "a run stores missing, broken and folder problems as problem_error and a missing candidate as compile_error, goes on, and evaluates a duplicate line once"
    row "run: manifest with missing paths, broken problems, a duplicate" "$(grep -F 'same evaluation' "$tmp/stderr")" 0
else not_ok "run with bad entries" "exit $rc $(jq -c '[.evaluations, .overall.verified, .overall.errors]' "$tmp/t/mixed.json" 2>/dev/null) $(tail -c 400 "$tmp/stderr") $left ${dir_err:0:300}"; fi

# ---- databases --------------------------------------------------------------------------------
D=$tmp/db
mkdir -p "$D"
chmod 777 "$D"
cp "$tmp/mixed.db" "$D/good.db"
"$PY" - "$D" <<'EOF'
import os, shutil, sqlite3, sys
d = sys.argv[1]
good = os.path.join(d, 'good.db')
with open(os.path.join(d, 'random.db'), 'wb') as f: f.write(os.urandom(8192))
with open(os.path.join(d, 'truncated.db'), 'wb') as f: f.write(open(good, 'rb').read()[:4096])
open(os.path.join(d, 'empty.db'), 'w').close()
c = sqlite3.connect(os.path.join(d, 'foreign.db')); c.execute('CREATE TABLE accounts(name, balance)'); c.commit(); c.close()
shutil.copy(good, os.path.join(d, 'v2.db'))
c = sqlite3.connect(os.path.join(d, 'v2.db')); c.execute("UPDATE meta SET value = '2' WHERE key = 'schema'"); c.commit(); c.close()
EOF
mkdir -p "$D/folder.db"
for f in "$D"/*.db; do [ -f "$f" ] && cp "$f" "$f.orig"; done
unchanged() { # FILE...: each equal to its .orig copy
    local f
    for f in "$@"; do cmp -s "$D/$f" "$D/$f.orig" || { not_ok "database $f" "kbv changed it"; return; }; done
}
R="--manifest $M/mixed.jsonl --device cpu --cases 1 --no-timing --quiet --scratch $S"
expect "db: random bytes (run)" 5 random.db "not a SQLite database" -- run $R --db "$D/random.db"
expect "db: random bytes (report)" 5 random.db "not a SQLite database" -- report --db "$D/random.db"
expect "db: random bytes (merge source)" 5 random.db "not a SQLite database" -- merge "$D/random.db" -o "$tmp/merged.db"
expect "db: random bytes (merge output)" 5 random.db "not a SQLite database" -- merge "$D/good.db" -o "$D/random.db"
expect "db: truncated SQLite file (run)" 5 truncated.db "the database is corrupt" -- run $R --db "$D/truncated.db"
expect "db: truncated SQLite file (report)" 5 truncated.db "the database is corrupt" -- report --db "$D/truncated.db"
expect "db: another program's SQLite database (run)" 5 foreign.db "not a kbv results database" -- run $R --db "$D/foreign.db"
expect "db: another program's SQLite database (merge source)" 5 foreign.db "not a kbv results database" -- merge "$D/foreign.db" -o "$tmp/merged.db"
expect "db: another program's SQLite database (report)" 5 foreign.db "not a kbv results database" -- report --db "$D/foreign.db"
expect "db: schema version 2 (run)" 5 v2.db "schema version 2; this kbv" -- run $R --db "$D/v2.db"
expect "db: schema version 2 (report)" 5 v2.db "schema version 2; this kbv" -- report --db "$D/v2.db"
expect "db: schema version 2 (merge source)" 5 v2.db "schema version 2; this kbv" -- merge "$D/v2.db" -o "$tmp/merged.db"
expect "db: empty file (report)" 5 empty.db "not a kbv results database (an empty file)" -- report --db "$D/empty.db"
expect "db: empty file (merge source)" 5 empty.db "not a kbv results database (an empty file)" -- merge "$D/empty.db" -o "$tmp/merged.db"
expect "db: a folder (run)" 5 folder.db "is a folder, not a database" -- run $R --db "$D/folder.db"
expect "db: a folder (report)" 5 folder.db "is a folder, not a database" -- report --db "$D/folder.db"
expect "db: missing (report)" 2 none.db "No such file or directory" -- report --db "$D/none.db"
expect "db: missing (merge source)" 2 none.db "No such file or directory" -- merge "$D/good.db" "$D/none.db" -o "$tmp/merged.db"
expect "db: merge into one of its sources" 5 good.db "is the output database itself" -- merge "$D/good.db" -o "$D/good.db"
expect "db: in a folder that does not exist (run)" 5 nowhere/x.db "cannot create it: No such file or directory" -- run $R --db "$tmp/nowhere/x.db"
unchanged random.db truncated.db foreign.db v2.db empty.db good.db
[ -e "$tmp/merged.db" ] && not_ok "merge" "a failed merge left its output behind" && rm -f "$tmp/merged.db"*
[ -e "$tmp/nowhere" ] && not_ok "run" "made the folder of a database it could not create"

# Read-only: a file, and a folder (SQLite writes its -wal and -shm beside the database).
if [ "$can_drop" = 1 ]; then
    mkdir -p "$tmp/rodir" && cp "$D/good.db" "$tmp/rodir/ro.db" && cp "$D/good.db" "$tmp/rodir/rw.db" && chmod 666 "$tmp/rodir/rw.db"
    chmod 555 "$tmp/rodir"
    cp "$D/good.db" "$D/readonly.db" && chmod 444 "$D/readonly.db" && cp "$D/good.db" "$D/noaccess.db" && chmod 000 "$D/noaccess.db"
fi
expect "db: read-only file (run)" 5 readonly.db "read-only, and kbv needs to write to it: Permission denied" as_user -- run $R --db "$D/readonly.db"
expect "db: read-only folder (run)" 5 rw.db "its folder is read-only" as_user -- run $R --db "$tmp/rodir/rw.db"
expect "db: new file in a read-only folder (run)" 5 new.db "cannot create it: Permission denied" as_user -- run $R --db "$tmp/rodir/new.db"
expect "db: unreadable (report)" 2 noaccess.db "Permission denied" as_user -- report --db "$D/noaccess.db"
if [ "$can_drop" = 1 ]; then
    for f in "$D/readonly.db" "$tmp/rodir/ro.db" "$tmp/rodir/rw.db"; do
        if as_user "$KBV" report --db "$f" --format json 2>"$tmp/stderr" | jq -e '.evaluations.stored == 5' >/dev/null &&
            [ -z "$(ls "$f"-* 2>/dev/null)" ]; then ok "db: $(basename "$(dirname "$f")")/$(basename "$f") read-only: kbv report reads it and leaves no -wal/-shm"
        else not_ok "report read-only $f" "$(head -c 300 "$tmp/stderr") $(ls "$f"-* 2>/dev/null)"; fi
    done
fi

# Locked: another process holds the write lock (kbv run and merge into it wait 5 s, then fail
# naming it; report and merge from it only read, which WAL allows), or an exclusive lock mode
# that shuts readers out too.
lock() { # DB MODE: hold a lock on DB in the background until killed
    rm -f "$1.held"
    "$PY" - "$1" "$2" <<'EOF' &
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == 'exclusive':
    c.execute('PRAGMA locking_mode=EXCLUSIVE')
c.execute('BEGIN EXCLUSIVE')
c.execute("INSERT INTO meta VALUES('lock', 'held')")
if sys.argv[2] == 'exclusive':
    c.execute('COMMIT')  # the connection keeps its exclusive lock in this mode
open(sys.argv[1] + '.held', 'w').close()
time.sleep(120)
EOF
    holder=$!
    for _ in $(seq 1 100); do [ -e "$1.held" ] && return; sleep 0.1; done
}
cp "$D/good.db" "$D/lock.db"
lock "$D/lock.db" write
t0=$SECONDS
expect "db: locked by a writer (run)" 5 lock.db "locked by another process (still locked after 5 s)" -- run $R --db "$D/lock.db"
if [ $((SECONDS - t0)) -le 30 ]; then ok "a locked database fails after the busy timeout ($((SECONDS - t0)) s), not never"
else not_ok "busy timeout" "took $((SECONDS - t0)) s"; fi
expect "db: locked by a writer (merge into it)" 5 lock.db "locked by another process" -- merge "$D/good.db" -o "$D/lock.db"
if "$KBV" report --db "$D/lock.db" --format json 2>"$tmp/stderr" | jq -e '.evaluations.stored == 5' >/dev/null &&
    "$KBV" merge "$D/lock.db" -o "$tmp/from_locked.db" 2>>"$tmp/stderr"; then
    ok "db: locked by a writer: kbv report and kbv merge from it still read it"
else not_ok "read a write-locked database" "$(head -c 400 "$tmp/stderr")"; fi
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null; holder=""
cp "$D/good.db" "$D/live.db"
lock "$D/live.db" exclusive
expect "db: exclusive lock mode (report)" 5 live.db "locked by another process" -- report --db "$D/live.db"
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null; holder=""

# ---- options: unknown, missing values, bad numbers, for every command --------------------------
ue() { # NAME WHAT ARGS...: exit 2, one line naming the option
    local name=$1 what=$2
    shift 2
    expect "usage: $name" 2 "" "$what" -- "$@"
}
for cmd in eval check run; do
    ue "$cmd unknown option" "unknown option '--frobnicate' (see kbv $cmd --help)" $cmd --frobnicate
    ue "$cmd missing value" "--cases needs a value" $cmd --cases
    ue "$cmd bad number" "--cases needs an integer from 1 to 100, not 'many'" $cmd --cases many
    ue "$cmd NaN" "--timeout needs seconds between 0.1 and 86400, not 'nan'" $cmd --timeout nan
    ue "$cmd bad choice" "--device must be cuda, cpu or auto, not 'tpu'" $cmd --device tpu
done
ue "eval JSON into a missing folder" "nowhere/out.json: cannot write the JSON result there: No such file or directory" eval "$P" "$C" --json "$tmp/nowhere/out.json"
ue "eval JSON into a folder" "cannot write the JSON result there: Is a directory" eval "$P" "$C" --json "$TMPDIR"
ue "run --jobs 0" "--jobs needs an integer from 1 to 64, not '0'" run --jobs 0
ue "run --gpus empty" "--gpus needs 'all' or a list like 0,1,2, not ''" run --gpus ""
ue "run --gpus 0,,1" "--gpus needs 'all' or a list like 0,1,2, not '0,,1'" run --gpus 0,,1
ue "run --gpus 0,a" "--gpus needs 'all' or a list like 0,1,2, not '0,a'" run --gpus 0,a
# --gpus counts in the GPUs this process sees (CUDA_VISIBLE_DEVICES): MIG entries are seen as
# written on any host, with or without a GPU (docs/timing.md, "Several GPUs").
CUDA_VISIBLE_DEVICES=MIG-a,MIG-b ue "run --gpus past the visible GPUs" \
    "--gpus 2: no GPU 2: this process sees 2 (CUDA_VISIBLE_DEVICES='MIG-a,MIG-b'), which --gpus counts from 0" run --gpus 2
CUDA_VISIBLE_DEVICES=MIG-a,MIG-b ue "run --gpus 1,1" "--gpus 1,1: GPU 1 is listed twice" run --gpus 1,1
CUDA_VISIBLE_DEVICES= expect "run --gpus with no GPU visible" 4 "" "--gpus all: no NVIDIA GPU visible (/proc/driver/nvidia/gpus, CUDA_VISIBLE_DEVICES '')" -- run --gpus all
CUDA_VISIBLE_DEVICES=x expect "run --gpus with a bad CUDA_VISIBLE_DEVICES" 4 "" "--gpus 0: no NVIDIA GPU visible (/proc/driver/nvidia/gpus, CUDA_VISIBLE_DEVICES 'x')" -- run --gpus 0
ue "run --shard 3/2" "--shard needs I/N with 0 <= I < N, not '3/2'" run --shard 3/2
ue "run --seed -1" "--seed needs a non-negative integer, not '-1'" run --seed -1
ue "inspect unknown option" "unknown option '--frobnicate'" inspect --frobnicate
ue "inspect missing value" "--json needs a value" inspect "$C" --json
ue "inspect JSON into a missing folder" "cannot write the JSON result there" inspect "$C" --json "$tmp/nowhere/x.json"
ue "report unknown option" "unknown option '--frobnicate'" report --frobnicate
ue "report missing value" "--db needs a value" report --db
ue "report bad format" "--format must be table, md, json, csv or html, not 'pdf'" report --format pdf
ue "report output into a missing folder" "nowhere/r.txt: cannot write the report there" report --db "$D/good.db" -o "$tmp/nowhere/r.txt"
ue "merge unknown option" "unknown option '--frobnicate'" merge --frobnicate "$D/good.db" -o "$tmp/merged.db"
ue "merge missing value" "-o needs a value" merge "$D/good.db" -o
ue "version with an argument" "unknown argument '--frobnicate'" version --frobnicate
ue "an empty command" "unknown command ''" ""
ue "an option for a command" "unknown command '--frobnicate'" --frobnicate
ue "a control character in a value" "not 'cp?u'" eval "$P" "$C" --device "$(printf 'cp\nu')"
[ -e "$tmp/merged.db" ] && not_ok "merge" "a usage error left an output database" && rm -f "$tmp/merged.db"*

echo "bad_input.sh: $((SECONDS - t_start)) s"
finish
