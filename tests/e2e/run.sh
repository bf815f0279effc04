#!/usr/bin/env bash
# run.sh -- kbv's end-to-end CLI tests in --device cpu mode (no GPU needed).
# Runs every line of cases.txt (a line may end in " @jq EXPR", a check of the result JSON),
# then the checks below that need more than a status.
# Usage: KBV=/path/to/kbv tests/e2e/run.sh   (make test-e2e sets KBV)
set -u
cd "$(dirname "$0")/../.."
KBV=${KBV:-$PWD/kbv}
. tests/e2e/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TMPDIR="$tmp/t"
mkdir -p "$TMPDIR"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$tmp/cache}

# eval_case NAME EXPECT_STATUS EXPECT_EXIT PROBLEM CANDIDATE [OPTIONS...]
eval_case() {
    local name=$1 want=$2 want_rc=$3 prob=$4 cand=$5
    shift 5
    mkdir -p "$TMPDIR/scratch"
    local t0=$SECONDS
    "$KBV" eval "$prob" "$cand" --device cpu --quiet --timeout 120 --cases 1 --seed 7 \
        --scratch "$TMPDIR/scratch" --json "$tmp/out.json" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    local rc=$?
    local got
    got=$(jq -r .status "$tmp/out.json" 2>/dev/null || echo "(no JSON)")
    local left
    left=$(leftovers)
    if [ "$rc" != "$want_rc" ] || [ "$got" != "$want" ]; then
        not_ok "$name" "status $got exit $rc, expected $want exit $want_rc; stderr: $(tail -c 600 "$tmp/stderr"); errors: $(jq -r .errors "$tmp/out.json" 2>/dev/null | tail -c 800); findings: $(jq -c '[.flags[] | select(.severity != "info") | {id, message}]' "$tmp/out.json" 2>/dev/null | head -c 1200)"
    elif [ -n "${EXPECT_JQ:-}" ] && ! jq -e "$EXPECT_JQ" "$tmp/out.json" >/dev/null 2>&1; then
        not_ok "$name" "the result does not satisfy: $EXPECT_JQ; result: $(jq -c 'del(.inputs, .steps_s, .inspect, .sandbox)' "$tmp/out.json" 2>/dev/null | head -c 1500)"
    elif [ "$want" = verified ] && jq -e '[.flags[].id] | index("writes_outside_scratch")' "$tmp/out.json" >/dev/null; then
        not_ok "$name" "an honest candidate flagged writes_outside_scratch: $(jq -c '.flags' "$tmp/out.json")"
    elif [ -n "$left" ]; then
        not_ok "$name" "processes left behind: $(ps -o pid,args -p "$(echo $left | tr ' ' ,)" 2>/dev/null)"
        kill -9 $left 2>/dev/null
    elif [ -n "$(ls -A "$TMPDIR/scratch")" ]; then
        not_ok "$name" "scratch folder not removed: $(ls -A "$TMPDIR/scratch")"
        rm -rf "$TMPDIR/scratch"/*
    else
        ok "$name ($got, $((SECONDS - t0)) s)"
    fi
}

# A case line may end in " @jq EXPR": the result JSON must also satisfy the jq expression.
while read -r status rc prob cand opts; do
    case "$status" in ""|\#*) continue ;; esac
    expect=
    case " $opts" in *" @jq "*) expect=${opts#*@jq } opts=${opts%%@jq *} ;; esac
    # shellcheck disable=SC2086
    EXPECT_JQ=$expect eval_case "$(basename "$(dirname "$cand")")/$(basename "$cand") on $(basename "$prob")" "$status" "$rc" "$prob" "$cand" $opts
done < tests/e2e/cases.txt

P=examples/problems/relu.py
HONEST=examples/candidates/relu/honest_cpu.py

# --- usage errors exit 2 and name the problem ---------------------------------------
check_usage() {
    local name=$1 pattern=$2
    shift 2
    "$KBV" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    local rc=$?
    if [ "$rc" = 2 ] && grep -q -- "$pattern" "$tmp/stderr"; then ok "usage: $name"
    else not_ok "usage: $name" "exit $rc, stderr: $(cat "$tmp/stderr")"; fi
}
check_usage "no command" "usage: kbv"
check_usage "unknown command" "unknown command 'frobnicate'" frobnicate
check_usage "unknown option" "unknown option '--bogus'" eval "$P" "$HONEST" --bogus
check_usage "one file" "give both" eval "$P"
check_usage "three files" "too many arguments" eval "$P" "$HONEST" "$HONEST"
check_usage "bad device" "--device must be" eval "$P" "$HONEST" --device tpu
check_usage "bad timeout" "--timeout needs" eval "$P" "$HONEST" --timeout -1
check_usage "missing value" "--seed needs a value" eval "$P" "$HONEST" --seed
check_usage "bad protocol" "--protocol must be" eval "$P" "$HONEST" --protocol fast
check_usage "check needs one file" "give one PROBLEM.py" check
if "$KBV" eval --help | grep -q -- "--json FILE|-" && "$KBV" --help | grep -q "eval"; then ok "--help"
else not_ok "--help" "help text lacks the options"; fi

# --- the JSON contract ----------------------------------------------------------------
"$KBV" eval "$P" "$HONEST" --device cpu --seed 11 --cases 2 --protocol both --json - 2>"$tmp/stderr" >"$tmp/out.json"
if jq -e '
    .status == "verified" and .device == "cpu" and .seed == "11" and .protocol == "both" and
    .accuracy_class == "fp32" and .oracle == "float64" and
    (.problem | .path and .name == "relu" and (.sha256 | length == 64)) and
    (.candidate | .path and .name == "honest_cpu" and (.sha256 | length == 64)) and
    (.cases | length == 10) and
    ([.cases[].distribution] == ["nominal","nominal","normal","normal","uniform_shifted","uniform_shifted",
                                 "mixed_magnitude","mixed_magnitude","heavy_tailed","heavy_tailed"]) and
    all(.cases[]; (.seed | type == "string") and .passed == true and (.domain | type == "string") and
        (.max_abs_err | type == "number") and (.max_rel_err | type == "number") and
        (.tolerance.norm_rel | type == "number") and .accuracy_class == "fp32") and
    (.inputs.plan[0].make == "gen") and
    (.standard | .correct == true and .trials == 5 and .trials_passed == 5 and .tolerance == 0.0001) and
    (.flags | type == "array") and (.errors | type == "string") and
    .audit == {"candidate": null, "reference": null}' "$tmp/out.json" >/dev/null &&
    grep -q "kbv eval: verified" "$tmp/stderr"; then
    ok "--json - prints the contract's fields on stdout, the summary on stderr"
else
    not_ok "--json -" "$(head -c 3000 "$tmp/out.json")"
fi

# --- every finding counts: a hack the standard protocol's worker sees decides the status -------
# (issue #21) The candidate turns TF32 on inside forward only when it was built under
# KernelBench's seed 42, as the standard protocol builds it: the verified protocol alone sees
# nothing; under --protocol both the standard step's guard finding enters the one verdict,
# while standard.status keeps KernelBench's own verdict (it counts no finding).
TF=examples/candidates/matmul_fp32/tf32_under_kernelbench.py
"$KBV" eval examples/problems/matmul_fp32.py "$TF" --device cpu --cases 1 --seed 7 --no-timing --protocol both --quiet \
    --json "$tmp/both.json" >/dev/null 2>&1
rc_both=$?
"$KBV" eval examples/problems/matmul_fp32.py "$TF" --device cpu --cases 1 --seed 7 --no-timing --quiet --json "$tmp/ver.json" >/dev/null 2>&1
rc_ver=$?
if [ "$rc_both" = 1 ] && [ "$rc_ver" = 0 ] &&
    jq -e '.status == "hack" and .standard.status == "verified" and .standard.correct and all(.cases[]; .passed) and
        any(.flags[]; .id == "global_flag_change" and .severity == "hack" and .evidence.worker == "standard")' "$tmp/both.json" >/dev/null &&
    jq -e '.status == "verified" and (.flags | map(.id) | index("global_flag_change")) == null' "$tmp/ver.json" >/dev/null; then
    ok "a hack found in the standard protocol's step counts: hack under --protocol both (KernelBench's verdict: verified), verified without it"
else not_ok "standard-step finding" "exit $rc_both and $rc_ver; $(jq -c '{status, standard: .standard.status, flags}' "$tmp/both.json" 2>/dev/null | head -c 1200)"; fi

# --- the accuracy class of a bf16 shortcut is "half" -------------------------------------
"$KBV" eval examples/problems/matmul_fp32.py examples/candidates/shortcuts/matmul_bf16.py --device cpu --cases 1 \
    --quiet --json "$tmp/bf16.json" >/dev/null 2>&1
if jq -e '.accuracy_class == "half" and .status == "hack" and (.flags | map(.id) | index("precision_downgrade")) != null' "$tmp/bf16.json" >/dev/null; then
    ok "bfloat16 arithmetic for an fp32 matmul is classed half and caught as precision_downgrade"
else not_ok "bf16 class" "$(jq -c '{status, accuracy_class}' "$tmp/bf16.json")"; fi

# --- weights: same names and shapes, other values under the same seed -> loaded, flagged ----
"$KBV" eval examples/problems/linear_relu.py examples/candidates/linear_relu/honest_cpu.py --device cpu --cases 1 --no-timing \
    --quiet --json "$tmp/w.json" >/dev/null 2>&1
if jq -e '.status == "verified" and .weights.loaded == true and (.flags | map(.id) | index("weights_loaded")) != null' \
    "$tmp/w.json" >/dev/null; then
    ok "a candidate whose weights differ under the same seed gets the reference's, and says so"
else not_ok "weights" "$(jq -c '{status, weights, flags}' "$tmp/w.json")"; fi

# --- a contiguous copy where the reference returns a view: verified, the layout reported -------
"$KBV" eval examples/problems/transpose_view.py examples/candidates/transpose_view/contiguous_cpu.py --device cpu --cases 1 \
    --no-timing --quiet --json "$tmp/strides.json" >/dev/null 2>&1
if jq -e '.status == "verified" and (.flags | map(.id) | index("stride_mismatch")) != null' "$tmp/strides.json" >/dev/null; then
    ok "an output with other strides than the reference's is judged on its values and reported as stride_mismatch"
else not_ok "strides" "$(jq -c '{status, flags}' "$tmp/strides.json")"; fi

# --- kbv check: the reference side alone, with domain fallback and skips reported ---------
"$KBV" check examples/problems/kl_div.py --device cpu --cases 1 --seed 4 --quiet --json "$tmp/check.json" >/dev/null 2>&1
rc=$?
if [ "$rc" = 0 ] && jq -e '.status == "problem_ok" and ([.cases[] | select(.distribution != "nominal") | .domain] | all(. != "raw")) and
    ([.cases[] | select(.distribution != "nominal") | .fallback_reason] | all(test("NaN or Inf in domain (raw|abs)")))' \
    "$tmp/check.json" >/dev/null; then
    ok "kbv check reports the domain each hidden case needed and why (kl_div: none raw)"
else not_ok "kbv check" "exit $rc $(jq -c '[.cases[] | .domain]' "$tmp/check.json" 2>/dev/null)"; fi
if jq -e '.steps_s["reference.probe"] | has("get_inputs_s") and has("copy_s") and has("scan_s")' "$tmp/check.json" >/dev/null &&
    jq -e '.steps_s["reference.forward"] | .n >= 10 and has("compute_s") and has("save_s") and has("load_s") and .s >= .compute_s' \
        "$tmp/check.json" >/dev/null; then
    ok "steps_s splits the wall time by worker command (probe and forward with their parts)"
else not_ok "steps_s" "$(jq -c '.steps_s' "$tmp/check.json" 2>/dev/null)"; fi
# The probe: three draws of get_inputs(), two where one draw is over 1 GiB.
"$KBV" check tests/fixtures/large/probe_large.py --device cpu --cases 1 --seed 4 --quiet --json "$tmp/large.json" >/dev/null 2>&1
rc=$?
if [ "$rc" = 0 ] && jq -e '.status == "problem_ok" and .inputs.probe[0].probes == 2' "$tmp/large.json" >/dev/null &&
    jq -e '.inputs.probe | all(.probes == 3)' "$tmp/check.json" >/dev/null; then
    ok "the probe takes three draws of get_inputs(), two of an input over 1 GiB"
else not_ok "probe draws" "exit $rc $(jq -c '[.inputs.probe[].probes]' "$tmp/large.json" "$tmp/check.json" 2>/dev/null)"; fi
"$KBV" check examples/problems/broken/no_model.py --device cpu --quiet >/dev/null 2>&1
rc=$?
if [ "$rc" = 3 ]; then ok "kbv check of a broken problem exits 3"; else not_ok "kbv check broken" "exit $rc"; fi

# --- weight cases (issue #21): the reference's floating state redrawn ------------------------
# BatchNorm and LayerNorm as built are all constants (ones, zeros): the six are redrawn, the
# running_var kept positive (else the weight cases' oracle has no real value and they are
# skipped), the integer counter and the 0/1 mask kept as built (the candidate makes the mask on
# the fly); both weight cases run on a fresh ModelNew and pass, and the timing after them runs
# on the weights as built again (its hidden checks would see a reference left redrawn).
"$KBV" eval tests/fixtures/weights/norm_stack.py tests/fixtures/weights/norm_stack_honest.py --device cpu --seed 5 --cases 1 --quiet \
    --json "$tmp/weights.json" >/dev/null 2>&1
rc=$?
if [ "$rc" = 0 ] && jq -e '.status == "verified" and .timing.measured and .timing.hidden_checks.failed == 0 and
    .weights.matched and .weights.redrawn == 6 and .weights.kept == 1 and .weights.cases == 2 and .weights.skipped == null and
    (.weights.print | test("^[0-9a-f]{16}$")) and
    ([.cases[] | select(.weights)] | map(.distribution) == ["weights_nominal", "weights_normal"] and all(.passed and (.skipped | not))) and
    ([.cases[] | select(.weights | not)] | length == 5)' "$tmp/weights.json" >/dev/null; then
    ok "weight cases: BatchNorm/LayerNorm constants redrawn (variance positive), counter and mask kept, a fresh ModelNew verified"
else not_ok "weight cases" "exit $rc $(jq -c '{status, weights, cases: [.cases[] | {distribution, passed, skipped, skip_reason, detail}]}' "$tmp/weights.json" 2>/dev/null | head -c 1500)"; fi

# --- the same seed gives the same cases; a crash does not disturb the next evaluation --
"$KBV" eval "$P" "$HONEST" --device cpu --seed 99 --cases 1 --json "$tmp/a.json" --quiet >/dev/null 2>&1
"$KBV" eval "$P" examples/candidates/broken/segfault.py --device cpu --seed 99 --cases 1 --json "$tmp/crash.json" --quiet >/dev/null 2>&1
"$KBV" eval "$P" "$HONEST" --device cpu --seed 99 --cases 1 --json "$tmp/b.json" --quiet >/dev/null 2>&1
if [ "$(jq -r .status "$tmp/crash.json")" = crash ] && [ "$(jq -c "[.cases[] | del(.time_s)]" "$tmp/a.json")" = "$(jq -c "[.cases[] | del(.time_s)]" "$tmp/b.json")" ] &&
    [ "$(jq -r .status "$tmp/b.json")" = verified ] && [ -z "$(leftovers)" ]; then
    ok "an evaluation after a crashed one is unaffected (same cases, verified, nothing left running)"
else
    not_ok "after a crash" "crash=$(jq -c .status "$tmp/crash.json") a=$(jq -c .cases "$tmp/a.json") b=$(jq -c .cases "$tmp/b.json")"
fi
s1=$(jq -r '.cases[0].seed' "$tmp/a.json")
"$KBV" eval "$P" "$HONEST" --device cpu --seed 100 --cases 1 --json "$tmp/c.json" --quiet >/dev/null 2>&1
if [ "$s1" != "$(jq -r '.cases[0].seed' "$tmp/c.json")" ]; then ok "different run seeds give different case seeds"
else not_ok "seeds" "seed 99 and 100 gave the same case seed $s1"; fi

# --- evidence: crashes carry the fatal signal and the Python stack ----------------------
if jq -r .errors "$tmp/crash.json" | grep -q "signal 11" && jq -r .errors "$tmp/crash.json" | grep -q "segfault.py"; then
    ok "a segfault's evidence names the signal and the candidate's line"
else not_ok "segfault evidence" "$(jq -r .errors "$tmp/crash.json")"; fi

# --- hundreds of megabytes on stdout: capped, flagged, and fast ---------------------------
t0=$SECONDS
"$KBV" eval "$P" examples/candidates/broken/print_flood.py --device cpu --cases 1 --json "$tmp/flood.json" --quiet >/dev/null 2>&1
if jq -e '(.flags | map(.id) | index("output_truncated")) != null and (.output.candidate_stdout | length) < 1000000' \
    "$tmp/flood.json" >/dev/null && [ $((SECONDS - t0)) -lt 60 ]; then
    ok "300 MB on stdout is capped below 1 MB and flagged ($((SECONDS - t0)) s)"
else not_ok "print flood" "$(jq -c '.flags' "$tmp/flood.json")"; fi

# --- a hang is cut at the timeout ------------------------------------------------------------
t0=$SECONDS
"$KBV" eval "$P" examples/candidates/broken/infinite_loop.py --device cpu --cases 1 --timeout 3 --quiet >/dev/null 2>&1
if [ $((SECONDS - t0)) -lt 30 ] && [ -z "$(leftovers)" ]; then ok "an infinite loop is killed within the timeout"
else not_ok "timeout" "took $((SECONDS - t0)) s"; fi

# --- the built-in default (no files) --------------------------------------------------------
"$KBV" eval --device cpu --cases 1 --json "$tmp/default.json" --quiet >/dev/null 2>&1
if [ "$(jq -r .status "$tmp/default.json")" = verified ]; then ok "kbv eval with no files evaluates the built-in example"
else not_ok "default" "$(jq -r .errors "$tmp/default.json" 2>/dev/null)"; fi

# --- timing on the CPU clock (the GPU path is tests/gpu) -----------------------------------
"$KBV" eval "$P" "$HONEST" --device cpu --seed 5 --cases 1 --protocol both --json "$tmp/time.json" --quiet >/dev/null 2>&1
if jq -e '.status == "verified" and .timing.measured == true and .timing.clock == "cpu_monotonic" and
    .timing.rounds >= 10 and .timing.rechecks >= 2 and .timing.rechecks_failed == 0 and
    (.speedup.value > 0) and (.speedup.ci95[0] <= .speedup.value and .speedup.value <= .speedup.ci95[1]) and
    (.time_ms.candidate | .samples >= 10 and .q1 <= .median and .median <= .q3) and
    (.time_ms.reference.samples == .time_ms.candidate.samples) and .time_ms.reference_strict == null and
    .memory.peak_bytes_candidate == null and .audit.candidate == null and
    (.standard.speedup > 0) and .standard.time_ms.trials == 100' "$tmp/time.json" >/dev/null; then
    ok "timing: speedup with its CI, quartiles, re-checked outputs, KernelBench's speedup beside it"
else not_ok "timing fields" "$(jq -c '{status, speedup, time_ms, timing, standard}' "$tmp/time.json")"; fi
# A/A: the reference itself as the candidate is about as fast as the reference.
{ cat "$P"; printf '\nModelNew = Model\n'; } >"$tmp/aa.py"
"$KBV" eval "$P" "$tmp/aa.py" --device cpu --seed 5 --cases 1 --json "$tmp/aa.json" --quiet >/dev/null 2>&1
if jq -e '.status == "verified" and .speedup.value > 0.5 and .speedup.value < 2' "$tmp/aa.json" >/dev/null; then
    ok "A/A: the reference against a copy of itself measures $(jq -r '.speedup.value * 1000 | round / 1000' "$tmp/aa.json")x"
else not_ok "A/A" "$(jq -c '{status, speedup, errors}' "$tmp/aa.json")"; fi
# Placements: relu's 4 MiB of inputs in 32 MiB of copies on the CPU, in both workers; the
# outputs held back agree with the rule (a short call holds up to 8, a longer one none); no
# graphs and no per-process offset off the GPU.
if jq -e '.timing.placements as $p | $p.reference.input_slots == 8 and $p.candidate.input_slots == 8 and
    ([$p.reference.held_outputs, $p.candidate.held_outputs] | all(. == 0 or . == 8)) and
    $p.reference.graphs == 0 and .timing.process_offset == null and ([.flags[].id] | index("short_call") | not)' \
    "$tmp/aa.json" >/dev/null; then
    ok "timing spreads each worker's samples over 8 copies of relu's inputs (and held outputs: $(jq -c '[.timing.placements[].held_outputs]' "$tmp/aa.json"))"
else not_ok "placements" "$(jq -c '{placements: .timing.placements, process_offset: .timing.process_offset, flags}' "$tmp/aa.json")"; fi
"$KBV" eval "$P" "$HONEST" --device cpu --seed 5 --cases 1 --no-timing --json "$tmp/nt.json" --quiet >/dev/null 2>&1
if jq -e '.status == "verified" and .speedup == null and .timing.measured == false and (.timing.note | test("no-timing"))' \
    "$tmp/nt.json" >/dev/null; then ok "--no-timing judges correctness only"
else not_ok "--no-timing" "$(jq -c '{status, speedup, timing}' "$tmp/nt.json")"; fi
"$KBV" eval "$P" examples/candidates/broken/wrong_values.py --device cpu --seed 5 --cases 1 --json "$tmp/wv.json" --quiet >/dev/null 2>&1
if jq -e '.status == "incorrect" and .speedup == null and (.timing.note | test("verified"))' "$tmp/wv.json" >/dev/null; then
    ok "an incorrect candidate is not timed, and the result says why"
else not_ok "incorrect not timed" "$(jq -c '{status, speedup, timing}' "$tmp/wv.json")"; fi
check_usage "bad time budget" "--time-budget needs" eval "$P" "$HONEST" --time-budget 0
check_usage "bad standard trials" "--standard-trials needs" eval "$P" "$HONEST" --standard-trials 1.5
# --- kbv inspect: the source, statically ----------------------------------------------------
"$KBV" inspect examples/hacks/unused_kernel.py --json "$tmp/ins.json" >"$tmp/stdout" 2>&1
rc=$?
if [ "$rc" = 0 ] && jq -e '.load_inline == true and .kernels == ["relu_fast_kernel"] and (.launched | index("relu_fast_kernel")) != null' \
    "$tmp/ins.json" >/dev/null && grep -q "relu_fast_kernel" "$tmp/stdout"; then
    ok "kbv inspect lists the kernels a file defines and launches"
else not_ok "kbv inspect" "exit $rc $(cat "$tmp/ins.json" 2>/dev/null | head -c 600)"; fi
"$KBV" inspect examples/hacks/try_except_fallback.py --json - 2>/dev/null >"$tmp/ins2.json"
if jq -e '[.findings[].id] | (index("static_try_except") != null)' "$tmp/ins2.json" >/dev/null &&
    jq -e 'all(.findings[]; .severity != "hack")' "$tmp/ins2.json" >/dev/null; then
    ok "kbv inspect: a try/except around load_inline is suspect, never hack"
else not_ok "kbv inspect findings" "$(head -c 800 "$tmp/ins2.json")"; fi
"$KBV" inspect tests/fixtures/kernel_names.py --json "$tmp/ins3.json" >/dev/null 2>&1
if jq -e '.kernels == ["k2","relu_kernel","tiled_mm"] and .triton_kernels == ["add_kernel"]' "$tmp/ins3.json" >/dev/null &&
    "$KBV" inspect "$HONEST" --json - 2>/dev/null | jq -e '.kernels == [] and .triton_kernels == [] and [.findings[] | .id + ":" + .severity] == ["static_no_kernel:info"]' >/dev/null; then
    ok "kbv inspect names __global__ kernels (templates, __launch_bounds__, extern \"C\", declarations) and triton.jit ones, once each; a file with none is static_no_kernel"
else not_ok "kbv inspect kernel names" "$(cat "$tmp/ins3.json" 2>/dev/null | head -c 400)"; fi
# Every other static_ finding, with its catalogue severity (src/finding.h), from one file that
# holds one instance of each pattern.
"$KBV" inspect examples/candidates/inspect/static_patterns.py --json "$tmp/ins4.json" >/dev/null 2>&1
if jq -e '[.findings[] | .id + ":" + .severity] | sort == ["static_ctypes:suspect", "static_environment_sniffing:suspect",
    "static_exec:suspect", "static_file_access:suspect", "static_global_flags:suspect", "static_kernel_not_launched:suspect",
    "static_monkeypatch:suspect", "static_network_or_process:suspect", "static_precision_casts:info",
    "static_profiler_tampering:suspect", "static_streams:info", "static_subclasses_reference:info", "static_threads:suspect",
    "static_try_except:suspect"]' "$tmp/ins4.json" >/dev/null; then
    ok "kbv inspect reports each of the fourteen other static patterns once, at its catalogue severity"
else not_ok "kbv inspect static patterns" "$(jq -c '[.findings[] | .id + ":" + .severity]' "$tmp/ins4.json" 2>/dev/null | head -c 800)"; fi
check_usage "inspect needs a file" "give one CANDIDATE.py" inspect
check_usage "inspect missing file" "No such file" inspect /nonexistent/cand.py
check_usage "bad library policy" "--library-only must be" eval "$P" "$HONEST" --library-only maybe
# --- a degenerate problem: the reference's output one constant over every case ---------------
"$KBV" eval examples/problems/min_clamp_zero.py examples/candidates/relu/honest_cpu.py --device cpu --cases 1 --no-timing \
    --quiet --json "$tmp/degen.json" >/dev/null 2>&1
"$KBV" eval "$P" "$HONEST" --device cpu --cases 1 --no-timing --quiet --json "$tmp/nondegen.json" >/dev/null 2>&1
if jq -e '.degenerate.constant == true and .degenerate.value == 0 and .degenerate.cases >= 3' "$tmp/degen.json" >/dev/null &&
    jq -e '.degenerate.constant == false' "$tmp/nondegen.json" >/dev/null; then
    ok "a problem whose reference output is 0 for any input is degenerate (constant over every case); relu is not"
else not_ok "degenerate problem" "$(jq -c '.degenerate' "$tmp/degen.json" "$tmp/nondegen.json" 2>/dev/null)"; fi
# --- a missing worker is exit 4 ---------------------------------------------------------------
KBV_WORKER=/nonexistent/kbv-worker "$KBV" eval "$P" "$HONEST" --device cpu >/dev/null 2>"$tmp/stderr"
rc=$?
if [ "$rc" = 4 ] && grep -q "nonexistent" "$tmp/stderr"; then ok "a missing worker is exit 4 with its path"
else not_ok "missing worker" "exit $rc: $(cat "$tmp/stderr")"; fi

finish
