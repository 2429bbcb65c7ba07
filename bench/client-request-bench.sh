#!/usr/bin/env bash
# make bench, fourth part: the cost of a valgrind client request that
# memtrace redirects (issue 31), beside the cost of an intercepted malloc,
# per call over native, under both engines and under memcheck, one run.
#
# bench/client_requests.c makes ROUNDS rounds of two calls either way:
# VALGRIND_MALLOCLIKE_BLOCK + VALGRIND_FREELIKE_BLOCK on a static arena, or
# malloc + free.  Per call = ((median wall traced - its startup) - (native
# - its startup)) / calls, the startup being a run of 0 rounds (the report
# and symbolizing included), as bench/agent-bench.sh counts.  memtrace's
# books are checked to hold every round (allocs and frees), so a run that
# missed the requests cannot pass for a fast one.
#
#   bench/client-request-bench.sh BUILD   (CR_BENCH_REPS=3, CR_BENCH_ROUNDS=20000)
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MEMTRACE=$ROOT/$BUILD/memtrace
REPS=${CR_BENCH_REPS:-3}
ROUNDS=${CR_BENCH_ROUNDS:-20000}
TMP=$(mktemp -d /tmp/memtrace-crbench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export MEMTRACE_NO_SUPERVISOR=1
[ -x "$MEMTRACE" ] || { echo "client-request-bench: build $BUILD first" >&2; exit 1; }
[ -f /usr/include/valgrind/valgrind.h ] ||
    { echo "client-request-bench: no valgrind.h (Debian's valgrind package)" >&2; exit 1; }

. "$ROOT/bench/bench.bash"

gcc -O2 -g -Wall -Wextra -o "$TMP/client_requests" "$ROOT/bench/client_requests.c" || exit 1
PROG=$TMP/client_requests

tools=(native ptrace agent)
command -v valgrind >/dev/null && tools+=(memcheck)
run_tool() { # tool rounds mode -> wall µs
    local tool=$1; shift
    case $tool in
        native) wall_us "$PROG" "$@" ;;
        memcheck) wall_us valgrind -q --run-libc-freeres=no "$PROG" "$@" ;;
        *) wall_us "$MEMTRACE" -q --engine="$tool" -j -o "$TMP/$tool.json" "$PROG" "$@" ;;
    esac
}
# memtrace's books for a run of n rounds: n allocs and n frees of the work
# (beyond those of a run of 0 rounds).
books() { python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["heap"]; print(h["allocs"], h["frees"])' "$1"; }

declare -A T S B0
modes=(request malloc)
for ((r = 0; r < REPS; r++)); do
    for mode in "${modes[@]}"; do
        for tool in "${tools[@]}"; do
            echo "client-request-bench: $mode: $tool ($((r + 1))/$REPS)" >&2
            S[$mode,$tool]+=" $(run_tool "$tool" 0 "$mode")"
            case $tool in ptrace|agent) B0[$mode,$tool]=$(books "$TMP/$tool.json") ;; esac
            T[$mode,$tool]+=" $(run_tool "$tool" "$ROUNDS" "$mode")"
            grep -q "^client_requests: $((ROUNDS * 2)) calls" "$TMP/out" ||
                { echo "client-request-bench: $mode under $tool failed: $(tail -2 "$TMP/out")" >&2; exit 1; }
            case $tool in
            ptrace|agent)
                read -r a0 f0 <<<"${B0[$mode,$tool]}"
                read -r a1 f1 <<<"$(books "$TMP/$tool.json")"
                [ $((a1 - a0)) = "$ROUNDS" ] && [ $((f1 - f0)) = "$ROUNDS" ] || {
                    echo "client-request-bench: $mode under $tool booked $((a1 - a0)) allocs and $((f1 - f0)) frees, not $ROUNDS each" >&2
                    exit 1
                } ;;
            esac
        done
    done
done

echo
echo "== client requests beside malloc (µs per call over native; $REPS runs, medians; $((ROUNDS * 2)) calls) =="
echo "machine: $(uname -m), $(nproc) CPUs, Linux $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-40s %12s' calls "native (s)"
for tool in "${tools[@]}"; do [ "$tool" = native ] || printf ' %10s' "$tool"; done
echo
for mode in "${modes[@]}"; do
    case $mode in
        request) label="MALLOCLIKE + FREELIKE client requests" ;;
        malloc) label="malloc + free" ;;
    esac
    printf '%-40s %12s' "$label" "$(calc "$(median ${T[$mode,native]}) / 1e6" 3)"
    nat=$(( $(median ${T[$mode,native]} | cut -d. -f1) - $(median ${S[$mode,native]} | cut -d. -f1) ))
    for tool in "${tools[@]}"; do
        [ "$tool" = native ] && continue
        printf ' %10s' "$(calc "(($(median ${T[$mode,$tool]}) - $(median ${S[$mode,$tool]})) - $nat) / ($ROUNDS * 2)" 2)"
    done
    echo
done
echo "(startup, a run of 0 rounds, taken out; memtrace's books checked to hold every round)"
