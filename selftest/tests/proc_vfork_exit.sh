#!/usr/bin/env bash
# Unfollowed vfork children (no -f) run as they do untraced (issue 29): one
# calls exit() and its exit handlers allocate, in its parent's memory where
# our breakpoints are (exit() itself has one under -a); one execs.  The
# oracle is the untraced run: the same output, the same wait statuses (the
# exit() child used to die of SIGTRAP: status 0x5), the same exit status,
# with and without -a.  The parent's own blocks are still counted.
# Debian's dash runs `sh -c 'cat FILE'` in a vfork child, which mallocs in
# the shared heap before its exec, and the parent frees that block: the
# child's heap calls are the parent's, under either engine, with and
# without -f (the breakpoint engine reported the parent's free as an
# invalid one).  valgrind, which
# makes a vfork a fork, reports no error; both engines count the same.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
gcc ${MT_TARGET_CFLAGS:-} -g -O0 -o vfork_exit "$MT_ROOT/selftest/tests/data/vfork_exit.c" ||
    fail "build vfork_exit"
./vfork_exit > untraced.out
want_rc=$?
grep -q "exit child: status 0x700" untraced.out || fail "untraced run: $(cat untraced.out)"
for flags in "" "-a"; do
    for round in 1 2 3; do
        "$MEMTRACE" -q $flags -j -o "traced$round.json" ./vfork_exit > traced.out 2> traced.err
        rc=$?
        [ $rc = $want_rc ] || fail "memtrace $flags: exit status $rc, untraced $want_rc: $(cat traced.err)"
        diff untraced.out traced.out > out.diff ||
            fail "memtrace $flags: the output differs from the untraced run (< untraced):
$(cat out.diff)
$(cat traced.err)"
        python3 - "traced$round.json" <<'PY' || fail "memtrace $flags: the parent's blocks are not counted"
import json, sys
h = json.load(open(sys.argv[1]))['heap']
sys.exit(0 if h['allocs'] >= 1 and h['frees'] >= 1 else 1)
PY
    done
    echo "memtrace ${flags:-(no -a)}: 3 runs, output and statuses as untraced (${MEMTRACE_ENGINE:-default} engine)"
done

valgrind -q --error-exitcode=99 sh -c "cat $MT_TMP/untraced.out" >/dev/null 2>vg.err || fail "valgrind reports errors in dash: $(head -n 3 vg.err)"
for f in "" -f; do
    for e in agent ptrace; do
        "$MEMTRACE" -q $f --engine=$e -j -o "dash_$e$f.json" sh -c "cat $MT_TMP/untraced.out" >dash.out 2>"dash_$e.err" ||
            fail "memtrace $f --engine=$e sh -c cat: $(tail -n 2 "dash_$e.err")"
        cmp -s dash.out untraced.out || fail "sh -c cat printed other than the file: memtrace $f --engine=$e"
        grep -q 'Invalid\|Mismatched' "dash_$e.err" &&
            fail "memtrace $f --engine=$e: misuse errors on dash: $(head -n 3 "dash_$e.err")"
    done
    a=$(memtrace_json_figures "dash_agent$f.json") && p=$(memtrace_json_figures "dash_ptrace$f.json") || fail "no figures"
    [ "$a" = "$p" ] || fail "memtrace $f: dash's figures differ between the engines: agent $a, ptrace $p"
    echo "sh -c cat (dash's vfork child) ${f:-without -f}: no misuse error (valgrind: none), both engines $a"
done
exit 0
