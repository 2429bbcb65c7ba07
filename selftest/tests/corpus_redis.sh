#!/usr/bin/env bash
# The corpus (corpus_common.bash): Debian's redis-server (its allocator:
# libjemalloc.so.2), started untraced on a unix socket, attached (memtrace
# -p) under each engine while redis-benchmark runs a fixed workload, then
# detached (the console's quit): memtrace's allocation count is within 1% of
# heaptrack's (heaptrack -p, injected into the same server afterwards, for
# the same workload, up to the server's shutdown), jemalloc is named the
# allocator, no misuse error is reported, and the server keeps serving
# after each detach.
set -u
. "$MT_ROOT/selftest/tests/corpus_common.bash"
cd "$MT_TMP" || fail "no scratch directory"
corpus_need redis-server redis-server
corpus_need redis-benchmark redis-tools
corpus_need redis-cli redis-tools
corpus_need heaptrack heaptrack
corpus_need heaptrack_print heaptrack
corpus_need gdb gdb

sock=$MT_TMP/redis.sock
redis() { redis-cli -s "$sock" "$@"; }
# No slow log: it records each command slower than 10 ms, and the breakpoint
# engine's slowdown makes some so (an allocation count of the tracer's
# speed, not of the workload's).
redis-server --port 0 --unixsocket "$sock" --save '' --appendonly no --dir "$MT_TMP" \
    --slowlog-log-slower-than -1 --daemonize no >redis.log 2>&1 &
rpid=$!
cleanup() {
    kill "$rpid" "${CONSOLE_PID:-}" "${htpid:-}" 2>/dev/null
    true
}
trap cleanup EXIT
wait_until 20 "redis-server's socket" test -S "$sock"
# The workload: 2000 of each of SET, GET and LPUSH from 2 clients.
workload() {
    redis-benchmark -s "$sock" -n 2000 -c 2 -t set,get,lpush -q >"bench.$1.out" 2>&1 ||
        fail "redis-benchmark ($1): $(tail -n 3 "bench.$1.out")"
}
# serving TAG: the server answers (a value set and read back).
serving() {
    [ "$(redis set "corpus:$1" "value $1")" = OK ] && [ "$(redis get "corpus:$1")" = "value $1" ]
}
serving before || fail "redis-server does not answer"
mt_counts=()
for e in "${CORPUS_ENGINES[@]}"; do
    console_open "console.$e.out" -q --engine "$e" -j -o "redis.$e.json" -p "$rpid"
    console_cmd status   # answered once attached
    workload "$e"
    printf 'quit\n' >&3
    exec 3>&-
    wait "$CONSOLE_PID" || fail "memtrace -p ($e) ended with status $?: $(tail -n 3 "console.$e.out.err")"
    CONSOLE_PID=
    kill -0 "$rpid" 2>/dev/null || fail "redis-server ended under memtrace ($e)"
    serving "$e" || fail "redis-server does not serve after memtrace ($e) detached"
    mt_counts+=("$e $(memtrace_json_figures "redis.$e.json" | cut -d' ' -f1)")
    corpus_no_errors "redis.$e.json" || fail "memtrace ($e) reports misuse errors in redis-server"
    python3 - "redis.$e.json" <<'PY' || fail "memtrace ($e): jemalloc is not redis-server's allocator"
import json, sys
a = json.load(open(sys.argv[1])).get('allocators') or ['(none)']
sys.exit(0 if 'libjemalloc' in a[0] else 'allocators: %s' % a)
PY
done
# heaptrack, injected by gdb, stays in the server: it records until the
# server ends.
heaptrack -o "$MT_TMP/ht" -p "$rpid" >heaptrack.log 2>&1 &
htpid=$!
wait_until 120 "heaptrack's injection" grep -q 'injection finished' heaptrack.log
workload heaptrack
redis shutdown nosave >/dev/null 2>&1
wait "$htpid" || fail "heaptrack -p ended with status $?: $(tail -n 3 heaptrack.log)"
htpid=
trace=$(ls "$MT_TMP"/ht.*zst "$MT_TMP"/ht.*gz 2>/dev/null | head -n 1)
[ -n "$trace" ] || fail "no heaptrack trace: $(tail -n 3 heaptrack.log)"
ht=$(heaptrack_print -f "$trace" 2>/dev/null | sed -n 's/^calls to allocation functions: \([0-9]*\) .*/\1/p')
[ -n "$ht" ] || fail "heaptrack_print printed no count"
line="oracle heaptrack -p $ht allocation calls"
verdict=ok
for m in "${mt_counts[@]}"; do
    read -r e n <<<"$m"
    line="$line | $e -p $n allocs ($(python3 -c "print('%+.2f%%' % (100.0 * ($n - $ht) / $ht))"))"
    # within 1%: |n - ht| * 100 <= ht
    [ $(( (n > ht ? n - ht : ht - n) * 100 )) -le "$ht" ] || verdict="FAIL: $e is more than 1% off"
done
corpus_verdict redis_server "$verdict" "$line; served after each detach"

corpus_end
