# lib.sh -- helpers shared by the end-to-end test scripts (sourced, not run).
# Each check prints "ok - NAME" or "not ok - NAME: why"; finish() prints the closing
# "N passed, M failed" line and sets the exit status.
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $1: $2"; }
finish() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}
# new_tmp: a temporary folder $tmp for the test, removed at exit, with TMPDIR (where the
# workers' scratch folders go) and the compile cache inside it.
# check_exit NAME WANT_EXIT PATTERN -- ARGS...: `kbv ARGS` exits with WANT_EXIT and its stderr
# matches PATTERN (grep).
check_exit() {
    local name=$1 want=$2 pattern=$3
    shift 4
    "$KBV" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    local rc=$?
    if [ "$rc" = "$want" ] && grep -q -- "$pattern" "$tmp/stderr"; then ok "$name"
    else not_ok "$name" "exit $rc (want $want): $(head -c 600 "$tmp/stderr")"; fi
}
new_tmp() {
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    export TMPDIR="$tmp/t"
    mkdir -p "$TMPDIR"
    export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$tmp/cache}
}
# No worker may outlive an evaluation: every worker (and anything it forked) has
# "kbv-worker" in its command line and runs in a scratch folder under $TMPDIR, which the
# test scripts point into their own temporary folder (so other runs on the machine are not
# counted).
leftovers() {
    local p
    for p in $(pgrep -f 'kbv-worke[r]'); do
        case "$(readlink "/proc/$p/cwd" 2>/dev/null)" in "$TMPDIR" | "$TMPDIR"/*) echo "$p" ;; esac
    done
}
# leftovers after a stop: a worker of an evaluation killed at a stop dies of its parent's
# death (SIGKILL) and may take a moment to go, a sanitized one longer: up to 10 s.
leftovers_after_stop() {
    local _
    for _ in $(seq 50); do [ -z "$(leftovers)" ] && break; sleep 0.2; done
    leftovers
}
