#!/usr/bin/env bash
# exchange.sh -- kbv import and kbv export (docs/results.md, "Exchange with KernelBench"):
# KernelBench's two eval_results.json formats and the paper harness's, written by hand under
# tests/fixtures/exchange/, imported and counted by kbv report under the protocol they came
# from; the paper leaderboard's re-threshold (--fp32-tolerance); a CPU kbv run (--protocol all)
# exported in both formats, with the paper's eval_results_hidden.json, and parsed back with
# Python; round trips; and malformed files, which exit 2 with one line on stderr and leave no
# database made or changed.
# Usage: KBV=/path/to/kbv tests/e2e/exchange.sh   (make test-e2e sets KBV)
set -u
cd "$(dirname "$0")/../.."
KBV=${KBV:-$PWD/kbv}
. tests/e2e/lib.sh
new_tmp
F=$PWD/tests/fixtures/exchange
KB=$F/KernelBench
E=$PWD/examples/candidates
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)

# expect NAME WANT_RC WHAT -- kbv ARGS...: exit WANT_RC, stderr one line "kbv <command>: ..." saying WHAT
expect() {
    local name=$1 want=$2 what=$3
    shift 4
    "$KBV" "$@" >"$tmp/stdout" 2>"$tmp/stderr" </dev/null
    local rc=$? lines
    lines=$(wc -l <"$tmp/stderr")
    if [ "$rc" != "$want" ]; then not_ok "$name" "exit $rc, want $want: $(head -c 500 "$tmp/stderr")"
    elif [ "$lines" != 1 ]; then not_ok "$name" "stderr has $lines lines, want 1: $(head -c 500 "$tmp/stderr")"
    elif ! grep -q "^kbv $1: " "$tmp/stderr"; then not_ok "$name" "stderr does not start with 'kbv $1: ': $(cat "$tmp/stderr")"
    elif ! grep -qF -- "$what" "$tmp/stderr"; then not_ok "$name" "stderr does not say '$what': $(cat "$tmp/stderr")"
    elif grep -qE 'Sanitizer|runtime error:' "$tmp/stdout" "$tmp/stderr"; then not_ok "$name" "sanitizer report"
    else ok "$name (exit $rc)"; fi
}
report() { "$KBV" report --db "$1" --format json 2>"$tmp/report.err"; }

# --- KernelBench's current format, problems named by a checkout, a baseline ------------------
"$KBV" import --kernelbench-results "$F/kb_run" --model kb --level 1 --kernelbench "$KB" --baseline "$F/baseline_tf32.json" \
    --db "$tmp/kb.db" 2>"$tmp/err"
rc=$?
report "$tmp/kb.db" >"$tmp/kb.json"
if [ "$rc" = 0 ] && grep -q "kernelbench): 5 evaluation(s) of model kb, level 1" "$tmp/err" && jq -e '
    .evaluations == {"stored": 5, "distinct": 5} and
    (.overall | .n == 5 and .verified == 0 and .overfit == 0 and .incorrect == 0 and .hack == 0 and .errors == 0 and
        .fast_p["0"] == 0 and
        (.standard | .correct == 2 and .evaluated == 5 and .fast_p["0"] == 0.4 and .fast_p["1"] == 0.2)) and
    (.models | keys == ["kb"]) and (.levels | keys == ["1"]) and
    all(.rows[]; .status == "imported") and
    ([.rows[].problem] | unique == ["19_ReLU", "1_Square_matrix_multiplication_", "23_Softmax"]) and
    ([.rows[] | select(.problem == "19_ReLU") | .std_speedup] == [2, null]) and
    ([.rows[].candidate] | index("level_1_problem_19_sample_0_kernel") != null)' "$tmp/kb.json" >/dev/null; then
    ok "import KernelBench's eval_results.json: status imported, counted under the standard protocol only (2 of 5 correct, speedups from the baseline)"
else not_ok "import kernelbench" "exit $rc $(cat "$tmp/err") $(jq -c '{evaluations, overall, rows}' "$tmp/kb.json" 2>/dev/null | head -c 1500)"; fi
# The stored columns: std_* from the file's verdicts, kbv's own verdict columns empty.
got=$(sqlite3 "$tmp/kb.db" "SELECT group_concat(std_status || '/' || std_correct, ' ') FROM (SELECT * FROM evaluations ORDER BY json_extract(result, '$.imported.problem_id'), sample);
    SELECT COUNT(*) FROM evaluations WHERE protocol = 'standard' AND speedup IS NULL AND peak_ratio IS NULL AND accuracy_class IS NULL;
    SELECT json_extract(settings, '$.format') || ' ' || json_extract(settings, '$.model') FROM runs;" 2>&1 | tr '\n' '|')
if [ "$got" = "verified/1 incorrect/0 verified/1 compile_error/0 runtime_error/0|5|kernelbench kb|" ]; then
    ok "KernelBench's verdicts as std_status (compile and runtime errors told apart); a run of its own naming the file"
else not_ok "stored columns" "$got"; fi
# The same import again adds nothing.
"$KBV" import --kernelbench-results "$F/kb_run/eval_results.json" --model kb --level 1 --kernelbench "$KB" --baseline "$F/baseline_tf32.json" \
    --db "$tmp/kb.db" 2>"$tmp/err"
rc=$?
if [ "$rc" = 0 ] && grep -q ": 0 evaluation(s) .*; 5 already there" "$tmp/err" && report "$tmp/kb.db" | jq -e '.evaluations == {"stored": 5, "distinct": 5}' >/dev/null; then
    ok "importing the same files again adds nothing"
else not_ok "re-import" "exit $rc $(cat "$tmp/err")"; fi
# The file's strings are data: an escape sequence in its metadata reaches no report.
if "$KBV" report --db "$tmp/kb.db" --format table >"$tmp/t.txt" && "$KBV" report --db "$tmp/kb.db" --format md >"$tmp/t.md" &&
    ! grep -q $'\x1b' "$tmp/t.txt" "$tmp/t.md" "$tmp/kb.json"; then
    ok "an imported file's escape sequences reach no report"
else not_ok "hostile strings" "$(grep -c $'\x1b' "$tmp/t.txt" "$tmp/t.md" "$tmp/kb.json")"; fi

# --- KernelBench's older format, problems without a checkout --------------------------------
"$KBV" import --kernelbench-results "$F/kb_legacy.json" --model old --level 1 --db "$tmp/legacy.db" --quiet 2>"$tmp/err"
rc=$?
if [ "$rc" = 0 ] && [ ! -s "$tmp/err" ] && report "$tmp/legacy.db" | jq -e '
    (.overall | .n == 2 and .standard.correct == 1 and .standard.evaluated == 2) and
    ([.rows[].problem] | sort == ["level1/problem_1", "level1/problem_19"])' >/dev/null &&
    [ "$(sqlite3 "$tmp/legacy.db" "SELECT DISTINCT json_extract(result, '$.imported.format') FROM evaluations")" = kernelbench_legacy ]; then
    ok "import KernelBench's older format ({\"P\": sample}); problems named level1/problem_P without a checkout"
else not_ok "import legacy" "exit $rc $(cat "$tmp/err") $(report "$tmp/legacy.db" | jq -c '{overall, rows}' | head -c 800)"; fi

# --- the paper harness's flat format, gated by its hidden file, with both baselines ----------
"$KBV" import --kernelbench-results "$F/paper_run/eval_results.json" --hidden "$F/paper_run/eval_results_hidden.json" \
    --baseline "$F/baseline_tf32.json" --baseline-fp32 "$F/baseline_fp32.json" --kernelbench "$KB" --model paper --level 1 --db "$tmp/paper.db" 2>"$tmp/err"
rc=$?
got=$(sqlite3 -separator ' ' "$tmp/paper.db" "SELECT json_extract(result, '$.imported.problem_id') || '_' || sample, paper_status, paper_correct,
    json_extract(result, '$.paper.standard_correct'), json_extract(result, '$.paper.hidden_correct'), ifnull(paper_speedup, '-'),
    ifnull(json_extract(result, '$.paper.speedup_fp32'), '-'), ifnull(json_extract(result, '$.paper.memory.ratio'), '-'),
    ifnull(std_status, 'none') FROM evaluations ORDER BY json_extract(result, '$.imported.problem_id'), sample" 2>&1 | tr '\n' '|')
want="1_0 verified 1 1 1 2.0 4.0 2.0 none|1_1 overfit 0 1 0 - - 0.666666666666667 none|19_0 incorrect 0 1 0 - - 2.0 none|19_1 incorrect 0 0 0 - - - none|23_0 compile_error 0 0 0 - - - none|"
if [ "$rc" = 0 ] && [ "$got" = "$want" ] && report "$tmp/paper.db" | jq -e '.overall | .n == 5 and .verified == 0 and .standard == null' >/dev/null; then
    ok "import the paper harness's file: hidden-gated (a failed hidden config: overfit; no hidden entry: not correct), TF32 and fp32 speedups, memory ratio"
else not_ok "import paper" "exit $rc $(cat "$tmp/err"); got $got; want $want"; fi
if "$KBV" report --db "$tmp/paper.db" --format table >"$tmp/p.txt" 2>&1 && ! grep -q $'\x1b' "$tmp/p.txt"; then
    ok "kbv report reads a database of paper imports"
else not_ok "report paper" "$(head -c 400 "$tmp/p.txt")"; fi

# --- the paper leaderboard's re-threshold (--fp32-tolerance) -----------------------------------
# paper_rethreshold/: hidden failures, each hand-computed at T = 1e-3:
#   1_0  no hidden_failed_configs ([] is none), max_difference 0.0005, "", 0.0008: max 0.0008 < T: flipped, correct
#   1_1  hidden_failed_configs [config_3] (max_difference 0.0002): kept, overfit
#   1_2  hidden_failed_configs [config_1, config_4]: kept, incorrect (a failed x1 draw)
#   19_0 max_difference 0.0009, 0.0015: 0.0015 >= T: kept;  19_1 max 0.001 = T, not below: kept
#   23_0 runtime_error (max 0.0001): kept, runtime_error;   23_1 hidden_runtime_error: kept, runtime_error
R=$F/paper_rethreshold
rtq="SELECT json_extract(result, '$.imported.problem_id') || '_' || sample, paper_status, paper_correct,
    json_extract(result, '$.paper.standard_correct'), json_extract(result, '$.paper.hidden_correct'),
    ifnull(json_extract(result, '$.imported.rethresholded.tolerance') || '/' || json_extract(result, '$.imported.rethresholded.max_difference'), '-')
    FROM evaluations ORDER BY json_extract(result, '$.imported.problem_id'), sample"
"$KBV" import --kernelbench-results "$R" --hidden "$R/eval_results_hidden.json" --fp32-tolerance 1e-3 --model rt --level 1 --db "$tmp/rt.db" 2>"$tmp/err"
rc=$?
got=$(sqlite3 -separator ' ' "$tmp/rt.db" "$rtq; SELECT json_extract(settings, '$.fp32_tolerance') FROM runs" 2>&1 | tr '\n' '|')
want="1_0 verified 1 0 1 0.001/0.0008|1_1 overfit 0 1 0 -|1_2 incorrect 0 1 0 -|19_0 incorrect 0 0 0 -|19_1 incorrect 0 0 0 -|23_0 runtime_error 0 0 0 -|23_1 runtime_error 0 1 0 -|0.001|"
if [ "$rc" = 0 ] && [ "$got" = "$want" ]; then
    ok "--fp32-tolerance 1e-3: a failure of the standard trials only under 1e-3 flips (recorded in imported.rethresholded, the run's settings name T); hidden_failed_configs, runtime errors, max_difference >= T do not"
else not_ok "re-threshold" "exit $rc $(cat "$tmp/err"); got $got; want $want"; fi
"$KBV" import --kernelbench-results "$R" --hidden "$R/eval_results_hidden.json" --model rt --level 1 --db "$tmp/rt0.db" --quiet 2>"$tmp/err"
rc=$?
got=$(sqlite3 -separator ' ' "$tmp/rt0.db" "$rtq; SELECT ifnull(json_extract(settings, '$.fp32_tolerance'), 'none') FROM runs" 2>&1 | tr '\n' '|')
want="1_0 incorrect 0 0 0 -|1_1 overfit 0 1 0 -|1_2 incorrect 0 1 0 -|19_0 incorrect 0 0 0 -|19_1 incorrect 0 0 0 -|23_0 runtime_error 0 0 0 -|23_1 runtime_error 0 1 0 -|none|"
if [ "$rc" = 0 ] && [ "$got" = "$want" ]; then
    ok "without --fp32-tolerance the hidden file's verdict stands (1_0 not correct, nothing re-thresholded, no fp32_tolerance in the settings)"
else not_ok "no re-threshold" "exit $rc $(cat "$tmp/err"); got $got; want $want"; fi

# --- bad input: exit 2, one line, no database made, an existing one unchanged -----------------
cp "$tmp/kb.db" "$tmp/keep.db"
sum_before=$(sqlite3 "$tmp/keep.db" "SELECT COUNT(*), group_concat(key) FROM evaluations")
bad() { # NAME WHAT FILE [options]: into a new database and into an existing one
    local name=$1 what=$2 file=$3
    shift 3
    expect "import: $name" 2 "$what" -- import --kernelbench-results "$file" --model m --level 1 --db "$tmp/new.db" "$@"
    [ -e "$tmp/new.db" ] && { not_ok "import: $name" "a database was made"; rm -f "$tmp/new.db"*; }
    "$KBV" import --kernelbench-results "$file" --model m --level 1 --db "$tmp/keep.db" "$@" 2>/dev/null
    [ "$(sqlite3 "$tmp/keep.db" "SELECT COUNT(*), group_concat(key) FROM evaluations")" = "$sum_before" ] ||
        not_ok "import: $name" "an existing database changed"
}
mkdir -p "$tmp/emptydir"
bad "truncated JSON" "bad_truncated.json:1: not JSON" "$F/bad_truncated.json"
bad "a string for correctness" "entry \"1\", sample 0: \"correctness\" must be true or false, not a string" "$F/bad_type.json"
bad "two formats mixed" "mixes formats" "$F/bad_mixed.json"
bad "sample_id against its key" "\"sample_id\" is 2, but its key says sample 1" "$F/bad_sample_id.json"
bad "missing file" "no-such.json: No such file or directory" "$tmp/no-such.json"
bad "/dev/zero" "/dev/zero: not a regular file" /dev/zero
bad "a folder without eval_results.json" "emptydir/eval_results.json: No such file or directory" "$tmp/emptydir"
bad "--hidden with KernelBench's format" "--hidden goes with the paper harness's" "$F/kb_run" --hidden "$F/paper_run/eval_results_hidden.json"
bad "a hidden file in KernelBench's format" "not the paper harness's format" "$F/paper_run" --hidden "$F/kb_run/eval_results.json"
bad "a baseline without the level" "not a baseline_time file with \"level1\"" "$F/kb_run" --baseline "$F/kb_legacy.json"
bad "a checkout without the level" "no folder level1 in it" "$F/kb_run" --kernelbench "$tmp/emptydir"
mkdir -p "$tmp/kbpart/level1" && cp "$KB/level1/1_"*.py "$KB/level1/19_"*.py "$tmp/kbpart/level1/"
bad "a problem missing from the checkout" "problem 23 (sample 0) has no file" "$F/kb_run" --kernelbench "$tmp/kbpart"
expect "import: no --model" 2 "give --kernelbench-results FILE, --model NAME and --level L" -- import --kernelbench-results "$F/kb_run" --level 1
expect "import: --level 0" 2 "--level needs an integer from 1 to 100" -- import --kernelbench-results "$F/kb_run" --model m --level 0
expect "import: a control character in --model" 2 "--model needs a name" -- import --kernelbench-results "$F/kb_run" --model $'a\tb' --level 1
expect "import: unknown option" 2 "unknown option '--bogus'" -- import --bogus
bad "--fp32-tolerance without --hidden" "--fp32-tolerance re-thresholds the hidden file's failures: it goes with --hidden" "$R" --fp32-tolerance 1e-3
expect "import: --fp32-tolerance 0" 2 "--fp32-tolerance needs a number above 0" -- import --kernelbench-results "$R" --hidden "$R/eval_results_hidden.json" \
    --fp32-tolerance 0 --model m --level 1 --db "$tmp/new.db"
expect "import: --fp32-tolerance not a number" 2 "--fp32-tolerance needs a number above 0" -- import --kernelbench-results "$R" \
    --hidden "$R/eval_results_hidden.json" --fp32-tolerance 1e-3x --model m --level 1 --db "$tmp/new.db"
printf 'not a database, 100 bytes of text.........................................................\n' >"$tmp/notdb.db"
expect "import: a database that is not one" 5 "not a SQLite database" -- import --kernelbench-results "$F/kb_run" --model m --level 1 --db "$tmp/notdb.db"

# --- round trips of the fixtures ---------------------------------------------------------------
"$KBV" export --db "$tmp/kb.db" --protocol standard -o "$tmp/kb_out.json" 2>"$tmp/err" &&
    "$KBV" import --kernelbench-results "$F/kb_legacy.json" --model old --level 1 --db "$tmp/legacy.db" --quiet &&
    "$KBV" export --db "$tmp/legacy.db" --protocol standard -o "$tmp/legacy_out.json" 2>>"$tmp/err" &&
    "$KBV" import --kernelbench-results "$F/paper_run" --model nohidden --level 1 --db "$tmp/paper2.db" --quiet &&
    "$KBV" export --db "$tmp/paper2.db" --format kbv-paper --protocol paper -o "$tmp/paper_out.json" 2>>"$tmp/err" &&
    "$KBV" export --db "$tmp/paper.db" --format kbv-paper --protocol paper -o "$tmp/gated_out.json" 2>>"$tmp/err" &&
    "$KBV" export --db "$tmp/paper.db" --format kbv-paper --protocol paper -o "$tmp/pair_out.json" --hidden "$tmp/pair_hidden.json" 2>>"$tmp/err" &&
    "$KBV" export --db "$tmp/rt.db" --format kbv-paper --protocol paper -o "$tmp/rt_out.json" --hidden "$tmp/rt_hidden.json" 2>>"$tmp/err"
rc=$?
if [ "$rc" = 0 ] && "$PY" - "$F" "$tmp" <<'EOF'; then
import json, sys
F, T = sys.argv[1], sys.argv[2]
load = lambda p: json.load(open(p))
kb, legacy, paper = load(F + "/kb_run/eval_results.json"), load(F + "/kb_legacy.json"), load(F + "/paper_run/eval_results.json")
assert load(T + "/kb_out.json") == kb, "KernelBench's format did not come back as it went in"
assert list(load(T + "/kb_out.json")) == ["1", "19", "23"], "problems not in numeric order"
assert load(T + "/legacy_out.json") == {k: [v] for k, v in legacy.items()}, "the older format did not come back as the current one"
assert load(T + "/paper_out.json") == paper, "the paper's format did not come back as it went in"
gated = load(T + "/gated_out.json")
want = {k: dict(v, correctness=k == "1_0") for k, v in paper.items()}  # the hidden file's gating
assert gated == want, {k: (gated[k]["correctness"], want[k]["correctness"]) for k in gated}
# export --hidden: the pair comes back as it went in (the standard verdict in one, the hidden
# file's entries in the other; none for 19_0, which had none)
assert load(T + "/pair_out.json") == paper, "eval_results.json of the pair is not the file imported"
assert load(T + "/pair_hidden.json") == load(F + "/paper_run/eval_results_hidden.json"), "the hidden file did not come back"
# a re-thresholded import: its hidden entry now correct, everything else as it came
R = F + "/paper_rethreshold"
assert load(T + "/rt_out.json") == load(R + "/eval_results.json")
rh, want = load(T + "/rt_hidden.json"), load(R + "/eval_results_hidden.json")
want["1_0"]["correctness"] = True
assert rh == want, {k: rh[k]["correctness"] for k in rh}
EOF
    ok "round trips: KernelBench's file, its older one (as the current format) and the paper's come back as they went in; --hidden gates correctness; export --hidden gives back the hidden file (with a re-threshold's verdict)"
else not_ok "fixture round trips" "exit $rc $(cat "$tmp/err")"; fi

# --- export of a CPU kbv run: a KernelBench run folder evaluated by kbv ----------------------
mkdir -p "$tmp/runs/alpha"
cp "$E/relu/honest_cpu.py" "$tmp/runs/alpha/level_1_problem_19_sample_0_kernel.py"
cp "$E/shortcuts/relu_identity.py" "$tmp/runs/alpha/level_1_problem_19_sample_1_kernel.py"
cp "$E/matmul_fp32/honest_cpu.py" "$tmp/runs/alpha/level_1_problem_1_sample_0_kernel.py"
cp "$E/broken/syntax_error.py" "$tmp/runs/alpha/level_1_problem_1_sample_1_kernel.py"
cp "$E/broken/wrong_values.py" "$tmp/runs/alpha/level_1_problem_19_sample_2_kernel.py"
# --protocol all: kbv's verdict, KernelBench's standard check and the paper's protocol of each
"$KBV" run --kernelbench "$KB" --runs "$tmp/runs" --db "$tmp/run.db" --device cpu --protocol all --cases 1 --time-budget 0.2 \
    --standard-trials 5 --seed 5 --quiet 2>"$tmp/err"
rc=$?
for p in verified standard; do
    "$KBV" export --db "$tmp/run.db" --protocol $p -o "$tmp/run_$p.json" 2>>"$tmp/err" || rc=$?
done
"$KBV" export --db "$tmp/run.db" --format kbv-paper -o - >"$tmp/run_paper.json" 2>>"$tmp/err" || rc=$?
if [ "$rc" = 0 ] && "$PY" - "$tmp" <<'EOF'; then
import json, sys
T = sys.argv[1]
v, s, p = (json.load(open("%s/run_%s.json" % (T, x))) for x in ("verified", "standard", "paper"))
fields = ["sample_id", "compiled", "correctness", "metadata", "runtime", "runtime_stats"]
for d in (v, s):
    assert list(d) == ["1", "19"], list(d)  # ids from the problem files 1_*.py and 19_*.py
    for k, samples in d.items():
        assert [x["sample_id"] for x in samples] == [0, 1, 2][:len(samples)] and len(samples) == (2 if k == "1" else 3), samples
        for x in samples:
            assert list(x) == fields, list(x)
            assert isinstance(x["compiled"], bool) and isinstance(x["correctness"], bool) and isinstance(x["runtime"], float)
            assert x["runtime"] > 0 or not x["correctness"], x  # a correct sample is timed
# kbv's verdicts: correct when verified; the identity kernel is a hack, the syntax error no build
for x in v["1"] + v["19"]:
    assert x["correctness"] == (x["metadata"]["kbv_status"] == "verified"), x
    assert x["runtime"] < 0 or x["runtime"] == x["runtime_stats"]["median"], x  # kbv's median time
assert v["19"][1]["correctness"] is False and v["19"][1]["metadata"]["kbv_status"] == "hack"
assert v["1"][1]["compiled"] is False and v["1"][1]["metadata"]["kbv_status"] == "compile_error"
# KernelBench's own check passes the identity on its U[0,1) inputs
assert [x["correctness"] for x in s["19"]] == [True, True, False] and s["19"][1]["metadata"]["kbv_protocol"] == "standard"
assert s["19"][0]["runtime_stats"]["num_trials"] == 5, s["19"][0]
assert list(p) == ["1_0", "1_1", "19_0", "19_1", "19_2"], list(p)
for k, x in p.items():
    assert list(x) == fields + ["peak_memory", "memory_stats"], list(x)
    assert x["peak_memory"] == -1.0 and x["memory_stats"] == {}  # no GPU memory on the CPU
    assert x["correctness"] == v[k.split("_")[0]][int(k.split("_")[1])]["correctness"]
EOF
    ok "export a CPU kbv run as KernelBench's and the paper's eval_results.json (verified and standard verdicts, kbv's times)"
else not_ok "export of a run" "exit $rc $(tail -c 600 "$tmp/err")"; fi
# Round trip: the standard export imported (named by the same checkout) and exported again.
"$KBV" import --kernelbench-results "$tmp/run_standard.json" --kernelbench "$KB" --model alpha --level 1 --db "$tmp/back.db" --quiet 2>"$tmp/err" &&
    "$KBV" export --db "$tmp/back.db" --protocol standard -o "$tmp/back.json" --quiet 2>>"$tmp/err"
rc=$?
if [ "$rc" = 0 ] && cmp -s "$tmp/run_standard.json" "$tmp/back.json" &&
    [ "$(report "$tmp/back.db" | jq -c '.overall.standard | [.correct, .evaluated, .fast_p["0"]]')" = \
        "$(report "$tmp/run.db" | jq -c '.overall.standard | [.correct, .evaluated, .fast_p["0"]]')" ] &&
    [ "$(sqlite3 "$tmp/back.db" "SELECT COUNT(DISTINCT e.problem_id) FROM evaluations e JOIN problems p ON p.id = e.problem_id")" = 2 ]; then
    ok "round trip: kbv's standard export, imported, exports the same bytes and reports the same standard counts"
else not_ok "run round trip" "exit $rc $(cat "$tmp/err") $(diff "$tmp/run_standard.json" "$tmp/back.json" | head -20)"; fi

# --- the paper's hidden file of the CPU run, imported back -------------------------------------
# kbv's paper verdicts of the run: 1_0 and 19_0 verified; 1_1 compile_error; 19_1 (the identity
# "ReLU") passes the five U[0,1) trials and x1, x3, x0.01, fails x-1 (config_4): overfit; 19_2
# (ReLU x 0.5) fails the trials by about 0.5: incorrect, with no variant run.
"$KBV" export --db "$tmp/run.db" --format kbv-paper --protocol paper -o "$tmp/pm.json" --hidden "$tmp/ph.json" 2>"$tmp/err"
rc=$?
if [ "$rc" = 0 ] && grep -q "5 sample(s) written to .*pm.json, 5 hidden entries to .*ph.json" "$tmp/err" && "$PY" - "$tmp" <<'EOF'; then
import json, sys
T = sys.argv[1]
m, h = json.load(open(T + "/pm.json")), json.load(open(T + "/ph.json"))
assert list(m) == list(h) == ["1_0", "1_1", "19_0", "19_1", "19_2"], (list(m), list(h))
fields = ["sample_id", "compiled", "correctness", "metadata", "runtime", "runtime_stats", "peak_memory", "memory_stats"]
for k, x in h.items():
    assert list(x) == fields, list(x)
    assert x["runtime"] == -1.0 and x["runtime_stats"] == {} and x["peak_memory"] == -1.0 and x["memory_stats"] == {}, x  # hidden runs measure nothing
    assert x["sample_id"] == int(k.split("_")[1]) and x["metadata"]["kbv_protocol"] == "paper"
# eval_results.json has the standard trials' verdict, the hidden file the gated one
assert {k: x["correctness"] for k, x in m.items()} == {"1_0": True, "1_1": False, "19_0": True, "19_1": True, "19_2": False}
assert {k: x["correctness"] for k, x in h.items()} == {"1_0": True, "1_1": False, "19_0": True, "19_1": False, "19_2": False}
assert m["19_0"]["runtime"] > 0 and m["19_1"]["runtime"] == -1.0  # the paper times correct kernels only
assert h["1_1"]["compiled"] is False and "SyntaxError" in h["1_1"]["metadata"]["compilation_error"]
md = h["19_1"]["metadata"]
assert md["correctness_trials"] == "(5 / 5)" and md["hidden_failed_configs"] == ["config_4"], md  # x-1 is config_4
assert md["hidden_correctness_trials"] == "(3/4 hidden configs passed)", md
assert len(md["hidden_max_difference"]) == 1 and md["hidden_max_difference"][0].startswith("config_4: "), md
assert 0.9 < float(md["hidden_max_difference"][0].split(": ")[1]) <= 1.0, md  # relu(-x) = 0 against -x, x in [0, 1)
assert h["1_0"]["metadata"]["hidden_correctness_trials"] == "(4/4 hidden configs passed)"
assert "hidden_failed_configs" not in h["1_0"]["metadata"]
md = h["19_2"]["metadata"]
assert md["correctness_trials"] == "(0 / 5)" and "hidden_correctness_trials" not in md and "hidden_failed_configs" not in md, md
assert len(md["max_difference"]) == 1 and 0.4 < float(md["max_difference"][0]) <= 0.5, md  # relu(x) / 2 against relu(x)
assert md["correctness_issue"] == "Output mismatch", md
EOF
    ok "export --hidden of a CPU --protocol all run: the paper's eval_results_hidden.json (gated verdict, config_4 = x-1 failed, max differences, no measurements)"
else not_ok "export --hidden of a run" "exit $rc $(cat "$tmp/err")"; fi
# Imported back (--hidden), the paper verdicts are kbv's own; re-thresholded at 1, the trials'
# 0.5 failure flips and nothing else changes.
verdicts() { sqlite3 -separator ' ' "$1" "SELECT p.name, e.sample, e.paper_status, e.paper_correct FROM evaluations e JOIN problems p ON p.id = e.problem_id
    ORDER BY p.name, e.sample" 2>&1 | tr '\n' '|'; }
"$KBV" import --kernelbench-results "$tmp/pm.json" --hidden "$tmp/ph.json" --kernelbench "$KB" --model alpha --level 1 --db "$tmp/pback.db" --quiet 2>"$tmp/err" &&
    "$KBV" import --kernelbench-results "$tmp/pm.json" --hidden "$tmp/ph.json" --fp32-tolerance 1 --kernelbench "$KB" --model alpha --level 1 \
        --db "$tmp/pback1.db" --quiet 2>>"$tmp/err"
rc=$?
want="19_ReLU 0 verified 1|19_ReLU 1 overfit 0|19_ReLU 2 incorrect 0|1_Square_matrix_multiplication_ 0 verified 1|1_Square_matrix_multiplication_ 1 compile_error 0|"
if [ "$rc" = 0 ] && [ "$(verdicts "$tmp/run.db")" = "$want" ] && [ "$(verdicts "$tmp/pback.db")" = "$want" ] &&
    [ "$(verdicts "$tmp/pback1.db")" = "${want/19_ReLU 2 incorrect 0/19_ReLU 2 verified 1}" ]; then
    ok "round trip: the run's paper verdicts, exported with --hidden and imported with it, are the same; --fp32-tolerance 1 flips only the 0.5 trial failure"
else not_ok "hidden round trip" "exit $rc $(cat "$tmp/err"); run $(verdicts "$tmp/run.db"); back $(verdicts "$tmp/pback.db"); T=1 $(verdicts "$tmp/pback1.db")"; fi

# --- export's errors ---------------------------------------------------------------------------
"$KBV" import --kernelbench-results "$F/kb_run" --model second --level 1 --db "$tmp/kb.db" --quiet
expect "export: two runs of one problem and sample" 2 "two evaluations are problem 1 sample 0" -- export --db "$tmp/kb.db" --protocol standard -o "$tmp/x.json"
if "$KBV" export --db "$tmp/kb.db" --protocol standard --model second -o "$tmp/x.json" --quiet && [ "$($PY -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$tmp/x.json")" = 3 ]; then
    ok "export --model picks one run's"
else not_ok "export --model" "$(head -c 300 "$tmp/x.json")"; fi
expect "export: nothing under that protocol" 2 "nothing to export" -- export --db "$tmp/kb.db" --protocol paper -o "$tmp/x.json"
expect "export: imports have no verified verdict" 2 "an imported one has only the protocol it came with" -- export --db "$tmp/legacy.db" -o "$tmp/x.json"
expect "export: a missing database" 2 "no-such.db: No such file or directory" -- export --db "$tmp/no-such.db" -o "$tmp/x.json"
expect "export: an output folder that does not exist" 2 "cannot write the file there" -- export --db "$tmp/kb.db" -o "$tmp/no/such/x.json"
expect "export: a bad --format" 2 "--format must be kernelbench or kbv-paper" -- export --db "$tmp/kb.db" --format csv -o "$tmp/x.json"
expect "export: a bad --protocol" 2 "--protocol must be verified, standard or paper" -- export --db "$tmp/kb.db" --protocol both -o "$tmp/x.json"
expect "export: -o the database itself" 2 "is the database itself" -- export --db "$tmp/kb.db" --protocol standard -o "$tmp/kb.db"
sqlite3 "$tmp/kb.db" "SELECT COUNT(*) FROM evaluations" >/dev/null 2>&1 || not_ok "export -o the database" "the database was overwritten"
expect "export: no -o" 2 "give -o FILE" -- export --db "$tmp/kb.db"
expect "export: --hidden with KernelBench's format" 2 "it goes with --format kbv-paper --protocol paper" -- export --db "$tmp/run.db" \
    --protocol paper -o "$tmp/hx.json" --hidden "$tmp/hxh.json"
expect "export: --hidden under the verified protocol" 2 "it goes with --format kbv-paper --protocol paper" -- export --db "$tmp/run.db" \
    --format kbv-paper -o "$tmp/hx.json" --hidden "$tmp/hxh.json"
expect "export: --hidden the same file as -o" 2 "-o and --hidden name the same file" -- export --db "$tmp/run.db" --format kbv-paper \
    --protocol paper -o "$tmp/hx.json" --hidden "$tmp/hx.json"
expect "export: --hidden to stdout" 2 "--hidden needs a file, not stdout" -- export --db "$tmp/run.db" --format kbv-paper --protocol paper \
    -o "$tmp/hx.json" --hidden -
expect "export: --hidden in a folder that does not exist" 2 "cannot write the file there" -- export --db "$tmp/run.db" --format kbv-paper \
    --protocol paper -o "$tmp/hx.json" --hidden "$tmp/no/such/hxh.json"
[ -e "$tmp/hx.json" ] || [ -e "$tmp/hxh.json" ] && not_ok "export --hidden errors" "a file was written"
expect "export: a database that is not one" 5 "not a SQLite database" -- export --db "$tmp/notdb.db" -o "$tmp/x.json"
finish
