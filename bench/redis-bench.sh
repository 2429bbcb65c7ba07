#!/usr/bin/env bash
# make bench, fifth part: a real server attached, not started (issues 28
# and 35).  Debian's redis-server (its allocator: libjemalloc.so.2) runs
# untraced on a unix socket; each tool attaches to it (-p) and
# redis-benchmark runs a fixed workload (SET, GET and LPUSH from 2 clients):
#   untraced, heaptrack -p (injected by gdb), memtrace -p (the agent),
#   memtrace -p --sample 524288 and memtrace -p --engine=ptrace.
#
#   bench/redis-bench.sh BUILD   (REDIS_BENCH_REPS=3, REDIS_BENCH_N=20000)
#
# Timed: redis-benchmark's wall time alone, once the tool is attached (the
# attach and the report are outside the window: a server traced for hours
# pays them once).  A fresh server for every tool and repetition, the tools
# interleaved within a repetition so that machine noise hits them alike.
# Per call = (median traced wall - median untraced wall) / calls, calls
# being heaptrack's count of allocation calls for the same workload (it
# records up to the server's shutdown, so its count holds the shutdown's
# frees too; the difference is a few hundred calls in 280,000).
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MEMTRACE=$ROOT/$BUILD/memtrace
REPS=${REDIS_BENCH_REPS:-3}
N=${REDIS_BENCH_N:-20000}
SAMPLE=${REDIS_BENCH_SAMPLE:-524288}
TMP=$(mktemp -d /tmp/memtrace-redis-bench.XXXXXX)
SOCK=$TMP/redis.sock
RPID="" TPID=""
cleanup() {
    [ -n "$TPID" ] && kill "$TPID" 2>/dev/null
    [ -n "$RPID" ] && kill "$RPID" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
export MEMTRACE_NO_SUPERVISOR=1
die() { echo "redis-bench: $*" >&2; exit 1; }
progress() { echo "redis-bench: $*" >&2; }
[ -x "$MEMTRACE" ] || die "build $BUILD first"
for c in redis-server redis-benchmark redis-cli; do
    command -v "$c" >/dev/null || { echo "redis-bench: no $c (apt-get install redis-server redis-tools): skipped"; exit 0; }
done
tools=(untraced)
command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null && command -v gdb >/dev/null && tools+=(heaptrack)
tools+=(agent sample ptrace)

. "$ROOT/bench/bench.bash"
# until SECONDS WHAT CMD...: CMD succeeds within SECONDS, or the bench ends.
until_ok() {
    local end=$((SECONDS + $1)) what=$2; shift 2
    until "$@"; do
        [ $SECONDS -lt "$end" ] || die "no $what after ${end}s"
        sleep 0.05
    done
}

server_start() {
    rm -f "$SOCK"
    # No slow log: the breakpoint engine's slowdown would fill it, and that
    # is an allocation count of the tracer's speed, not of the workload's.
    redis-server --port 0 --unixsocket "$SOCK" --save '' --appendonly no --dir "$TMP" \
        --slowlog-log-slower-than -1 --daemonize no >"$TMP/redis.log" 2>&1 &
    RPID=$!
    until_ok 20 "redis-server socket" test -S "$SOCK"
    until_ok 20 "redis-server answer" redis-cli -s "$SOCK" ping >/dev/null 2>&1
}
server_stop() {
    redis-cli -s "$SOCK" shutdown nosave >/dev/null 2>&1
    wait "$RPID" 2>/dev/null
    RPID=
}
workload() { # -> wall µs of redis-benchmark
    local t0 t1
    t0=$(now_us)
    redis-benchmark -s "$SOCK" -n "$N" -c 2 -t set,get,lpush -q >"$TMP/bench.out" 2>&1 ||
        die "redis-benchmark: $(tail -n 3 "$TMP/bench.out")"
    t1=$(now_us)
    echo $((t1 - t0))
}
# The console's "help quit" line ends every answer: once "status" has been
# answered, memtrace is attached and tracing.
SENTINEL='    detach from the target, write the final report, exit'
console_ready() { grep -qxF -- "$SENTINEL" "$TMP/console.out"; }

run_tool() { # tool rep -> wall µs; memtrace's allocs in $TMP/allocs.TOOL
    local tool=$1 rep=$2 wall fifo=$TMP/console.fifo
    server_start
    case $tool in
        untraced) wall=$(workload) ;;
        heaptrack)
            heaptrack -o "$TMP/ht.$rep" -p "$RPID" >"$TMP/heaptrack.log" 2>&1 &
            TPID=$!
            until_ok 180 "heaptrack injection" grep -q 'injection finished' "$TMP/heaptrack.log"
            wall=$(workload)
            server_stop
            wait "$TPID"
            TPID=
            local trace
            trace=$(ls "$TMP"/ht."$rep".*zst "$TMP"/ht."$rep".*gz 2>/dev/null | head -n 1)
            [ -n "$trace" ] || die "no heaptrack trace: $(tail -n 3 "$TMP/heaptrack.log")"
            heaptrack_print -f "$trace" 2>/dev/null |
                sed -n 's/^calls to allocation functions: \([0-9]*\) .*/\1/p' >"$TMP/calls.$rep"
            rm -f "$trace" ;;
        agent|sample|ptrace)
            local opts=(-q -j -o "$TMP/$tool.json")
            case $tool in
                sample) opts+=(--engine=agent --sample "$SAMPLE") ;;
                *) opts+=(--engine="$tool") ;;
            esac
            rm -f "$fifo"; mkfifo "$fifo"
            : >"$TMP/console.out"
            "$MEMTRACE" "${opts[@]}" -p "$RPID" <"$fifo" >"$TMP/console.out" 2>"$TMP/console.err" &
            TPID=$!
            exec 3>"$fifo"
            printf 'status\nhelp quit\n' >&3
            until_ok 120 "memtrace -p ($tool) console answer" console_ready
            wall=$(workload)
            printf 'quit\n' >&3
            exec 3>&-
            wait "$TPID" || die "memtrace -p ($tool) ended with status $?: $(tail -n 3 "$TMP/console.err")"
            TPID=
            python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["heap"]["allocs"])' \
                "$TMP/$tool.json" >"$TMP/allocs.$tool" || die "memtrace ($tool): no JSON report" ;;
    esac
    [ -n "$RPID" ] && server_stop
    echo "$wall"
}

declare -A walls
for ((rep = 1; rep <= REPS; rep++)); do
    for t in "${tools[@]}"; do
        progress "repetition $rep/$REPS: $t"
        w=$(run_tool "$t" "$rep") || exit 1
        walls[$t]="${walls[$t]:-} $w"
    done
done

calls=
if [ -f "$TMP/calls.1" ]; then
    # shellcheck disable=SC2046
    calls=$(median $(cat "$TMP"/calls.*))
fi
base=$(median ${walls[untraced]})
echo
echo "redis-server attached (-p) during redis-benchmark -n $N -c 2 -t set,get,lpush, $REPS repetitions, medians"
echo "calls: heaptrack's count of allocation calls (${calls:-no heaptrack}); per call = (wall - untraced wall) / calls"
printf '%-10s %12s %12s %12s %14s\n' tool "wall ms" "requests/s" "µs/call" "memtrace allocs"
for t in "${tools[@]}"; do
    w=$(median ${walls[$t]})
    pc=-
    [ -n "$calls" ] && [ "$t" != untraced ] && pc=$(calc "($w - $base) / $calls")
    al=-
    [ -f "$TMP/allocs.$t" ] && al=$(cat "$TMP/allocs.$t")
    printf '%-10s %12s %12s %12s %14s\n' "$t" "$(calc "$w / 1000" 1)" "$(calc "3 * $N / ($w / 1000000)" 0)" "$pc" "$al"
done
if [ -n "$calls" ]; then
    ht=$(median ${walls[heaptrack]})
    ag=$(median ${walls[agent]})
    echo "agent / heaptrack per call: $(calc "($ag - $base) / ($ht - $base)")"
fi
# Issue 35's target: with --sample, the server's throughput within 5% of
# untraced (throughput = requests / wall, so the walls' ratio says it).
sw=$(median ${walls[sample]})
echo "sample throughput / untraced: $(calc "$base / $sw" 3) (target >= 0.95: $(verdict "$base / $sw >= 0.95"))"
