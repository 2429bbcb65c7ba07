#!/usr/bin/env bash
# make bench, second part: the two engines side by side, per intercepted
# call, in one run on one machine (issue 15):
#   native, heaptrack, valgrind, memtrace --engine=ptrace, memtrace --engine=agent
# on allocbench with 1 and 4 threads and on an interpreter workload (python3
# with PYTHONMALLOC=malloc, so that every object goes through malloc), plus
# the traced program's added RSS (its own VmHWM, read at its exit).
#
#   bench/agent-bench.sh BUILD      (AGENT_BENCH_REPS=3, AGENT_BENCH_ROUNDS=25000)
#
# Per call = (median wall time traced - median untraced) / calls.  Calls:
# allocbench's own count of allocation calls (its last line, as in the rest
# of make bench), and for python3 the allocation calls of memtrace's report
# (allocs; frees not counted either).  Startup is included (a real session
# pays it).
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MEMTRACE=$ROOT/$BUILD/memtrace
ALLOCBENCH=$ROOT/$BUILD/bench/allocbench
REPS=${AGENT_BENCH_REPS:-3}
ROUNDS=${AGENT_BENCH_ROUNDS:-25000}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export MEMTRACE_NO_SUPERVISOR=1
[ -x "$MEMTRACE" ] && [ -x "$ALLOCBENCH" ] || { echo "agent-bench: build $BUILD first" >&2; exit 1; }
have() { command -v "$1" >/dev/null; }

now_us() { local t=${EPOCHREALTIME/./}; echo "${t#0}"; }
wall_us() { local t0 t1; t0=$(now_us); "$@" >"$TMP/out" 2>&1; t1=$(now_us); echo $((t1 - t0)); }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }

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
PYN=${AGENT_BENCH_PY:-20000}

tools=(native)
have heaptrack && tools+=(heaptrack)
have valgrind && tools+=(valgrind)
tools+=(ptrace agent)

run_tool() { # tool cmd... -> wall µs
    local tool=$1; shift
    case $tool in
        native) wall_us "$@" ;;
        heaptrack) wall_us heaptrack -o "$TMP/ht" "$@"; rm -f "$TMP"/ht* ;;
        valgrind) wall_us valgrind -q --run-libc-freeres=no "$@" ;;
        ptrace|agent) wall_us "$MEMTRACE" -q --engine=$tool -j -o "$TMP/$tool.json" "$@" ;;
    esac
}

declare -A T CALLS HWM
rows=("allocbench, 1 thread" "allocbench, 4 threads" "python3, PYTHONMALLOC=malloc")
cmd_of() {
    case $1 in
        0) echo "$ALLOCBENCH $ROUNDS 8 1" ;;
        1) echo "$ALLOCBENCH $((ROUNDS / 4)) 8 4" ;;
        2) echo "python3 $TMP/work.py $PYN" ;;
    esac
}
export PYTHONMALLOC=malloc
for ((r = 0; r < REPS; r++)); do
    for i in 0 1 2; do
        for tool in "${tools[@]}"; do
            echo "agent-bench: ${rows[$i]}: $tool ($((r + 1))/$REPS)" >&2
            # shellcheck disable=SC2046
            T[$i,$tool]+=" $(run_tool "$tool" $(cmd_of $i))"
            if [ $i = 2 ]; then
                h=$(awk '/^hwm_kib/ {print $2}' "$TMP/out")
                [ -n "$h" ] && HWM[$tool]+=" $h"
            fi
            if [ $i != 2 ] && [ "$tool" = native ]; then
                CALLS[$i]=$(awk '/^allocbench: [0-9]+ calls/ {print $2}' "$TMP/out")
            fi
            if [ $i = 2 ] && [ "$tool" = agent ]; then
                CALLS[2]=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["heap"]["allocs"])' "$TMP/agent.json")
            fi
        done
    done
done

echo
echo "== engines side by side (µs per allocation call over native; $REPS runs, medians) =="
echo "machine: $(uname -m), $(nproc) CPUs, $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), Linux $(uname -r)"
printf '%-32s %10s' workload calls
for tool in "${tools[@]}"; do [ "$tool" = native ] && printf ' %14s' "native (s)" || printf ' %12s' "$tool"; done
printf ' %s\n' "agent < heaptrack?"
for i in 0 1 2; do
    nat=$(median ${T[$i,native]})
    printf '%-32s %10s' "${rows[$i]}" "${CALLS[$i]}"
    declare -A pc=()
    for tool in "${tools[@]}"; do
        if [ "$tool" = native ]; then
            printf ' %14s' "$(calc "$nat / 1e6" 3)"
        else
            pc[$tool]=$(calc "($(median ${T[$i,$tool]}) - $nat) / ${CALLS[$i]}" 2)
            printf ' %12s' "${pc[$tool]}"
        fi
    done
    if [ -n "${pc[heaptrack]:-}" ]; then
        printf ' %s\n' "$(awk "BEGIN { print (${pc[agent]} < ${pc[heaptrack]}) ? \"met\" : \"MISSED\" }")"
    else
        printf ' %s\n' "n/a (no heaptrack)"
    fi
done
echo
echo "target's added RSS (python3 workload, its VmHWM at exit, over native):"
nat_h=$(median ${HWM[native]})
for tool in "${tools[@]}"; do
    [ "$tool" = native ] && continue
    [ -n "${HWM[$tool]:-}" ] || continue
    printf '  %-10s +%s KiB (native %s KiB)\n' "$tool" "$(calc "$(median ${HWM[$tool]}) - $nat_h" 0)" "$nat_h"
done
