#!/usr/bin/env bash
# The per-call cost of both engines on allocbench, for a build whose
# traced programs the rest of make bench cannot run (ARCH=i386: python3 and
# heaptrack are 64-bit):
#
#   bench/agent-percall.sh BUILD     (AGENT_PERCALL_ROUNDS=250000, 1 thread)
#
# Per call = (median wall of ROUNDS rounds - median wall of 10 rounds) /
# the calls in between, 3 runs each; native, --engine=agent, and
# --engine=ptrace on a tenth of the work.  The native line is allocbench's
# own cost, included in the traced ones.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
M=$ROOT/$BUILD/memtrace
A=$ROOT/$BUILD/bench/allocbench
ROUNDS=${AGENT_PERCALL_ROUNDS:-250000}
[ -x "$M" ] && [ -x "$A" ] || { echo "agent-percall: build $BUILD first (make tests-build)" >&2; exit 1; }
export MEMTRACE_NO_SUPERVISOR=1
wall() {
    local s=$EPOCHREALTIME
    "$@" > /dev/null 2>&1 || { echo "agent-percall: $* failed" >&2; exit 1; }
    awk -v s="$s" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.4f\n", e - s }'
}
median3() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
for eng in native agent ptrace; do
    n=$ROUNDS
    [ $eng = ptrace ] && n=$((ROUNDS / 10))
    big=() small=()
    for _ in 1 2 3; do
        if [ $eng = native ]; then
            big+=("$(wall "$A" $n 12 1)") small+=("$(wall "$A" 10 12 1)")
        else
            big+=("$(wall "$M" -q --engine=$eng "$A" $n 12 1)")
            small+=("$(wall "$M" -q --engine=$eng "$A" 10 12 1)")
        fi
    done
    awk -v b="$(median3 "${big[@]}")" -v s="$(median3 "${small[@]}")" -v n=$n -v e=$eng 'BEGIN {
        printf "%-7s %8d calls: %.3f s (10 rounds: %.3f s): %.3f us per call\n", e, 4 * n, b, s,
               (b - s) * 1e6 / (4 * (n - 10)) }'
done
