#!/usr/bin/env bash
# Runs every test of memtrace and ends with "N passed, N failed".
#
#   selftest/run-tests.sh [PATTERN...]     only tests whose name contains a PATTERN
#   MT_STRICT=1 selftest/run-tests.sh      a skip for a missing tool that
#                                          tools/install-deps.sh installs
#                                          (reason "missing tool: ...") fails
#
# Unit tests are the binaries $MT_BUILD/unit/test_*; integration tests are the
# scripts selftest/tests/*.sh.  A test passes with exit 0, is skipped with 77
# (and says why on its last line), and fails otherwise.  Each test gets its own
# scratch directory in $MT_TMP, removed when it passes.
#
# Tests run side by side, a pool of MT_JOBS (default: cores + 1, and one
# more for a second board slot), so that make check keeps within its 20
# minutes on 2 cores; no test measures time, and each passes with other
# work beside it.  MT_SERIAL=1 runs one at a time.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
export MT_ROOT=$ROOT
export MT_BUILD=${MT_BUILD:-build}
export MT_RELEASE_BUILD=${MT_RELEASE_BUILD:-$MT_BUILD}
export MEMTRACE=${MEMTRACE:-$ROOT/$MT_BUILD/memtrace}
export MEMTRACE_FS=${MEMTRACE_FS:-$ROOT/$MT_BUILD/memtrace-fs}
export MT_PROGS=${MT_PROGS:-$ROOT/$MT_RELEASE_BUILD/selftest}
export MT_BENCH_BIN=${MT_BENCH_BIN:-$ROOT/$MT_RELEASE_BUILD/bench/allocbench}
# Programs a test compiles itself are built for the CPU memtrace traces:
# gcc $MT_TARGET_CFLAGS gives -m32 when $MEMTRACE is the i386 build (ELF
# class 1 and machine 3 in its header).
if [ -z "${MT_TARGET_CFLAGS+set}" ]; then
    MT_TARGET_CFLAGS=
    [ "$(od -An -tu1 -j4 -N1 "$MEMTRACE" 2>/dev/null | tr -d ' ')" = 1 ] &&
        [ "$(od -An -tu1 -j18 -N1 "$MEMTRACE" 2>/dev/null | tr -d ' ')" = 3 ] &&
        MT_TARGET_CFLAGS=-m32
fi
export MT_TARGET_CFLAGS
# ASan: memtrace forks the traced program before exec, and LeakSanitizer must
# not judge the half-born child.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=99}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Tests send nothing to debuginfod servers of the environment (Debian sets
# one for login shells): those that want one set it.
unset DEBUGINFOD_URLS
TEST_TIMEOUT=${TEST_TIMEOUT:-300}

tmproot=$(mktemp -d /tmp/memtrace-tests.XXXXXX)
trap 'rm -rf "$tmproot"' EXIT
# What a test's oracle computed that depends only on the test's inputs
# (leak_corpus's memcheck and LSan figures) is kept here for the run, so
# that NAME@ptrace reruns memtrace and not the oracles.
export MT_ORACLE_CACHE=$tmproot/oracle-cache
mkdir -p "$MT_ORACLE_CACHE"

results=$tmproot/results
: >"$results"
STRICT=${MT_STRICT:-0}
[ "$STRICT" = 0 ] && STRICT=

# Is the test named $1 selected?  Every test when no pattern was given.
matches() {
    local name=$1
    [ ${#PATTERNS[@]} -eq 0 ] && return 0
    for p in "${PATTERNS[@]}"; do [[ $name == *"$p"* ]] && return 0; done
    return 1
}

# CPU seconds (user + system) of this shell's waited-for children so far,
# into variable $1.  `times` runs in this shell, not in a $(...) subshell,
# which would count only its own children.
children_cpu() {
    local f=$tmproot/times.$BASHPID
    times >"$f"
    printf -v "$1" '%s' "$(awk 'NR == 2 {
        n = 0
        for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); n += p[1] * 60 + p[2] }
        printf "%.1f", n }' "$f")"
}

# MT_TIMES=FILE: a line per test, "NAME WALL_S CPU_S", for balancing the
# pool (a test that mostly waits can share a core; one that computes not).
run_one() {
    local name=$1; shift
    matches "$name" || return 0
    local dir="$tmproot/$name"
    mkdir -p "$dir"
    local start=$SECONDS cpu0 cpu1
    children_cpu cpu0
    MT_TMP="$dir" timeout -k 10 "$TEST_TIMEOUT" "$@" >"$dir/log" 2>&1 </dev/null
    local rc=$?
    local took=$((SECONDS - start))
    if [ -n "${MT_TIMES:-}" ]; then
        children_cpu cpu1
        echo "$name $took $(awk -v a="$cpu1" -v b="$cpu0" 'BEGIN {printf "%.1f", a - b}')" >>"$MT_TIMES"
    fi
    if [ $rc -eq 0 ]; then
        echo "P $name" >>"$results"; echo "PASS $name (${took}s)"
    elif [ $rc -eq 77 ] && [ -n "$STRICT" ] && tail -n 1 "$dir/log" | grep -q '^missing tool:'; then
        echo "F $name" >>"$results"
        echo "FAIL $name (strict: $(tail -n 1 "$dir/log"))"
    elif [ $rc -eq 77 ]; then
        echo "S $name: $(tail -n 1 "$dir/log")" >>"$results"
        echo "SKIP $name: $(tail -n 1 "$dir/log")"
    else
        echo "F $name" >>"$results"
        echo "FAIL $name (exit $rc, ${took}s)"
        tail -n 40 "$dir/log" | sed 's/^/    | /'
    fi
}

# The tests that take longest, started first (selftest/run-tests.sh's pool).
LONGEST=(leak_corpus board_armhf board_aarch64 board_i386 fuzz_short agent_engines rely_hostile_attach
         intercept_allocator_jemalloc intercept_allocator_tcmalloc intercept_exceptions
         engine_valgrind_counts arch_cross_displace ship_deb ship_deb_cross
         intercept_allocator_mimalloc rely_slow_host arch_cross_unwind addr2line_inlines
         flow_stress agent_ring_order corpus_chromium corpus_interpreters corpus_compilers corpus_tools corpus_redis corpus_nginx
         proc_many_shell)
is_longest() {
    local t
    for t in "${LONGEST[@]}"; do [ "$t" = "$1" ] && return 0; done
    return 1
}

# Both engines: where a plain run uses the agent (the default where this
# build carries one, arch_agent_default), the oracle tests run a second
# time with the breakpoint engine (MEMTRACE_ENGINE=ptrace), reported as
# NAME@ptrace; a selected NAME selects NAME@ptrace too.  Tests that compare
# the engines themselves (agent_engines, agent_fork) or are about one
# engine (agent_sigkill; rely_sigkill: the breakpoint engine's guardian)
# pin it.
TWICE=(engine_valgrind_counts engine_valgrind_layout engine_attach_detach engine_attach_namespace engine_exec
       engine_exit_status stacks_sigaltstack engine_signal_mask
       leak_valgrind leak_threads leak_flags leak_corpus misuse_valgrind
       unwind_gdb unwind_vs_gdb stacks_inline_gdb
       proc_fork proc_fork_open proc_vfork_exit proc_threads proc_churn_scan proc_signals 'intercept_*'
       golden_report rss_parts 'heaps_*' trace_layout rely_group_sigint)
AGENT_DEFAULT=
"$MEMTRACE" -q -j -o "$tmproot/engine.json" /bin/true >/dev/null 2>&1 &&
    grep -q '"engine": "agent"' "$tmproot/engine.json" && AGENT_DEFAULT=1
export MT_AGENT_DEFAULT=$AGENT_DEFAULT   # agent_fork.sh: its proc_* runs are the plain ones
# Runs test $1 (selftest/tests/$1.sh), then under the breakpoint engine
# when it is in TWICE and the agent is the default.
run_script() {
    local name=$1 script=$ROOT/selftest/tests/$1.sh p
    run_one "$name" bash "$script"
    [ -n "$AGENT_DEFAULT" ] || return 0
    for p in "${TWICE[@]}"; do
        # shellcheck disable=SC2053 # TWICE holds patterns
        [[ $name == $p ]] || continue
        run_one "$name@ptrace" env MEMTRACE_ENGINE=ptrace bash "$script"
        return 0
    done
}

PATTERNS=("$@")
queue=()
# The boards' qemu-system guests are make check's longest chain: each is
# one TCG thread that computes all the time (armhf's suite is about 410 s
# of guest time on an idle machine).  One after another in one slot of the
# pool they took 1,491 s of a 1,648 s run (armhf 808, aarch64 359, i386
# 324; 2026-12-02), long after the other tests had ended.  So the selected
# ones take two slots, the first of LONGEST's (armhf) alone and the others
# one after the other, and the pool grows by one so that the other tests
# keep theirs.
boards=()
for name in "${LONGEST[@]}"; do
    [ -f "selftest/tests/$name.sh" ] || continue
    if [[ $name == board_* ]]; then
        matches "$name" && boards+=("$name")
    else
        queue+=("script:$name")
    fi
done
board_slots=${#boards[@]}
[ "$board_slots" -gt 2 ] && board_slots=2
case $board_slots in
    1) queue=("script:${boards[0]}" "${queue[@]}") ;;
    2) queue=("script:${boards[0]}" "script:${boards[*]:1}" "${queue[@]}") ;;
esac
# A pool of MT_JOBS tests at once (default: one more than the cores, since
# most tests wait on their traced programs more than they compute, and one
# more for a second board slot), the longest first so that none is left
# running alone at the end.  A test's lines are printed whole when it ends.
# MT_SERIAL=1 runs one at a time, in this order.
extra=0
[ "$board_slots" = 2 ] && extra=1
JOBS=${MT_JOBS:-$(($(nproc 2>/dev/null || echo 1) + 1 + extra))}
[ "${MT_SERIAL:-0}" = 1 ] && JOBS=1
for bin in "$MT_BUILD"/unit/test_*; do
    [ -x "$bin" ] && queue+=("unit:$bin")
done
for script in selftest/tests/*.sh; do
    [ -f "$script" ] || continue
    is_longest "$(basename "$script" .sh)" || queue+=("script:$(basename "$script" .sh)")
done

run_entry() {
    case $1 in
    unit:*) run_one "unit/$(basename "${1#unit:}")" "$ROOT/${1#unit:}" ;;
    script:*)
        local name base=$TEST_TIMEOUT
        for name in ${1#script:}; do
            # Heavy, not hung: they share the CPU with the rest of the pool.
            TEST_TIMEOUT=$base
            is_longest "$name" && TEST_TIMEOUT=$((base * 2))
            # A board's guest has its own limit (board_common.bash) for a
            # hang; the test around it must outlast it.
            [[ $name == board_* ]] && TEST_TIMEOUT=$((base * 6))
            run_script "$name"
        done ;;
    esac
}

# The boards run ahead of the rest: at an equal share of the two cores
# their guests took 1,145 s (armhf) and 1,347 s (aarch64 then i386) of a
# 1,521 s run (2026-12-03), the rest of the pool long done.  A board slot
# runs at nice $BOARD_NICE (root only; elsewhere at the pool's), so that the
# other tests fill the CPU around the guests instead of slowing them.
BOARD_NICE=${MT_BOARD_NICE:--10}
running=0 n=0
for entry in "${queue[@]}"; do
    if [ "$running" -ge "$JOBS" ]; then
        wait -n
        running=$((running - 1))
    fi
    n=$((n + 1))
    (
        [[ $entry == script:board_* ]] && renice -n "$BOARD_NICE" -p "$BASHPID" >/dev/null 2>&1
        run_entry "$entry" >"$tmproot/out.$n" 2>&1
        flock "$tmproot/print.lock" cat "$tmproot/out.$n"
    ) &
    running=$((running + 1))
done
wait

passed=$(grep -c '^P ' "$results")
failed=$(grep -c '^F ' "$results")
skipped=$(grep -c '^S ' "$results")
if [ "$skipped" -gt 0 ]; then
    echo "skipped:"
    sed -n 's/^S /    /p' "$results"
fi
[ "$failed" -gt 0 ] && echo "failed: $(sed -n 's/^F //p' "$results" | tr '\n' ' ')"
if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
