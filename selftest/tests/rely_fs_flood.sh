#!/usr/bin/env bash
# Issue 21, finding 1: 64 busy peers must not lock real targets out.  Each
# flood connection says hello and then sends one tiny request every 2 s
# (never idle), reconnecting whenever it is closed.  While it runs, a real
# target (memtrace -c) traces demo to the end, with names from memtrace-fs.
#   1. 64 connections from one address: CLIENTS_PER_ADDR (8) get in.
#   2. 64 connections from 64 addresses (127.0.2.x): the table is full of
#      peers that were never served; a newcomer evicts one of them.
# Then the limits an honest target never reaches, made small by the test
# knob MEMTRACE_FS_TEST_LIMITS: the request rate and the session lifetime.
# Loopback only, memtrace-fs -n.
set -u
. "$(dirname "$0")/fs_common.bash"
FLOOD=
trap 'stop_fs >/dev/null 2>&1; [ -n "$FLOOD" ] && kill $FLOOD 2>/dev/null' EXIT
demo=$MT_PROGS/demo
root=$MT_TMP/root
mkdir -p "$root$(dirname "$demo")" && cp "$demo" "$root$demo"

FLOOD_PY=$(cat <<'PY'
import sys, time, socket, fs_wire as w
port, mode, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
src = lambda i: "127.0.0.2" if mode == "single" else "127.0.2.%d" % (i + 1)
conns = [None] * n
refused = 0
def open_one(i):
    global refused
    try:
        conns[i] = w.session(port, src(i))
        conns[i].settimeout(3)
    except (OSError, RuntimeError):
        conns[i] = None
        refused += 1
first = True
while True:
    for i in range(n):
        if conns[i] is None:
            open_one(i)
            continue
        try:
            conns[i].sendall(w.read(9999, 0, 1))       # tiny: an error reply
            if w.recv_frame(conns[i]) is None:
                raise OSError("closed")
        except OSError:
            conns[i].close()
            conns[i] = None
    held = sum(c is not None for c in conns)
    print("flood %s: %d of %d connections held, %d refused so far" % (mode, held, n, refused),
          flush=True)
    time.sleep(2)
PY
)

real_target() { # TAG: demo traced to the end with memtrace -c, names from memtrace-fs
    local start=$SECONDS
    "$MEMTRACE" -c "127.0.0.1:$FS_PORT" "$demo" >"$MT_TMP/report.$1" 2>"$MT_TMP/err.$1"
    local rc=$?
    "$demo" >/dev/null 2>&1; local want=$?
    [ $rc -eq $want ] || { cat "$MT_TMP/err.$1"; fail "$1: memtrace exited $rc, demo exits $want"; }
    grep -q "cache_insert() in " "$MT_TMP/report.$1" || fail "$1: the report has no names"
    grep -q "HEAP SUMMARY" "$MT_TMP/report.$1" || fail "$1: no final report"
    echo "$1: the real target traced demo to the end in $((SECONDS - start)) s"
}

flood() { # MODE N
    PYTHONPATH=$(dirname "$0") python3 -c "$FLOOD_PY" "$FS_PORT" "$1" "$2" >"$MT_TMP/flood.$1" 2>&1 &
    FLOOD=$!
    for _ in $(seq 1 100); do grep -qs "connections held" "$MT_TMP/flood.$1" && break; sleep 0.1; done
    sleep 2.5   # a second round: every connection has sent a request again
    tail -n 1 "$MT_TMP/flood.$1"
}

start_fs "$MT_TMP/fs.log" "$MEMTRACE_FS" -n -p 0 "$root"

flood single 64
held=$(tail -n 1 "$MT_TMP/flood.single" | sed -n 's/.*: \([0-9]*\) of.*/\1/p')
[ "$held" = 8 ] || fail "one address holds $held connections (8 expected)"
real_target single-address
kill $FLOOD; wait $FLOOD 2>/dev/null; FLOOD=
grep -q "connected (memtrace on" "$MT_TMP/fs.log" || fail "memtrace-fs never served the real target"
grep -q "refused: 8 connections from this address already" "$MT_TMP/fs.log" ||
    fail "no per-address refusal logged"
stop_fs || fail "memtrace-fs did not stop cleanly"

# A fresh server (and a fresh log budget) for the spread flood.
start_fs "$MT_TMP/fs.log" "$MEMTRACE_FS" -n -p 0 "$root"
flood spread 64
held=$(tail -n 1 "$MT_TMP/flood.spread" | sed -n 's/.*: \([0-9]*\) of.*/\1/p')
[ "$held" -ge 60 ] || fail "the spread flood holds only $held slots: did it fill the table?"
real_target spread
grep -q "all 64 slots busy: closing a connection (idle" "$MT_TMP/fs.log" ||
    fail "no eviction of an unserved peer logged"
kill $FLOOD; wait $FLOOD 2>/dev/null; FLOOD=
grep -q "connected (memtrace on" "$MT_TMP/fs.log" || fail "memtrace-fs never served the real target"
stop_fs || fail "memtrace-fs did not stop cleanly"

# Request rate and session lifetime, small for the test.
MEMTRACE_FS_TEST_LIMITS=rate=50,burst=100,lifetime=2 start_fs "$MT_TMP/fs2.log" \
    "$MEMTRACE_FS" -n -p 0 "$root"
PYTHONPATH=$(dirname "$0") python3 - "$FS_PORT" <<'PY' || fail "limits"
import sys, time, fs_wire as w
port = int(sys.argv[1])
s = w.session(port)
answered = 0
for i in range(1000):
    s.sendall(w.read(9999, 0, 1))
    r = w.recv_frame(s)
    if r is None or (r[0] == w.ERROR and "rate" in w.error_text(r[2])[1]):
        break
    answered += 1
print("rate limit: hung up after %d quick requests (burst 100, 50/s)" % answered)
assert 100 <= answered < 200, answered
s = w.session(port)
s.sendall(w.read(9999, 0, 1)); assert w.recv_frame(s)[0] == w.ERROR
time.sleep(2.5)
s.sendall(w.read(9999, 0, 1))
r = w.recv_frame(s)
assert r is None or "lifetime" in w.error_text(r[2])[1], r
print("lifetime: closed after 2 s:", r and w.error_text(r[2])[1])
PY
stop_fs || fail "memtrace-fs did not stop cleanly"
grep -E "closing: (request rate|session lifetime)" "$MT_TMP/fs2.log"
echo "rely_fs_flood: ok"
