#!/usr/bin/env bash
# memtrace's own mappings in the target (scratch pages, return stubs, the
# agent and its shared region) must not move the program's: the kernel,
# without address randomization, puts every mmap without a hint, a
# malloc'd block above the mmap threshold, a thread's stack, a dlopen'ed
# library and the program break where it puts them in an untraced run
# (layout_probe prints each address).  The oracle is the untraced run of
# the same program under setarch -R, launched and attached (-p) before the
# program maps anything.  Run under each engine (trace_layout@ptrace).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool setarch util-linux
cd "$MT_TMP"
PROG=$MT_PROGS/layout_probe
engine=${MEMTRACE_ENGINE:-}
norand=(setarch "$(uname -m)" -R)

"${norand[@]}" "$PROG" > untraced.out || fail "untraced run failed"
"${norand[@]}" "$PROG" > untraced2.out || fail "second untraced run failed"
cmp -s untraced.out untraced2.out || fail "two untraced runs differ: $(diff untraced.out untraced2.out)"
[ "$(wc -l < untraced.out)" -ge 11 ] || fail "layout_probe printed: $(cat untraced.out)"

# Launched: memtrace starts it.
"${norand[@]}" "$MEMTRACE" -q -o launched.txt "$PROG" > launched.out 2> launched.err ||
    fail "memtrace failed: $(tail -3 launched.err)"
grep -q 'HEAP SUMMARY' launched.txt || fail "no report from the launched run"
diff untraced.out launched.out > launched.diff ||
    fail "launched: the program's mappings moved (< untraced, > traced): $(cat launched.diff)"
echo "launched (${engine:-default engine}): $(wc -l < launched.out) addresses as untraced"

# Attached: it waits for ctl/go before mapping anything; the untraced run
# of the same program waits too.
mkdir -p ctl0 ctl && touch ctl0/go
"${norand[@]}" "$PROG" "$MT_TMP/ctl0" > untraced_wait.out || fail "untraced waiting run failed"
"${norand[@]}" "$PROG" "$MT_TMP/ctl" > attached.out &
prog=$!
trap 'exec 3>&-; kill "$prog" "${CONSOLE_PID:-}" 2>/dev/null' EXIT
wait_for_line attached.out '^probe: ready$'
console_open attached.txt -q -p "$prog"
console_cmd status
touch ctl/go
wait "$prog" || fail "the attached program failed"
printf 'quit\n' >&3
wait "$CONSOLE_PID" || fail "memtrace -p failed: $(tail -3 attached.txt.err)"
exec 3>&-
trap - EXIT
grep -q 'HEAP SUMMARY' attached.txt || fail "no report from the attached run"
diff untraced_wait.out attached.out > attached.diff ||
    fail "attached: the program's mappings moved (< untraced, > traced): $(cat attached.diff)"
echo "attached (${engine:-default engine}): $(($(wc -l < attached.out) - 1)) addresses as untraced"
exit 0
