#!/usr/bin/env bash
# native.sh -- native candidates (docs/native.md; src/worker/loader_native.c) on the CPU: a C
# file with kbv_forward compiled by the system's compiler, loaded through the loader seam and
# checked as any candidate. The honest ReLU is verified; one with weights gets the model's
# parameters (and is verified through the weight cases); a wrong one is incorrect; a compile
# error is compile_error with the compiler's message; a file without kbv_forward, or built
# against another ABI version, is a load failure that says so; a nonzero return is
# runtime_error with the code and the candidate's message; kbv inspect scans the file as C.
# Usage: KBV=/path/to/kbv tests/e2e/native.sh   (make test-e2e sets KBV)
set -u
cd "$(dirname "$0")/../.."
KBV=${KBV:-$PWD/kbv}
. tests/e2e/lib.sh
new_tmp
P=$PWD/examples/problems
N=$PWD/examples/native

# run NAME PROBLEM CANDIDATE: kbv eval on the CPU, the result in $tmp/NAME.json. Untimed: the
# verdicts here are the cases' and the loader's; the CPU's timing detectors (value_cache) on a
# loaded 2-core machine would add noise, not information.
run() { "$KBV" eval "$2" "$3" --device cpu --no-timing --json "$tmp/$1.json" >"$tmp/$1.out" 2>"$tmp/$1.err" </dev/null; }
# check NAME JQ WHAT: the result of run NAME satisfies JQ
check() {
    if jq -e "$2" "$tmp/$1.json" >/dev/null 2>&1; then ok "$3"
    else not_ok "$3" "$(jq -c '{status, errors, flags: [.flags[]?.id]}' "$tmp/$1.json" 2>/dev/null | head -c 1500) $(tail -c 500 "$tmp/$1.err")"; fi
}

run relu "$P/relu.py" "$N/relu.c"
check relu '.status == "verified" and (.cases | length) > 0 and all(.cases[]; .pass != false)' \
    "native relu.c verified on relu.py (compiled by cc, called through kbv_forward)"

run linear "$P/linear_relu.py" "$N/linear_relu.c"
check linear '.status == "verified" and .weights.matched == true' \
    "native linear_relu.c verified: fc.weight and fc.bias arrive after x (named_parameters order), redrawn weights included"

run wrong "$P/relu.py" "$N/relu_wrong.c"
check wrong '.status == "incorrect"' "native relu_wrong.c (an off-by-one index) is incorrect"

run overfit "$P/relu.py" "$N/relu_overfit.c"
check overfit '.status == "overfit"' "native relu_overfit.c (a leaky ReLU: right on U[0,1) only) is overfit"

# --- failures, each a small file written here ------------------------------------------------
cat >"$tmp/syntax.c" <<'C'
#include "kbv_native.h"
int kbv_forward(const kbv_native_tensor *in, int n, kbv_native_tensor *out, int m, void *s) { return this_is_not_declared; }
C
run syntax "$P/relu.py" "$tmp/syntax.c"
check syntax '.status == "compile_error" and ((.errors // "") | tostring | test("this_is_not_declared"))' \
    "a C compile error is compile_error with the compiler's message"

cat >"$tmp/noentry.c" <<'C'
#include "kbv_native.h"
int kbv_forwards(void) { return 0; }
C
run noentry "$P/relu.py" "$tmp/noentry.c"
check noentry '.status == "compile_error" and ((.errors // "") | tostring | test("defines no kbv_forward"))' \
    "a file without kbv_forward is a load failure (compile_error) that names the missing entry point"

cat >"$tmp/oldabi.c" <<'C'
#define KBV_NATIVE_NO_VERSION_SYMBOL
#include "kbv_native.h"
__attribute__((visibility("default"))) const int kbv_native_abi_version = 999;
int kbv_forward(const kbv_native_tensor *in, int n, kbv_native_tensor *out, int m, void *s) { return 0; }
C
run oldabi "$P/relu.py" "$tmp/oldabi.c"
check oldabi '.status == "compile_error" and ((.errors // "") | tostring | test("version 999"))' \
    "a shared object built against another kbv_native.h version is refused at load"

cat >"$tmp/fails.c" <<'C'
#include "kbv_native.h"
const char *kbv_native_error(void) { return "no kernel for this shape"; }
int kbv_forward(const kbv_native_tensor *in, int n, kbv_native_tensor *out, int m, void *s) { return 7; }
C
run fails "$P/relu.py" "$tmp/fails.c"
check fails '.status == "runtime_error" and ((.errors // "") | tostring | test("kbv_forward returned 7: no kernel for this shape"))' \
    "kbv_forward returning nonzero is runtime_error with the code and kbv_native_error's message"

run cuda_on_cpu "$P/relu.py" "$N/relu.cu"
check cuda_on_cpu '.status == "compile_error" and ((.errors // "") | tostring | test("--device cuda"))' \
    "a .cu candidate with --device cpu is refused at load, saying to use --device cuda"

# --- kbv inspect: the file is C, not Python -----------------------------------------------------
if "$KBV" inspect "$N/relu.c" --json - >"$tmp/inspect.json" 2>"$tmp/inspect.err" &&
    jq -e 'has("syntax_error") | not' "$tmp/inspect.json" >/dev/null &&
    jq -e '.kernels == [] and [.findings[].id] == ["static_no_kernel"]' "$tmp/inspect.json" >/dev/null &&
    "$KBV" inspect "$N/relu.cu" --json - 2>/dev/null | jq -e '.kernels == ["relu_kernel"] and .launched == ["relu_kernel"] and .findings == []' >/dev/null; then
    ok "kbv inspect scans native files as C/CUDA: no Python syntax error, relu.cu's kernel found and launched"
else not_ok "kbv inspect native" "$(head -c 800 "$tmp/inspect.json") $(cat "$tmp/inspect.err")"; fi

[ -z "$(leftovers)" ] && ok "no worker left behind" || not_ok "leftovers" "$(leftovers)"
finish
