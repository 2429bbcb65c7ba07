#!/usr/bin/env bash
# -f with leak scans while processes come and go (selftest/programs/
# proc_churn.c): the console's `scan` and -a's scan at exit stop the first
# process's threads while its children fork, allocate and exit.  A stop of
# another process met during such a stop must reach its owner; a dropped
# one leaves that child stopped forever and the root's wait() with it (the
# run hangs).  Repeated MT_CHURN_RUNS times (default 3, about 10 s) to
# catch the race; 50 in a row is the standard (README, Tests).  Each run:
#  - ends, and prints what an untraced run prints;
#  - the first process's HEAP SUMMARY equals valgrind's, and its final
#    scan's definitely lost figures equal valgrind's --leak-check=full;
#  - the final scan accounts for every block in use, and the console
#    answered scans.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool valgrind valgrind
cd "$MT_TMP"
PROG="$MT_PROGS/proc_churn"
ROUNDS=9
RUNS=${MT_CHURN_RUNS:-3}

expected=$("$PROG" $ROUNDS) || fail "untraced run failed"
valgrind --child-silent-after-fork=yes --run-libc-freeres=no --run-cxx-freeres=no \
    --leak-check=full --log-file=vg.log "$PROG" $ROUNDS > /dev/null 2>&1 || fail "valgrind run failed"
vg=$(python3 - vg.log <<'PY'
import re, sys
t = open(sys.argv[1]).read()
n = lambda s: int(s.replace(',', ''))
u = re.search(r'in use at exit: ([\d,]+) bytes in ([\d,]+) blocks', t)
h = re.search(r'total heap usage: ([\d,]+) allocs, ([\d,]+) frees, ([\d,]+) bytes allocated', t)
d = re.search(r'definitely lost: ([\d,]+) bytes in ([\d,]+) blocks', t)
print(n(h[1]), n(h[2]), n(h[3]), n(u[1]), n(u[2]), n(d[1]), n(d[2]))
PY
) || fail "cannot read valgrind's log"
echo "valgrind (allocs frees bytes in_use blocks definite blocks): $vg"

# The scans: one every 10 ms, until memtrace stops reading.
scans() { for _ in $(seq 200); do echo scan || return 0; sleep 0.01; done; }

for run in $(seq "$RUNS"); do
    rm -f r.json out.txt err.txt
    scans | "$MEMTRACE" -q -f -a -C -d 4 -j -o r.json "$PROG" $ROUNDS > out.txt 2> err.txt &
    tracer=$!
    end=$((SECONDS + 60))
    while kill -0 $tracer 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.1; done
    if kill -0 $tracer 2>/dev/null; then
        ps -o pid,stat,wchan:20,args --ppid "$(pgrep -P "$(pgrep -P $tracer | head -1)" | head -1)" >&2
        # Every process of this run, by the pids it was given.
        kill -KILL $(pgrep -P $tracer) $tracer 2>/dev/null
        fail "run $run: no end after 60 s: a traced process was left stopped"
    fi
    wait $tracer; rc=$?
    [ $rc -eq 0 ] || fail "run $run: exit $rc: $(head -5 err.txt)"
    grep -qxF "$expected" out.txt || fail "run $run: output differs: $(grep -v '^ ' out.txt | head -3)"
    nscans=$(grep -c '^LEAK SUMMARY' out.txt)
    [ "$nscans" -ge 1 ] || fail "run $run: no scan answered"
    mt=$(python3 - r.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
h, l = d['heap'], d['leaks']
kinds = ['definitely_lost', 'indirectly_lost', 'possibly_lost', 'reachable', 'suppressed']
total = sum(l[k + '_bytes'] for k in kinds), sum(l[k + '_blocks'] for k in kinds)
if total != (h['in_use_bytes'], h['in_use_blocks']):
    sys.exit(f'scan classified {total}, in use {h["in_use_bytes"], h["in_use_blocks"]}')
print(h['allocs'], h['frees'], h['bytes_allocated'], h['in_use_bytes'], h['in_use_blocks'],
      l['definitely_lost_bytes'], l['definitely_lost_blocks'], len(d.get('children', [])))
PY
) || fail "run $run: bad report: $mt"
    echo "run $run: memtrace $mt children, $nscans console scans"
    [ "${mt% *}" = "$vg" ] || fail "run $run: first process differs from valgrind ($vg)"
    [ "${mt##* }" -eq $((ROUNDS + (ROUNDS + 2) / 3)) ] || fail "run $run: not every child followed"
done
echo ok
