#!/usr/bin/env bash
# generate.sh -- kbv generate and kbv bench against the loopback stub server (tests/gen/
# stub_server.py; docs/generate.md), no internet: generation of every (problem, model, sample)
# over the three wire formats into a run folder and manifest; resume after kill -9 asks only
# for what has no answer (the stub's per-model request counts); retries after 429 and 500;
# the spending caps (exit 7); SIGTERM (exit 143); a response with no code (no_code, and a
# failure in kbv run and kbv report); the input-blind prompt; a missing API key, a refused key
# and an unreachable endpoint (one line, documented exits); the key in no file or output; and
# kbv bench end to end on the CPU, run twice (the second asks and evaluates nothing).
# Usage: KBV=/path/to/kbv tests/e2e/generate.sh   (make test-e2e sets KBV)
set -u
cd "$(dirname "$0")/../.."
KBV=${KBV:-$PWD/kbv}
ROOT=$PWD
. tests/e2e/lib.sh
new_tmp
export KBV_PROMPTS=${KBV_PROMPTS:-$ROOT/prompts}
KEY="kbv-stub-secret-$RANDOM$RANDOM-key"
export KBV_STUB_KEY=$KEY
RELU=$ROOT/examples/problems/relu.py
HARDTANH=$ROOT/examples/problems/hardtanh.py

/usr/bin/python3 tests/gen/stub_server.py --port-file "$tmp/port" --lifetime 600 >"$tmp/stub.out" 2>&1 &
stub=$!
trap 'kill $stub 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
PORT=$(cat "$tmp/port" 2>/dev/null)
if [ -z "$PORT" ]; then
    not_ok "stub server" "no port: $(cat "$tmp/stub.out")"
    finish
    exit
fi
URL=http://127.0.0.1:$PORT
count() { curl -s "$URL/stats" | jq -r --arg m "$1" '.counts[$m] // 0'; }
last_prompt() { curl -s "$URL/stats" | jq -r --arg m "$1" '.last[$m] | (.messages[0].content // .contents[0].parts[0].text // "")'; }

# models NAME:PROVIDER:MODEL_ID[:CONCURRENCY[:PRICE]] ... -- a models config on the stub
models() {
    local first=1 name prov id conc price url
    echo '{"models": ['
    for spec in "$@"; do
        IFS=: read -r name prov id conc price <<<"$spec"
        url=$URL
        [ "$prov" = openai ] && url=$URL/v1
        [ $first = 1 ] || echo ','
        first=0
        printf '{"name": "%s", "provider": "%s", "base_url": "%s", "model": "%s", "api_key_env": "KBV_STUB_KEY", "concurrency": %s, "price_in_per_mtok": %s, "price_out_per_mtok": %s}' \
            "$name" "$prov" "$url" "$id" "${conc:-2}" "${price:-0}" "${price:-0}"
    done
    echo ']}'
}
printf '{"problem": "%s"}\n{"problem": "%s", "level": 1}\n' "$RELU" "$HARDTANH" >"$tmp/two.jsonl"
printf '{"problem": "%s"}\n' "$RELU" >"$tmp/relu.jsonl"
# gen ARGS: kbv generate on the test's database, stdout and stderr into $tmp/out and $tmp/err
# (and all.log, searched for the key at the end)
gen() {
    "$KBV" generate --db "$tmp/gen.db" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    local rc=$?
    cat "$tmp/out" "$tmp/err" >>"$tmp/all.log"
    return $rc
}

# --- every (problem, model, sample), the three wire formats ---------------------------------
models oa:openai:ok-gen an:anthropic:ok-gen-b ge:gemini:ok-gen-c >"$tmp/m3.json"
gen --models "$tmp/m3.json" --manifest "$tmp/two.jsonl" --samples 2 --out "$tmp/runs"
rc=$?
files=$(find "$tmp/runs" -name 'level_*_kernel.py' | wc -l)
lines=$(wc -l <"$tmp/runs/manifest.jsonl" 2>/dev/null)
rows=$(sqlite3 "$tmp/gen.db" "SELECT COUNT(*) FROM generations WHERE status = 'ok' AND code LIKE '%class ModelNew%' AND tokens_in > 0 AND attempts = 1")
if [ "$rc" = 0 ] && [ "$files" = 12 ] && [ "$lines" = 12 ] && [ "$rows" = 12 ] && [ -f "$tmp/runs/oa/level_1_problem_2_sample_1_kernel.py" ] &&
    [ -f "$tmp/runs/ge/level_0_problem_1_sample_0_kernel.py" ] && [ "$(count ok-gen)$(count ok-gen-b)$(count ok-gen-c)" = 444 ] &&
    jq -se 'length == 12 and all(.[]; (.candidate | test("^(oa|an|ge)/level_[01]_problem_[12]_sample_[01]_kernel.py$")) and (.problem | startswith("/")))
        and ([.[] | select(.level == 1)] | length == 6)' "$tmp/runs/manifest.jsonl" >/dev/null &&
    cmp -s <(cat "$tmp/runs/an/level_0_problem_1_sample_0_kernel.py"; echo) <(sqlite3 "$tmp/gen.db" "SELECT code FROM generations WHERE model = 'an' AND problem = 1 AND sample = 0"); then
    ok "2 problems x 3 models (openai, anthropic, gemini) x 2 samples: 12 requests, 12 candidates, a 12-line manifest"
else not_ok "generation" "exit $rc, $files files, $lines manifest lines, $rows rows, counts $(count ok-gen)/$(count ok-gen-b)/$(count ok-gen-c): $(tail -3 "$tmp/err")"; fi
# The same command again asks nothing; a deleted candidate comes back from the database.
rm -f "$tmp/runs/oa/level_0_problem_1_sample_0_kernel.py"
gen --models "$tmp/m3.json" --manifest "$tmp/two.jsonl" --samples 2 --out "$tmp/runs" --quiet
rc=$?
if [ "$rc" = 0 ] && [ "$(count ok-gen)$(count ok-gen-b)$(count ok-gen-c)" = 444 ] && [ -f "$tmp/runs/oa/level_0_problem_1_sample_0_kernel.py" ] &&
    [ ! -s "$tmp/err" ] && [ "$(sqlite3 "$tmp/gen.db" "SELECT COUNT(*) FROM generations")" = 12 ]; then
    ok "a re-run asks nothing and rewrites a missing candidate from the database"
else not_ok "re-run" "exit $rc, counts $(count ok-gen)/$(count ok-gen-b)/$(count ok-gen-c): $(cat "$tmp/err")"; fi
# More samples: only the new ones are asked.
gen --models "$tmp/m3.json" --model an --manifest "$tmp/two.jsonl" --samples 3 --out "$tmp/runs" --quiet
rc=$?
if [ "$rc" = 0 ] && [ "$(count ok-gen-b)" = 6 ] && [ "$(count ok-gen)" = 4 ] && [ "$(wc -l <"$tmp/runs/manifest.jsonl")" = 6 ]; then
    ok "--model an --samples 3: only sample 2 of each problem is asked"
else not_ok "more samples" "exit $rc, an asked $(count ok-gen-b) times: $(cat "$tmp/err")"; fi

# --- resume after kill -9 -------------------------------------------------------------------
models slow:openai:slow-0.7-resume:1 >"$tmp/slow.json"
"$KBV" generate --db "$tmp/gen.db" --models "$tmp/slow.json" --manifest "$tmp/relu.jsonl" --samples 6 --out "$tmp/runs_k" --quiet \
    >>"$tmp/all.log" 2>&1 </dev/null &
pid=$!
for _ in $(seq 100); do
    n=$(sqlite3 "$tmp/gen.db" "SELECT COUNT(*) FROM generations WHERE model = 'slow'" 2>/dev/null || echo 0)
    [ "${n:-0}" -ge 2 ] && break
    sleep 0.1
done
exec 3>&2 2>/dev/null # no "Killed" notice from bash
kill -9 $pid
wait $pid
exec 2>&3 3>&-
asked=$(count slow-0.7-resume)
stored=$(sqlite3 "$tmp/gen.db" "SELECT COUNT(*) FROM generations WHERE model = 'slow' AND status = 'ok'")
gen --models "$tmp/slow.json" --manifest "$tmp/relu.jsonl" --samples 6 --out "$tmp/runs_k" --quiet
rc=$?
again=$(($(count slow-0.7-resume) - asked))
if [ "$rc" = 0 ] && [ "$stored" -ge 2 ] && [ "$stored" -lt 6 ] && [ "$again" = $((6 - stored)) ] &&
    [ "$(sqlite3 "$tmp/gen.db" "SELECT COUNT(DISTINCT sample) || '/' || COUNT(*) FROM generations WHERE model = 'slow'")" = 6/6 ] &&
    [ "$(wc -l <"$tmp/runs_k/manifest.jsonl")" = 6 ]; then
    ok "kill -9 after $stored of 6 answers: the re-run asks only for the other $again"
else not_ok "resume after kill -9" "exit $rc, $stored stored at the kill, $asked asked then, $again asked again: $(cat "$tmp/err")"; fi

# --- SIGTERM: stop, store what finished, exit 143 -------------------------------------------
models slow2:anthropic:slow-2-term:1 >"$tmp/slow2.json"
"$KBV" generate --db "$tmp/gen.db" --models "$tmp/slow2.json" --manifest "$tmp/relu.jsonl" --samples 3 --out "$tmp/runs_t" --quiet \
    >>"$tmp/all.log" 2>"$tmp/err" </dev/null &
pid=$!
sleep 1
t0=$(date +%s)
kill -TERM $pid
wait $pid
rc=$?
took=$(($(date +%s) - t0))
cat "$tmp/err" >>"$tmp/all.log"
# The request in flight is cancelled, or ends and is stored; no new one starts.
if [ "$rc" = 143 ] && [ "$took" -le 3 ] && grep -q "interrupted" "$tmp/err" && [ -f "$tmp/runs_t/manifest.jsonl" ] && [ "$(count slow-2-term)" = 1 ] &&
    [ "$(sqlite3 "$tmp/gen.db" "SELECT COUNT(*) FROM generations WHERE model = 'slow2' AND status != 'ok'")" = 0 ]; then
    ok "SIGTERM during a request: exit 143 within ${took} s, no new request, nothing half-stored"
else not_ok "SIGTERM" "exit $rc after $took s: $(cat "$tmp/err")"; fi

# --- retries after 429 (Retry-After) and 500, then an answer ---------------------------------
models r429:openai:429-2-retry:1 r500:gemini:500-2-retry:1 >"$tmp/retry.json"
gen --models "$tmp/retry.json" --manifest "$tmp/relu.jsonl" --samples 1 --out "$tmp/runs_r" --quiet
rc=$?
got=$(sqlite3 "$tmp/gen.db" "SELECT group_concat(model || ':' || status || ':' || attempts, ' ') FROM (SELECT * FROM generations WHERE model IN ('r429', 'r500') ORDER BY model)")
if [ "$rc" = 0 ] && [ "$got" = "r429:ok:3 r500:ok:3" ] && [ "$(count 429-2-retry)$(count 500-2-retry)" = 33 ]; then
    ok "429 twice (Retry-After) and 500 twice: the third attempt's answer is stored (attempts 3)"
else not_ok "retries" "exit $rc, rows '$got': $(cat "$tmp/err")"; fi

# --- the spending caps ----------------------------------------------------------------------
# "budget" reports a million tokens each way: at $1 per million, each answer costs ~$2.
models cost:openai:budget-cost:1:1 >"$tmp/cost.json"
gen --models "$tmp/cost.json" --manifest "$tmp/relu.jsonl" --samples 4 --out "$tmp/runs_c" --max-cost 3
rc=$?
if [ "$rc" = 7 ] && [ "$(count budget-cost)" = 2 ] && grep -q "stopped by the spending cap (--max-cost)" "$tmp/err" &&
    [ "$(wc -l <"$tmp/runs_c/manifest.jsonl")" = 2 ]; then
    ok "--max-cost 3 at ~\$2 a request: two requests, then exit 7 saying so"
else not_ok "--max-cost" "exit $rc, $(count budget-cost) requests: $(tail -3 "$tmp/err")"; fi
models tok:anthropic:budget-tokens:1 >"$tmp/tok.json"
gen --models "$tmp/tok.json" --manifest "$tmp/relu.jsonl" --samples 3 --out "$tmp/runs_c2" --max-tokens-total 1000 --quiet
rc=$?
if [ "$rc" = 7 ] && [ "$(count budget-tokens)" = 1 ] && grep -q "max-tokens-total" "$tmp/err"; then
    ok "--max-tokens-total 1000: one request, then exit 7"
else not_ok "--max-tokens-total" "exit $rc, $(count budget-tokens) requests: $(cat "$tmp/err")"; fi

# --- no code; the input-blind prompt --------------------------------------------------------
printf '{"problem": "%s", "input_blind": true}\n' "$RELU" >"$tmp/blind.jsonl"
models nc:gemini:nocode-x blind:openai:ok-blind >"$tmp/nc.json"
gen --models "$tmp/nc.json" --manifest "$tmp/blind.jsonl" --samples 1 --out "$tmp/runs_n" --quiet
rc=$?
row=$(sqlite3 "$tmp/gen.db" "SELECT status || '|' || (code IS NULL) || '|' || (response LIKE '%cannot write a faster kernel%') || '|' || input_blind FROM generations WHERE model = 'nc'")
prompt=$(last_prompt ok-blind)
if [ "$rc" = 0 ] && [ "$row" = "no_code|1|1|1" ] && grep -q "raise RuntimeError" "$tmp/runs_n/nc/level_0_problem_1_sample_0_kernel.py" &&
    grep -q '"model":"nc"' "$tmp/runs_n/manifest.jsonl"; then
    ok "an answer with no code block: no_code, the response kept, a candidate that fails at import, listed in the manifest"
else not_ok "no_code" "exit $rc, row '$row': $(cat "$tmp/err")"; fi
# (the example architecture keeps its get_inputs: only the problem's is cut)
if [[ "$prompt" == *"class Model(nn.Module)"* && "$prompt" == *"return torch.relu(x)"* && "$prompt" != *"dim = 8192"* &&
    "$prompt" != *"torch.rand(batch_size"* && "$(grep -c 'def get_inputs' <<<"$prompt")" = 1 && "$prompt" == *"class ModelNew"* ]]; then
    ok "input_blind: the prompt has the Model class and the example, no get_inputs and no size constants"
else not_ok "input_blind" "prompt: $(head -c 600 <<<"$prompt")"; fi

# --- a missing key, a refused key, an unreachable endpoint ------------------------------------
env -u KBV_STUB_KEY "$KBV" generate --db "$tmp/gen.db" --models "$tmp/m3.json" --manifest "$tmp/relu.jsonl" --samples 9 --out "$tmp/runs_x" \
    >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
if [ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "^kbv generate: .*KBV_STUB_KEY.* is not set" "$tmp/err" && [ "$(count ok-gen)" = 4 ]; then
    ok "a missing API key: exit 2, one line naming the variable, nothing asked"
else not_ok "missing key" "exit $rc: $(cat "$tmp/err")"; fi
models auth:openai:auth-x:1 >"$tmp/auth.json"
gen --models "$tmp/auth.json" --manifest "$tmp/relu.jsonl" --samples 4 --out "$tmp/runs_a" --quiet
rc=$?
if [ "$rc" = 6 ] && [ "$(count auth-x)" = 1 ] && grep -q "^kbv generate: model auth: 4 sample(s) without an answer; stopped asking: HTTP 401" "$tmp/err" &&
    [ "$(sqlite3 "$tmp/gen.db" "SELECT COUNT(*) FROM generations WHERE model = 'auth' AND status = 'error' AND http_status = 401")" = 1 ]; then
    ok "a key the server refuses (401): one request, the model stopped, exit 6"
else not_ok "401" "exit $rc, $(count auth-x) requests: $(cat "$tmp/err")"; fi
printf '{"models": [{"name": "gone", "provider": "openai", "base_url": "http://127.0.0.1:1/v1", "model": "x", "api_key_env": "KBV_STUB_KEY"}]}\n' >"$tmp/gone.json"
sed -i 's/"x",/"x", "concurrency": 1,/' "$tmp/gone.json"
gen --models "$tmp/gone.json" --manifest "$tmp/relu.jsonl" --samples 3 --out "$tmp/runs_g" --retries 1 --quiet
rc=$?
if [ "$rc" = 6 ] && grep -q "^kbv generate: model gone: 3 sample(s) without an answer; stopped asking: .*127.0.0.1" "$tmp/err" && grep -q "run the same command again" "$tmp/err" &&
    [ "$(sqlite3 "$tmp/gen.db" "SELECT COUNT(*) || ':' || MAX(attempts) || ':' || MAX(http_status) FROM generations WHERE model = 'gone'")" = 1:2:0 ]; then
    ok "an unreachable endpoint: one request (two attempts), the model stopped, exit 6, the error on stderr"
else not_ok "unreachable" "exit $rc: $(cat "$tmp/err")"; fi
gen --models "$tmp/m3.json" --manifest "$tmp/relu.jsonl" --model nope --out "$tmp/runs_u"
rc=$?
if [ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "no model named 'nope'" "$tmp/err"; then ok "--model with an unknown name: exit 2, one line"
else not_ok "--model nope" "exit $rc: $(cat "$tmp/err")"; fi

# --- kbv bench end to end on the CPU ---------------------------------------------------------
models good:openai:ok-bench silent:anthropic:nocode-bench >"$tmp/bench.json"
bench() {
    "$KBV" bench --models "$tmp/bench.json" --manifest "$tmp/relu.jsonl" --samples 1 --out "$tmp/runs_b" --db "$tmp/bench.db" --device cpu \
        --report "$tmp/report.md" --quiet -- --no-timing --cases 1 </dev/null
}
bench >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out" "$tmp/err" >>"$tmp/all.log"
evals=$(sqlite3 "$tmp/bench.db" "SELECT group_concat(model || ':' || status, ' ') FROM (SELECT * FROM evaluations ORDER BY model)" 2>&1)
if [ "$rc" = 0 ] && [ "$evals" = "good:verified silent:compile_error" ] && grep -q "| good |" "$tmp/report.md" && grep -q "| silent |" "$tmp/report.md" &&
    "$KBV" report --db "$tmp/bench.db" --format json 2>/dev/null | jq -e '.overall.n == 2 and .overall.verified == 1 and .overall.errors == 1' >/dev/null; then
    ok "kbv bench --device cpu: generated, evaluated (no_code a failure: compile_error) and reported"
else not_ok "bench" "exit $rc, evaluations '$evals': $(tail -5 "$tmp/err")"; fi
bench >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out" "$tmp/err" >>"$tmp/all.log"
if [ "$rc" = 0 ] && [ "$(count ok-bench)$(count nocode-bench)" = 11 ] && [ "$(sqlite3 "$tmp/bench.db" "SELECT COUNT(*) FROM evaluations")" = 2 ]; then
    ok "kbv bench again: nothing asked, nothing evaluated again"
else not_ok "bench resume" "exit $rc, counts $(count ok-bench)$(count nocode-bench): $(tail -5 "$tmp/err")"; fi

# --- the key is nowhere -----------------------------------------------------------------------
if grep -rqF -- "$KEY" "$tmp" --exclude=stub.out 2>/dev/null; then
    not_ok "the key stays secret" "found in: $(grep -rlF -- "$KEY" "$tmp" | head -5 | tr '\n' ' ')"
else ok "the API key is in no database, candidate, manifest or output"; fi
finish
