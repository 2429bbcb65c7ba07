#!/usr/bin/env bash
# Hostile and broken peers against memtrace-fs on loopback (gaps left by
# fs_loopback/fs_kill/fs_allow): a frame cut short, garbage after a good
# hello, a slow-loris peer sending a byte at a time, and more connections
# than the server has slots, idle ones included.  After each, a real client
# (test_wire) must be served promptly with the right bytes (cmp), and the
# server's memory (VmRSS from /proc) must stay within a fixed bound.
set -u
. "$(dirname "$0")/fs_common.bash"
trap 'stop_fs >/dev/null 2>&1; [ -n "${HOLD:-}" ] && kill $HOLD 2>/dev/null' EXIT
root=$MT_TMP/sysroot
make_sysroot "$root"
start_fs "$MT_TMP/fs.log" "$MEMTRACE_FS" -n -p 0 "$root"
port=$FS_PORT

served_within() { # SECONDS TAG: one real client reads /usr/bin/prog in time
    local start=$SECONDS
    echo "path /usr/bin/prog $MT_TMP/got.$2" |
        timeout "$1" "$TEST_WIRE" client -c "127.0.0.1:$port" 5000 >"$MT_TMP/client.$2" 2>&1
    grep -q '^ok' "$MT_TMP/client.$2" || fail "$2: a real client was not served in $1 s: $(cat "$MT_TMP/client.$2")"
    cmp -s "$MT_TMP/got.$2" "$root/usr/bin/prog" || fail "$2: bytes differ"
    echo "$2: real client served in $((SECONDS - start)) s"
}

PEERS=$(cat <<'PY'
import socket, struct, sys, time, os
port, what = int(sys.argv[1]), sys.argv[2]
def frame(t, p): return struct.pack(">IBBH", len(p), t, 0, 0) + p
hello = frame(1, struct.pack(">IH", 0x4d544653, 1) + struct.pack(">H", 7) + b"hostile")
def conn(): return socket.create_connection(("127.0.0.1", port), timeout=10)
def read_reply(s):
    try:
        return s.recv(65536)
    except (ConnectionResetError, socket.timeout):
        return b""
if what == "truncated":
    s = conn(); s.sendall(hello); read_reply(s)
    s.sendall(frame(2, struct.pack(">H", 40) + b"/usr/bin/prog")[:12])  # header says more
    s.close()
    s = conn(); s.sendall(hello[:5]); s.close()                          # cut inside hello
elif what == "garbage":
    s = conn(); s.sendall(hello); read_reply(s)
    try:
        s.sendall(os.urandom(4096))
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server may hang up before taking it all
    r = read_reply(s)
    print("garbage after hello ->", len(r), "bytes, then", "closed" if not read_reply(s) else "open")
    s.close()
elif what == "slowloris":
    # Forks: the slow peer keeps going while the caller runs a real client.
    if os.fork() == 0:
        try:
            s = conn()
            for b in hello:
                s.send(bytes([b])); time.sleep(0.4)
        except OSError:
            pass  # hung up on: what a server may do to a slow peer
        os._exit(0)
elif what == "flood":
    # More connections than slots, each with a good hello, then held idle.
    held, refused = [], 0
    for i in range(int(sys.argv[3])):
        s = conn(); s.sendall(hello)
        if read_reply(s)[:8] and len(held) < 1000: held.append(s)
        else: refused += 1
    print("flood: %d sessions held, %d refused" % (len(held), refused), flush=True)
    sys.stdout.close()
    time.sleep(60)
PY
)

python3 -c "$PEERS" "$port" truncated || fail "truncated peer script"
served_within 5 truncated
python3 -c "$PEERS" "$port" garbage || fail "garbage peer script"
served_within 5 garbage
python3 -c "$PEERS" "$port" slowloris
served_within 3 slowloris

# 80 peers: the first 64 get slots, the rest are refused while those are
# fresh; once they idle past the eviction time a real client gets in.
python3 -c "$PEERS" "$port" flood 80 >"$MT_TMP/flood.out" &
HOLD=$!
for ((t = 0; t < 100; t++)); do [ -s "$MT_TMP/flood.out" ] && break; sleep 0.1; done
cat "$MT_TMP/flood.out"
held=$(sed -n 's/flood: \([0-9]*\) sessions held.*/\1/p' "$MT_TMP/flood.out")
# 64 slots; the slow-loris peer may still hold one.
[ -n "$held" ] && [ "$held" -ge 63 ] && [ "$held" -le 64 ] || fail "slot limit not as documented (64): $held held"
rss_kb=$(awk '/^VmRSS:/ {print $2}' /proc/"$FS_PID"/status)
threads=$(awk '/^Threads:/ {print $2}' /proc/"$FS_PID"/status)
echo "memtrace-fs with 64 sessions: VmRSS ${rss_kb} kB, $threads threads"
# Each session holds at most a 1 MiB frame and a 512 KiB read buffer.
[ "$rss_kb" -lt $((64 * 1536 + 32768)) ] || fail "memtrace-fs RSS ${rss_kb} kB is not bounded"
# The flood's sessions idle past the eviction time (5 s, host-fs/clients.h):
# then a real client gets in.
try_client() {
    echo "path /usr/bin/prog $MT_TMP/got.try" |
        timeout 5 "$TEST_WIRE" client -c "127.0.0.1:$port" 5000 2>/dev/null | grep -q '^ok'
}
wait_until 15 "a real client to be served once the flood idles" try_client
served_within 5 evicts-idle
grep -q "closing the connection idle for" "$MT_TMP/fs.log" || fail "no eviction logged"
kill $HOLD; HOLD=
stop_fs || fail "memtrace-fs did not stop cleanly"
grep -E "bad request|refused|timed out|idle" "$MT_TMP/fs.log" | sort | uniq -c | head
