#!/usr/bin/env bash
# Allocator misuse (invalid free, double free, free inside a block, realloc
# of freed memory, mismatched new/new[]/malloc vs delete/delete[]/free):
# memtrace's diagnostics equal valgrind memcheck's errors for the same run
# (title, block offset and size, and every program frame of the bad call's,
# the allocation's and the first release's stacks).  One case per run: glibc
# aborts on some, after memtrace has reported them.  Also: without --check a
# double free is an invalid free of unknown memory; the JSON "errors" array
# says what stderr says; the exit status is the program's; correct
# programs, and frees of blocks allocated before an attach, are silent.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool valgrind valgrind
cd "$MT_TMP"
PROG="$MT_PROGS/misuse"
CMP="$MT_ROOT/selftest/tests/misuse_compare.py"

for case in $("$PROG"); do
    # valgrind and memtrace run side by side (the test's time is theirs).
    valgrind -q --num-callers=30 --log-file="$case.vg" "$PROG" "$case" > /dev/null 2>&1 &
    vg_pid=$!
    expect_rc=$(bash -c '"$0" "$1" > /dev/null 2>&1; echo $?' "$PROG" "$case" 2>/dev/null)
    "$MEMTRACE" -q --check -d 30 -j -o "$case.json" "$PROG" "$case" > /dev/null 2> "$case.mt"; rc=$?
    wait $vg_pid
    [ $rc -eq $expect_rc ] || fail "$case: memtrace exit $rc, the program alone exits $expect_rc"
    python3 "$CMP" "$case.vg" "$case.mt" misuse.cpp || fail "$case: diagnostics differ (--check)"
    # The JSON errors are the ones on stderr.
    python3 - "$case.json" "$case.mt" <<'PY' || fail "$case: JSON errors differ from stderr"
import json, re, sys
errs = json.load(open(sys.argv[1]))['errors']
titles = re.findall(r'^==\d+== ((?:Invalid|Mismatched) free\(\).*)$', open(sys.argv[2]).read(), re.M)
assert [e['what'] for e in errs] == titles, (errs, titles)
for e in errs:
    fns = [f['function'] for f in e['stack'] if f['file'] and f['file'].endswith('misuse.cpp')]
    assert fns, e
    if e['block']['state'] != 'unknown':
        assert any(f['function'] for f in e['block']['alloc_stack']), e
PY
done

# Without --check, no freed-block history: a double free names no block.
for case in double_free double_delete realloc_freed; do
    "$MEMTRACE" -q -d 30 -o /dev/null "$PROG" "$case" > /dev/null 2> "$case.nocheck"
    python3 "$CMP" "$case.vg" "$case.nocheck" misuse.cpp --no-history ||
        fail "$case: diagnostics without --check"
done

# Correct programs are silent: no error from a C and a C++ program that
# free everything they allocate the right way.
for prog in alloc_mix unwind_cxx; do
    [ -x "$MT_PROGS/$prog" ] || continue
    "$MEMTRACE" -q --check -o /dev/null "$MT_PROGS/$prog" > /dev/null 2> "$prog.err"
    ! grep -E 'Invalid free|Mismatched free' "$prog.err" || fail "$prog: misuse reported in a correct program"
done
# operator delete(void*, size_t) jumps to operator delete(void*), which
# jumps to free: one release, counted once (valgrind's figures; its
# libstdc++ pool freeing at exit is off, as a real run never does it).
for args in "$MT_PROGS/unwind_cxx" "$PROG mismatches"; do
    vg=$(valgrind_summary --run-cxx-freeres=no $args) || fail "valgrind failed on $args"
    mt=$(memtrace_summary $args 2>/dev/null) || fail "memtrace failed on $args"
    echo "valgrind: $vg | memtrace: $mt | $args"
    [ "$vg" = "$mt" ] || fail "C++ releases counted differently from valgrind: $args"
done

# Attached to a running program, the blocks allocated before the attach
# are unknown: freeing them is not a misuse, with or without --check.
# The program runs until killed below: with 400,000 rounds (about a second
# untraced) it ended before the console's first `status` on a loaded
# machine, and memtrace with it.
"$MT_PROGS/mt_churn" 2 400000000 > /dev/null &
churn=$!
wait_until 10 "2 threads in mt_churn" threads_at_least $churn 3
console_open attach.out -q --check -p $churn
console_wait_allocs
printf 'quit\n' >&3
wait $CONSOLE_PID || fail "attach: memtrace failed: $(cat attach.out.err)"
exec 3>&-
cp attach.out.err attach.err
kill $churn 2>/dev/null
wait $churn 2>/dev/null
grep -q 'HEAP SUMMARY' attach.out || fail "attach: no report"
! grep -E 'Invalid free|Mismatched free' attach.err || fail "attach: frees of blocks older than the attach reported"
echo ok
