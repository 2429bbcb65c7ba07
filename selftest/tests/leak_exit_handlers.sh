#!/bin/bash
# Calls made by exit handlers (an atexit handler that fcloses, frees,
# strdups and mallocs) count as valgrind counts them, with and without the
# scan at exit (-a), under the engine the run uses ($MEMTRACE_ENGINE).  The
# agent engine used to send exit() through the agent, where the call stayed
# open forever: the handler's calls inside libc counted as made inside
# exit() (1 free instead of 2), and the scan ran at exit_group below the
# agent's frame.  Then the scan at exit itself: it runs when exit() is
# called, before the handler (the FILE and main's 33-byte block in use),
# with the same figures from both engines.
. "$MT_ROOT/selftest/tests/lib.bash"
. "$MT_ROOT/selftest/tests/leak_common.bash"
need_tool valgrind valgrind
PROG=$MT_PROGS/exit_handlers

compare_with_valgrind "$PROG"
vg=$(valgrind_summary "$PROG") || fail "valgrind failed"
"$MEMTRACE" -q -a -j -o "$MT_TMP/a.json" "$PROG" || fail "memtrace -a failed"
mt=$(memtrace_json_figures "$MT_TMP/a.json") || fail "$mt"
echo "with -a: valgrind $vg | memtrace $mt"
[ "$vg" = "$mt" ] || fail "heap figures with -a differ from valgrind's"

# The scan's moment: before the handler, so exactly the FILE and the
# 33-byte block are reachable: of valgrind's bytes allocated, all but the
# handler's 77 and 13 ("exit handler" and its NUL).  After the handler it
# would be those two.
leaks=$(leak_summary_of_json "$MT_TMP/a.json") || fail "$leaks"
read -r _ _ vbytes _ _ <<<"$vg"
echo "leaks at exit(): $leaks (expected reachable: $((vbytes - 90)) bytes in 2 blocks)"
[ "$leaks" = "0 0 0 0 0 0 $((vbytes - 90)) 2 0 0" ] ||
    fail "the scan at exit did not see what was in use when exit() was called"

# Both engines, where the agent can run: the same leak figures.
if "$MEMTRACE" --version 2>/dev/null | grep -q '^engines:.*agent'; then
    for e in ptrace agent; do
        "$MEMTRACE" -q -a -j --engine=$e -o "$MT_TMP/$e.json" "$PROG" || fail "memtrace --engine=$e -a failed"
    done
    p=$(leak_summary_of_json "$MT_TMP/ptrace.json") && a=$(leak_summary_of_json "$MT_TMP/agent.json") ||
        fail "no leak summary"
    echo "leaks: ptrace $p | agent $a"
    [ "$p" = "$a" ] || fail "the engines' scans at exit differ"
fi
echo "exit handlers' calls and the scan at exit as expected"
