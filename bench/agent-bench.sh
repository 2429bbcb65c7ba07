#!/usr/bin/env bash
# make bench, second part: the two engines side by side, per intercepted
# call, in one run on one machine (issue 15):
#   native, heaptrack, valgrind, memtrace --engine=ptrace, memtrace --engine=agent,
#   and memtrace --engine=agent --sample 524288 (issue 35: always-on tracing)
# on allocbench with 1 and 4 threads and on an interpreter workload (python3
# with PYTHONMALLOC=malloc, so that every object goes through malloc), plus
# the traced program's added RSS (its own VmHWM, read at its exit).
#
#   bench/agent-bench.sh BUILD      (AGENT_BENCH_REPS=3, AGENT_BENCH_ROUNDS=25000)
#
# Per call = ((median wall traced - its startup) - (native - its startup))
# / calls, the startup being a run with no work (the report and
# symbolizing included).  The breakpoint engine runs a tenth of the work.
# Calls:
# allocbench's own count of allocation calls (its last line, as in the rest
# of make bench), and for python3 the allocation calls of memtrace's report
# (allocs; frees not counted either) minus those of the interpreter's start.
# Last, the size of a --record file of the python3 workload with and
# without --sample 524288.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MEMTRACE=$ROOT/$BUILD/memtrace
ALLOCBENCH=$ROOT/$BUILD/bench/allocbench
REPS=${AGENT_BENCH_REPS:-3}
ROUNDS=${AGENT_BENCH_ROUNDS:-250000}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export MEMTRACE_NO_SUPERVISOR=1
[ -x "$MEMTRACE" ] && [ -x "$ALLOCBENCH" ] || { echo "agent-bench: build $BUILD first" >&2; exit 1; }
have() { command -v "$1" >/dev/null; }

. "$ROOT/bench/bench.bash"

# The interpreter workload: dicts, lists, strings, object churn.
cat > "$TMP/work.py" <<'PY'
import sys
n = int(sys.argv[1])
keep = {}
for i in range(n):
    s = 'k%d' % i
    keep[s] = [i, str(i) * 3, (i, s)]
    if i % 3 == 0:
        del keep[s]
print('python: done', len(keep))
for line in open('/proc/self/status'):
    if line.startswith('VmHWM'):
        print('hwm_kib', line.split()[1])
PY
PYN=${AGENT_BENCH_PY:-100000}
# The interpreter itself, never a wrapper script (pyenv's shims are bash
# scripts that exec it: heaptrack would then trace bash).  Debian's
# /usr/bin/python3 by default, as a fresh machine has it; AGENT_BENCH_PYTHON
# names another.
PYTHON=${AGENT_BENCH_PYTHON:-}
if [ -z "$PYTHON" ]; then
    if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi
PYTHON=$("$PYTHON" -c 'import os, sys; print(os.path.realpath(sys.executable))') ||
    { echo "agent-bench: no python3" >&2; exit 1; }
head -c 2 "$PYTHON" | grep -q '#!' && { echo "agent-bench: $PYTHON is a script, not the interpreter" >&2; exit 1; }

tools=(native)
have heaptrack && tools+=(heaptrack)
have valgrind && tools+=(valgrind)
tools+=(ptrace agent sample)
SAMPLE=${AGENT_BENCH_SAMPLE:-524288}
memtraced() { case $1 in ptrace|agent|sample) return 0 ;; esac; return 1; }

run_tool() { # tool cmd... -> wall µs
    local tool=$1; shift
    case $tool in
        native) wall_us "$@" ;;
        heaptrack) wall_us heaptrack -o "$TMP/ht" "$@"; rm -f "$TMP"/ht* ;;
        valgrind) wall_us valgrind -q --run-libc-freeres=no "$@" ;;
        ptrace|agent) wall_us "$MEMTRACE" -q --engine=$tool -j -o "$TMP/$tool.json" "$@" ;;
        sample) wall_us "$MEMTRACE" -q --engine=agent --sample "$SAMPLE" -j -o "$TMP/$tool.json" "$@" ;;
    esac
}

declare -A T S CALLS HWM HT_SEEN
rows=("allocbench, 1 thread" "allocbench, 4 threads" "python3, PYTHONMALLOC=malloc")
# The breakpoint engine costs ~100x more per call: it runs a tenth of the
# work, so that every tool's run stays within tens of seconds.
scale() { [ "$1" = ptrace ] && echo 10 || echo 1; }
cmd_of() { # row tool -> command (0 rounds: the startup run)
    local n=$((ROUNDS / $(scale "$2")))
    [ "${3:-}" = startup ] && n=0
    case $1 in
        0) echo "$ALLOCBENCH $n 8 1" ;;
        1) echo "$ALLOCBENCH $((n / 4)) 8 4" ;;
        2) echo "$PYTHON $TMP/work.py $((n * PYN / ROUNDS))" ;;
    esac
}
export PYTHONMALLOC=malloc
for ((r = 0; r < REPS; r++)); do
    for i in 0 1 2; do
        for tool in "${tools[@]}"; do
            echo "agent-bench: ${rows[$i]}: $tool ($((r + 1))/$REPS)" >&2
            # shellcheck disable=SC2046
            S[$i,$tool]+=" $(run_tool "$tool" $(cmd_of $i $tool startup))"
            h0=$(awk '/allocations:/ {print $2; exit}' "$TMP/out")
            a0=0
            if [ $i = 2 ] && memtraced "$tool"; then
                a0=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["heap"]["allocs"])' "$TMP/$tool.json")
            fi
            # shellcheck disable=SC2046
            T[$i,$tool]+=" $(run_tool "$tool" $(cmd_of $i $tool))"
            if [ $i = 2 ] && [ "$(scale $tool)" = 1 ]; then
                h=$(awk '/^hwm_kib/ {print $2}' "$TMP/out")
                [ -n "$h" ] && HWM[$tool]+=" $h"
            fi
            if [ $i != 2 ]; then
                CALLS[$i,$tool]=$(awk '/^allocbench: [0-9]+ calls/ {print $2}' "$TMP/out")
            fi
            if [ "$tool" = heaptrack ]; then
                # heaptrack's own count of the calls it recorded: a check
                # that it traced the work at all
                h1=$(awk '/allocations:/ {print $2; exit}' "$TMP/out")
                HT_SEEN[$i]=$(( ${h1:-0} - ${h0:-0} ))
            fi
            if [ $i = 2 ] && memtraced "$tool"; then
                # the interpreter's own start allocates too: the work's calls only
                a1=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["heap"]["allocs"])' "$TMP/$tool.json")
                CALLS[2,$tool]=$((a1 - a0))
            fi
        done
    done
done
for tool in "${tools[@]}"; do
    memtraced "$tool" || CALLS[2,$tool]=${CALLS[2,agent]}
done

echo
echo "== engines side by side (µs per allocation call over native; $REPS runs, medians) =="
echo "machine: $(uname -m), $(nproc) CPUs, $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), Linux $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "interpreter: $PYTHON ($("$PYTHON" --version 2>&1))"
echo "engines: column ptrace = memtrace --engine=ptrace (breakpoints; a tenth of the work), column agent = memtrace --engine=agent, column sample = memtrace --engine=agent --sample $SAMPLE"
printf '%-30s %12s' workload "native (s)"
for tool in "${tools[@]}"; do [ "$tool" = native ] || printf ' %18s' "$tool"; done
printf ' %s\n' "agent < heaptrack?  sample <= 0.05 µs?"
for i in 0 1 2; do
    printf '%-30s %12s' "${rows[$i]}" "$(calc "$(median ${T[$i,native]}) / 1e6" 3)"
    declare -A pc=()
    for tool in "${tools[@]}"; do
        [ "$tool" = native ] && continue
        # over native doing the same work, startup (a run of 0 rounds) taken out
        local_calls=${CALLS[$i,$tool]}
        nat=$(calc "$(median ${T[$i,native]}) / $(scale $tool)" 0)
        nat_s=$(median ${S[$i,native]})
        pc[$tool]=$(calc "(($(median ${T[$i,$tool]}) - $(median ${S[$i,$tool]})) - ($nat - $nat_s)) / $local_calls" 2)
        printf ' %18s' "${pc[$tool]} ($local_calls)"
    done
    if [ -n "${pc[heaptrack]:-}" ]; then
        printf ' %-18s' "$(awk "BEGIN { print (${pc[agent]} < ${pc[heaptrack]}) ? \"met\" : \"MISSED\" }")"
    else
        printf ' %-18s' "n/a (no heaptrack)"
    fi
    printf ' %s\n' "$(awk "BEGIN { print (${pc[sample]} <= 0.05) ? \"met\" : \"MISSED\" }")"
done
echo "(µs per allocation call, startup taken out; in brackets the calls measured)"
for i in 0 1 2; do
    [ -n "${HT_SEEN[$i]:-}" ] || continue
    awk "BEGIN { exit !(${HT_SEEN[$i]} < 0.9 * ${CALLS[$i,agent]}) }" &&
        echo "WARNING: ${rows[$i]}: heaptrack recorded ${HT_SEEN[$i]} allocations, the agent ${CALLS[$i,agent]}: heaptrack's figure is not comparable"
done
echo "startup (a run of 0 rounds, allocbench 1 thread, ms):$(for tool in "${tools[@]}"; do printf ' %s %s' "$tool" "$(calc "$(median ${S[0,$tool]}) / 1000" 0)"; done)"
echo
echo "target's added RSS (python3 workload, its VmHWM at exit, over native; same work only):"
nat_h=$(median ${HWM[native]})
for tool in "${tools[@]}"; do
    [ "$tool" = native ] && continue
    [ -n "${HWM[$tool]:-}" ] || continue
    printf '  %-10s +%s KiB (native %s KiB)\n' "$tool" "$(calc "$(median ${HWM[$tool]}) - $nat_h" 0)" "$nat_h"
done

# --record with and without --sample: the same python3 workload, the file's size.
echo
echo "--record of the python3 workload ($PYN iterations), file size:"
for mode in exact sample; do
    extra=()
    [ $mode = sample ] && extra=(--sample "$SAMPLE")
    rm -f "$TMP/rec.mt"
    wall=$(wall_us "$MEMTRACE" -q --engine=agent "${extra[@]}" --record "$TMP/rec.mt" -o /dev/null \
        "$PYTHON" "$TMP/work.py" "$PYN")
    printf '  %-7s %9s bytes in %s s (%s bytes/s)\n' "$mode" "$(stat -c %s "$TMP/rec.mt")" \
        "$(calc "$wall / 1e6" 2)" "$(calc "$(stat -c %s "$TMP/rec.mt") / ($wall / 1e6)" 0)"
done

# Issue 28: the target's added RSS with many threads, and on a compiler run.
# 300 threads that allocate now and then (selftest/programs/threads_idle.c:
# 3 mallocs every 10 ms, 100 rounds): the VmRSS (and RssShmem: the agent's
# shared region) the program reads itself with every thread alive, traced
# minus native.  clang -O2 -c of a 680-line file: its peak (wait4's
# ru_maxrss, /usr/bin/time -f %M run under the tool), traced minus native.
echo
TI=$TMP/threads_idle
if cc -O0 -g -pthread -o "$TI" "$ROOT/selftest/programs/threads_idle.c" 2>/dev/null; then
    status_kib() { awk -v k="$1:" '$1 == k { print $2 }' "$TMP/out"; }
    "$TI" 300 100 10 >"$TMP/out" 2>&1
    nat=$(status_kib VmRSS)
    "$MEMTRACE" -q --engine=agent -o /dev/null "$TI" 300 100 10 >"$TMP/out" 2>&1
    ag=$(status_kib VmRSS) ag_shm=$(status_kib RssShmem)
    ht="n/a (no heaptrack)"
    if have heaptrack; then
        (cd "$TMP" && heaptrack -o "$TMP/ht-idle" "$TI" 300 100 10 >"$TMP/out" 2>&1)
        ht="$(( $(status_kib VmRSS) - nat )) KiB"
    fi
    echo "added target RSS, 300 threads: agent $((ag - nat)) KiB (RssShmem $ag_shm KiB), heaptrack $ht (native VmRSS $nat KiB)"
fi
if have clang && [ -x /usr/bin/time ]; then
    CSRC=$ROOT/target/agent/agent_inject.c
    cc1() { /usr/bin/time -f %M clang -O2 -I"$ROOT" -D_GNU_SOURCE -c "$CSRC" -o "$TMP/c.o"; }
    peak() { "$@" 2>&1 >/dev/null | grep -E '^[0-9]+$' | tail -1; }
    nat=$(peak cc1)
    ag=$(peak "$MEMTRACE" -q -f --engine=agent -o /dev/null /usr/bin/time -f %M clang -O2 -I"$ROOT" -D_GNU_SOURCE -c "$CSRC" -o "$TMP/c.o")
    ht="n/a (no heaptrack)"
    have heaptrack && ht="$(( $(cd "$TMP" && peak heaptrack -o "$TMP/ht-cc" /usr/bin/time -f %M clang -O2 -I"$ROOT" -D_GNU_SOURCE -c "$CSRC" -o "$TMP/c.o") - nat )) KiB"
    echo "added target RSS, clang -O2 -c: agent $((ag - nat)) KiB, heaptrack $ht (native peak $nat KiB)"
else
    echo "added target RSS, clang -O2 -c: n/a (no clang or /usr/bin/time)"
fi
