#!/usr/bin/env bash
# -f (following forks) under the agent engine (target/agent/agent_fork.c):
#  - selftest/programs/proc_fork_threads.c: a fork while 4 threads
#    allocate, a fork+exec, a child that exits before its parent.  Every
#    process is reported by the agent ("engine": "agent", no fallback
#    warning, no misuse error), and its figures equal valgrind's
#    --trace-children=yes for the same process: all of them for the root
#    and the exec'ed leaf; for the forked child, what is in use at its end
#    (its totals include the workers' calls before the fork, which depend
#    on timing), with allocs - frees = blocks in use;
#  - proc_fork's processes have the same stacks (frame by frame, with
#    their bytes, blocks and allocations) under both engines;
#  - the fork oracle tests proc_fork (fork, vfork+exec, a fork in a child,
#    SIGINT midway), proc_fork_open (a fork inside operator new[]) and
#    proc_churn_scan (scans while children come and go; one run) run
#    again with MEMTRACE_ENGINE=agent.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool valgrind valgrind
cd "$MT_TMP"
need_agent_engine
PROG="$MT_PROGS/proc_fork_threads"

expected=$("$PROG" | sort) || fail "untraced run failed"
valgrind --trace-children=yes --child-silent-after-fork=no --run-libc-freeres=no \
    --log-file="$MT_TMP/vg.%p" "$PROG" > vg.out 2>&1 || fail "valgrind run failed"
[ "$(sort vg.out)" = "$expected" ] || fail "valgrind's run printed $(cat vg.out)"

# "tree-position engine allocs frees bytes in_use_bytes in_use_blocks"
# per process, the position being the birth ranks from the root.
tree() { python3 "$MT_ROOT/selftest/tests/proc_tree.py" "$@"; }
vg=$(tree valgrind "$MT_TMP") || fail "cannot read valgrind's logs"
echo "valgrind:"; echo "$vg"
[ "$(echo "$vg" | wc -l)" -eq 3 ] || fail "expected 3 processes under valgrind"

"$MEMTRACE" -q -f -j --engine=agent -o f.json "$PROG" > f.out 2> f.err; rc=$?
[ $rc -eq 0 ] || fail "exit $rc: $(cat f.err)"
[ "$(sort f.out)" = "$expected" ] || fail "output differs: $(cat f.out)"
[ ! -s f.err ] || fail "unexpected messages: $(cat f.err)"
mt=$(tree memtrace f.json) || fail "bad report: $mt"
echo "memtrace -f --engine=agent:"; echo "$mt"
# The root and the leaf: every figure; the forked child: what is in use.
[ "$(echo "$mt" | sed -n '1p;3p')" = "$(echo "$vg" | sed -n '1p;3p')" ] ||
    fail "root or exec'ed leaf differ from valgrind"
read -r _ eng allocs frees _ bytes blocks <<< "$(echo "$mt" | sed -n 2p)"
[ "$eng $bytes $blocks" = "$(echo "$vg" | sed -n 2p | awk '{print $2, $6, $7}')" ] ||
    fail "the forked child's blocks in use differ from valgrind's"
[ $((allocs - frees)) -eq "$blocks" ] || fail "the forked child: $allocs allocs - $frees frees != $blocks blocks"

# The same stacks from both engines, process by process (proc_fork's
# figures do not depend on timing).
for e in ptrace agent; do
    "$MEMTRACE" -q -f -d 40 -j --engine=$e -o st.$e.json "$MT_PROGS/proc_fork" > /dev/null 2> st.$e.err ||
        fail "proc_fork --engine=$e: $(cat st.$e.err)"
    tree memtrace st.$e.json stacks | sed "s/^\([^ ]*\) $e/\1/" > st.$e.txt || fail "bad report: $(cat st.$e.txt)"
done
diff st.ptrace.txt st.agent.txt > st.diff || fail "the engines' stacks differ (< ptrace, > agent):
$(head -20 st.diff)"
echo "proc_fork: $(grep -c '^ ' st.agent.txt) stacks in $(grep -vc '^ ' st.agent.txt) processes, the same from both engines"

# The fork oracle tests, under the agent; make check runs them under the
# agent already when it is the default (MT_AGENT_DEFAULT, run-tests.sh).
[ -n "${MT_AGENT_DEFAULT:-}" ] && [ -z "${MEMTRACE_ENGINE:-}" ] &&
    { echo "proc_fork, proc_fork_open, proc_churn_scan: run under the agent, the default, by run-tests.sh"; exit 0; }
for t in proc_fork proc_fork_open proc_churn_scan; do
    mkdir -p "$MT_TMP/$t"
    MT_TMP="$MT_TMP/$t" MEMTRACE_ENGINE=agent MT_CHURN_RUNS=1 \
        bash "$MT_ROOT/selftest/tests/$t.sh" > "$t.log" 2>&1; rc=$?
    [ $rc -eq 0 ] || fail "$t under the agent engine (exit $rc): $(tail -n 15 "$t.log")"
    echo "$t under the agent: passed"
done
exit 0
