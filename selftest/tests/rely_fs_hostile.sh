#!/usr/bin/env bash
# Hostile and broken peers against memtrace-fs on loopback (gaps left by
# fs_loopback/fs_kill/fs_allow): a frame cut short, garbage after a good
# hello, a slow-loris peer sending a byte at a time, and more connections
# than the server has slots (from as many addresses), idle ones included.  After each, a real client
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
    # More connections than slots, each from its own address (one address
    # gets only CLIENTS_PER_ADDR), with a good hello, then held idle.
    held = []
    for i in range(int(sys.argv[3])):
        s = socket.socket(); s.settimeout(10); s.bind(("127.0.1.%d" % (i + 1), 0))
        s.connect(("127.0.0.1", port)); s.sendall(hello)
        if read_reply(s)[:8]: held.append(s)
    time.sleep(0.5)
    alive = 0
    for s in held:
        s.setblocking(False)
        try:
            alive += s.recv(1) != b""
        except BlockingIOError:
            alive += 1           # nothing to read: still open
        except OSError:
            pass
    print("flood: %d sessions held, %d evicted" % (alive, len(held) - alive), flush=True)
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

# 80 peers from 80 addresses: 64 slots; newcomers evict peers that were
# never served, so 64 stay (the slow-loris peer, unverified, goes first).
python3 -c "$PEERS" "$port" flood 80 >"$MT_TMP/flood.out" &
HOLD=$!
for ((t = 0; t < 200; t++)); do [ -s "$MT_TMP/flood.out" ] && break; sleep 0.1; done
cat "$MT_TMP/flood.out"
held=$(sed -n 's/flood: \([0-9]*\) sessions held.*/\1/p' "$MT_TMP/flood.out")
[ "$held" = 64 ] || fail "slot limit not as documented (64): $held held"
rss_kb=$(awk '/^VmRSS:/ {print $2}' /proc/"$FS_PID"/status)
threads=$(awk '/^Threads:/ {print $2}' /proc/"$FS_PID"/status)
echo "memtrace-fs with 64 sessions: VmRSS ${rss_kb} kB, $threads threads"
# Each session holds at most a 1 MiB frame and a 512 KiB read buffer.
[ "$rss_kb" -lt $((64 * 1536 + 32768)) ] || fail "memtrace-fs RSS ${rss_kb} kB is not bounded"
served_within 5 evicts-unserved
grep -q "slots busy: closing a connection" "$MT_TMP/fs.log" || fail "no eviction logged"
kill $HOLD; HOLD=
stop_fs || fail "memtrace-fs did not stop cleanly"
grep -E "bad request|refused|timed out|idle" "$MT_TMP/fs.log" | sort | uniq -c | head
