#!/usr/bin/env bash
# C++ exceptions thrown out of an intercepted function (issue 29, case 1):
# libstdc++'s operator new[] failing with std::bad_alloc (except_std) and
# a program's own operator new throwing it (except_own), caught in main,
# caught in a frame above a deeper caller, and by a second thread at once.
# Under each engine this machine can run, the program prints exactly what
# it prints untraced and exits the same way (before the fix the unwinder
# met a frame without unwind information and std::terminate ran: exit 134).
# except_inner: an operator new that catches an exception inside itself
# and then succeeds, in two threads: those calls' blocks are booked.
# The books: the failed calls leave no block, no release is reported as
# misuse (the thrown objects, allocated by the C++ runtime inside the
# failing call, are booked as the program's, as valgrind counts them, so
# their frees after the catch are of known blocks), and the five figures
# of the HEAP SUMMARY equal valgrind's for except_own (run with the
# executable's own operator new kept:
# --soname-synonyms=somalloc=nouserintercepts).  valgrind cannot throw
# from its own operator new (3.19 aborts), so for except_std, which makes
# the same allocations with libstdc++'s operator new failing instead, the
# oracle is the same valgrind run of except_own.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"

# The agent engine where it runs here (asked, not guessed: it is said in
# the report's "engine").
engines=ptrace
if "$MEMTRACE" -q -j --engine=agent -o agent_probe.json "$MT_PROGS/except_inner" > /dev/null 2>&1 &&
    [ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["engine"])' agent_probe.json)" = agent ]; then
    engines="ptrace agent"
else
    echo "the agent engine does not run here: breakpoint engine only"
fi

for prog in except_std except_own except_inner; do
    bin=$MT_PROGS/$prog
    rc=0
    "$bin" > "$prog.plain.out" 2> "$prog.plain.err" || rc=$?
    [ "$rc" = 0 ] || fail "$prog untraced exits $rc: $(cat "$prog.plain.err")"
    for engine in $engines; do
        rc=0
        "$MEMTRACE" -j --engine="$engine" -o "$prog.$engine.json" "$bin" \
            > "$prog.$engine.out" 2> "$prog.$engine.err" || rc=$?
        echo "$prog --engine=$engine: exit $rc, output: $(tr '\n' '|' < "$prog.$engine.out")"
        ! grep -q 'terminate called' "$prog.$engine.err" ||
            fail "$prog --engine=$engine: std::terminate ran: $(head -3 "$prog.$engine.err")"
        [ "$rc" = 0 ] || fail "$prog --engine=$engine: exit $rc, untraced 0: $(tail -3 "$prog.$engine.err")"
        ! grep -E 'Invalid|Mismatched' "$prog.$engine.err" ||
            fail "$prog --engine=$engine: releases reported as misuse (above)"
        diff "$prog.plain.out" "$prog.$engine.out" > "$prog.$engine.diff" ||
            fail "$prog --engine=$engine: output differs from the untraced run: $(cat "$prog.$engine.diff")"
        [ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["engine"])' "$prog.$engine.json")" = "$engine" ] ||
            fail "$prog: --engine=$engine not used: $(cat "$prog.$engine.err")"
        # No block for a call that failed: nothing of the refused sizes
        # (2^46 bytes, 8192 and 100000 for except_own) was booked.
        python3 - "$prog.$engine.json" <<'PY' || fail "$prog --engine=$engine: a failed call was booked"
import json, sys
h = json.load(open(sys.argv[1]))['heap']
sys.exit(0 if h['bytes_allocated'] < 8192 * 10 + 72704 else 'bytes allocated: %d' % h['bytes_allocated'])
PY
    done
done

if command -v valgrind > /dev/null; then
    valgrind --soname-synonyms=somalloc=nouserintercepts --run-libc-freeres=no --run-cxx-freeres=no \
        --log-file=vg.log "$MT_PROGS/except_own" > vg.out 2>&1 || fail "valgrind failed on except_own"
    diff except_own.plain.out vg.out > /dev/null || fail "except_own under valgrind prints otherwise: $(cat vg.out)"
    vg=$(valgrind_log_figures vg.log)
    for prog in except_own except_std; do
        for engine in $engines; do
            mt=$(memtrace_json_figures "$prog.$engine.json")
            echo "allocs frees bytes in-use-bytes in-use-blocks: valgrind (except_own) $vg | memtrace --engine=$engine $prog $mt"
            [ "$vg" = "$mt" ] || fail "$prog --engine=$engine: $mt, valgrind $vg"
        done
    done
    valgrind --soname-synonyms=somalloc=nouserintercepts --run-libc-freeres=no --run-cxx-freeres=no \
        --log-file=vg.inner.log "$MT_PROGS/except_inner" > vg.inner.out 2>&1 || fail "valgrind failed on except_inner"
    diff except_inner.plain.out vg.inner.out > /dev/null || fail "except_inner under valgrind prints otherwise"
    vg=$(valgrind_log_figures vg.inner.log)
    for engine in $engines; do
        mt=$(memtrace_json_figures "except_inner.$engine.json")
        echo "allocs frees bytes in-use-bytes in-use-blocks: valgrind $vg | memtrace --engine=$engine except_inner $mt"
        [ "$vg" = "$mt" ] || fail "except_inner --engine=$engine: $mt, valgrind $vg"
    done
else
    echo "valgrind not installed: the in-use comparison is left out"
fi

# The tracer gone: its process SIGKILLed while main is inside a refused
# operator new that began traced (except_own N: it says so, waits half a
# second, then throws).  The guardian puts back what the tracer changed
# (the return address), and the agent's frame keeps its registered unwind
# information (its image stays): the exception still reaches main's
# handler and the program ends as untraced.
tracer_of() { awk '/^TracerPid:/ {print $2}' /proc/"$1"/status 2>/dev/null; }
lines_of() { wc -l < "$1" 2>/dev/null || echo 0; }
expected=$("$MT_PROGS/except_own" 12) || fail "untraced except_own 12 failed"
for engine in $engines; do
    "$MT_PROGS/except_own" 12 > "gone.$engine.out" 2> "gone.$engine.prog.err" &
    pid=$!
    "$MEMTRACE" -q --engine="$engine" -p $pid -o /dev/null < /dev/null > /dev/null 2> "gone.$engine.err" &
    mt=$!
    tracer=""
    for ((i = 0; i < 1000; i++)); do
        tracer=$(tracer_of $pid)
        [ -n "$tracer" ] && [ "$tracer" != 0 ] && break
        sleep 0.01
    done
    [ -n "$tracer" ] && [ "$tracer" != 0 ] || { kill -KILL $pid $mt; fail "--engine=$engine: memtrace never attached"; }
    # Two lines after the attach: a whole phase passed traced, and the
    # next "inside operator new" is from a call that entered traced.
    n0=$(lines_of "gone.$engine.out")
    for ((i = 0; i < 3000; i++)); do
        n=$(lines_of "gone.$engine.out")
        [ "$n" -ge $((n0 + 2)) ] && [ "$(tail -n 1 "gone.$engine.out")" = "inside operator new" ] && break
        sleep 0.01
    done
    [ "$(tail -n 1 "gone.$engine.out")" = "inside operator new" ] && [ "$n" -ge $((n0 + 2)) ] ||
        { kill -KILL $pid $mt; fail "--engine=$engine: no traced call seen inside operator new"; }
    kill -KILL "$tracer"
    wait $mt 2>/dev/null
    rc=0
    wait $pid || rc=$?
    echo "--engine=$engine: tracer SIGKILLed inside operator new at line $n of $(lines_of "gone.$engine.out"): program exit $rc"
    [ "$rc" = 0 ] || fail "--engine=$engine: with the tracer gone the program exits $rc: $(tail -3 "gone.$engine.prog.err")"
    [ "$(cat "gone.$engine.out")" = "$expected" ] ||
        fail "--engine=$engine: with the tracer gone the output differs: $(cat "gone.$engine.out")"
done
exit 0
