#!/usr/bin/env bash
# Hostile HTTP input to memtrace-fs's debuginfod endpoint, on loopback: an
# oversized header, bad and absurd ranges, path escapes in source/ (.., %2e,
# symlinks out of the sysroot, a FIFO), other methods, a peer that never
# finishes its header, more connections than one address may hold, a peer
# outside --allow.  Each is refused with a 4xx or a hang-up, the secret
# outside the sysroot never appears, and memtrace-fs keeps serving (cmp of
# a debuginfod-find download at the end).
set -u
. "$(dirname "$0")/fs_common.bash"
need_debuginfod_clients
trap 'stop_fs >/dev/null 2>&1' EXIT
root=$MT_TMP/sysroot
make_sysroot "$root"
id=$(readelf_build_id "$root/usr/bin/prog")

# A file bigger than any socket buffer, for the peer that stops reading.
truncate -s 40M "$root/lib/big.bin"
MEMTRACE_FS_TEST_LIMITS=io_timeout=3000 \
    start_fs "$MT_TMP/fs.log" "$MEMTRACE_FS" -n -p 0 --http 0 "$root"
HP=$(fs_http_port "$MT_TMP/fs.log") || { echo "$HP"; exit 1; }
URL=http://127.0.0.1:$HP

code_of() { curl -sS --path-as-is -o "$MT_TMP/body" -w '%{http_code}' "$@" 2>/dev/null; }
expect() { # WANT-REGEX WHAT CURL-ARGS...
    local want=$1 what=$2; shift 2
    local got
    got=$(code_of "$@")
    [[ $got =~ ^($want)$ ]] || fail "$what: HTTP $got, expected $want"
    grep -q "top secret" "$MT_TMP/body" && fail "$what: the secret outside the sysroot was served"
    printf '  %-44s HTTP %s\n' "$what" "$got"
}

echo "paths:"
expect 403 "source/../../secret" "$URL/buildid/$id/source/../../../secret"
expect 403 "source/%2e%2e/ (decoded by MHD)" "$URL/buildid/$id/source/%2e%2e/%2e%2e/%2e%2e/secret"
expect 403 "source: relative link out" "$URL/buildid/$id/source/lib/escape-rel"
expect '403|404' "source: absolute link to the host" "$URL/buildid/$id/source/lib/escape-abs"
expect 403 "source: directory link out" "$URL/buildid/$id/source/lib/escape-dir/secret"
expect 403 "source: link loop" "$URL/buildid/$id/source/lib/loop1"
expect 403 "source: a FIFO" "$URL/buildid/$id/source/lib/fifo"
expect 404 "source of an unknown build-id" "$URL/buildid/0123456789abcdef/source/usr/bin/prog"
expect 404 "build-id not hex" "$URL/buildid/zz$id/debuginfo"
expect 404 "odd-length build-id" "$URL/buildid/${id}0/debuginfo"
expect 404 "build-id over 64 bytes" "$URL/buildid/$(printf 'ab%.0s' $(seq 1 65))/debuginfo"
expect 404 "unknown kind" "$URL/buildid/$id/coredump"
expect 404 "section with a slash" "$URL/buildid/$id/section/a/b"
expect 405 "POST" -X POST -d x "$URL/buildid/$id/debuginfo"
expect 405 "DELETE" -X DELETE "$URL/buildid/$id/debuginfo"
expect 413 "GET with a body" -X GET -d x "$URL/buildid/$id/debuginfo"
expect 413 "GET with a chunked body" -X GET -H "Transfer-Encoding: chunked" -d x "$URL/buildid/$id/debuginfo"
expect 200 "source/ of a file inside (control)" "$URL/buildid/$id/source/usr/bin/prog"
# Refused paths are logged: with escapes, a line break and a forged line in
# them (decoded by MHD before memtrace-fs sees them), and very long.
forged="memtrace-fs: warning: FORGED"
expect 403 "refused path with ESC, CR LF, BEL, 0x9b" \
    "$URL/buildid/$id/source/../../../secret%1b%5b2J%1b%5b31m%07%9b%0d%0a${forged// /%20}"
long=$(printf "$(printf 'x%.0s' $(seq 1 200))/%.0s" $(seq 1 15))
expect 403 "refused path of 3000 bytes" "$URL/buildid/$id/source/../../../$long"

# The log, read as cat -v shows it: no control character or high byte
# (cat -v writes them ^X and M-X), the forged line is not a line of its
# own, the escape is written \x1b, and no line passes 600 bytes.
cat -v "$MT_TMP/fs.log" >"$MT_TMP/fs.log.v"
if grep -nE '\^[][@A-Z\\^_?]|M-' "$MT_TMP/fs.log.v" | head -n 3 | grep .; then
    fail "the log holds raw control characters (cat -v above)"
fi
grep -q "^$forged" "$MT_TMP/fs.log" && fail "a peer forged a log line: $(grep -n "^$forged" "$MT_TMP/fs.log")"
grep -qF 'secret\x1b[2J\x1b[31m\x07\x9b\x0d\x0amemtrace-fs: warning: FORGED' "$MT_TMP/fs.log" ||
    fail "the refused path is not in the log, escaped: $(grep -a secret "$MT_TMP/fs.log" | cat -v)"
longest=$(awk '{ if (length($0) > n) n = length($0) } END { print n + 0 }' "$MT_TMP/fs.log")
[ "$longest" -le 640 ] || fail "a log line of $longest bytes"
echo "  log: refused paths escaped (\\xNN), no forged line, longest line $longest bytes"

echo "ranges:"
size=$(stat -c %s "$root/usr/bin/.debug/prog.debug")
dbg=$URL/buildid/$id/debuginfo
expect 416 "bytes=SIZE-" -H "Range: bytes=$size-" "$dbg"
expect 416 "bytes=-0" -H "Range: bytes=-0" "$dbg"
expect 416 "bytes=18446744073709551615-" -H "Range: bytes=18446744073709551615-" "$dbg"
for r in "bytes=99999999999999999999999-" "bytes=5-2" "bytes=abc" "bytes=" "bytes=-" \
         "bytes=0-1,5-6" "items=0-1" "bytes=--5" "bytes=1-2-3"; do
    expect 200 "Range: $r (ignored: whole file)" -H "Range: $r" "$dbg"
    cmp -s "$MT_TMP/body" "$root/usr/bin/.debug/prog.debug" || fail "Range: $r: not the whole file"
done

echo "oversized header:"
python3 - "$HP" <<'PY' || fail "oversized header"
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
try:
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 200000 + b"\r\n\r\n")
except OSError:
    pass  # hung up on mid-send: refused too
data = b""
try:
    while True:
        d = s.recv(4096)
        if not d:
            break
        data += d
except OSError:
    pass
line = data.split(b"\r\n", 1)[0].decode(errors="replace")
print("  200 KB header:", line or "(hung up)")
sys.exit(0 if line == "" or line.split()[1][0] == "4" else 1)
PY

echo "slow peer:"
start=$(date +%s%N)
python3 - "$HP" <<'PY' || fail "slow peer"
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
t = time.time()
# One header byte a second: the header never completes.
try:
    while time.time() - t < 20:
        s.sendall(b"X")
        s.settimeout(1)
        try:
            if s.recv(4096) == b"":
                break
        except socket.timeout:
            pass
except OSError:
    pass
print("  hung up on after %.1f s" % (time.time() - t))
sys.exit(0 if time.time() - t < 15 else 1)
PY
grep -q "no complete HTTP request within" "$MT_TMP/fs.log" || fail "no log line for the slow peer"

echo "peer that stops reading:"
python3 - "$HP" "$id" <<'PY' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.sendall(("GET /buildid/%s/source/lib/big.bin HTTP/1.1\r\nHost: x\r\n\r\n" % sys.argv[2]).encode())
time.sleep(15)
PY
reader=$!
for _ in $(seq 1 100); do
    grep -q "the reply made no progress for 3000 ms" "$MT_TMP/fs.log" && break
    sleep 0.1
done
kill "$reader" 2>/dev/null; wait "$reader" 2>/dev/null
grep -q "the reply made no progress for 3000 ms" "$MT_TMP/fs.log" ||
    fail "a peer that stopped reading a 40 MB reply was not cut"
echo "  cut after 3 s without progress (io_timeout=3000; 30 s by default)"

echo "connections per address:"
python3 - "$HP" <<'PY' || fail "per-address limit"
import socket, sys, time
port = int(sys.argv[1])
held = [socket.create_connection(("127.0.0.1", port)) for _ in range(8)]
time.sleep(0.5)
extra = socket.create_connection(("127.0.0.1", port), timeout=5)
extra.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
try:
    got = extra.recv(100)
except OSError:
    got = b""
print("  9th connection from 127.0.0.1:", got.split(b"\r\n")[0].decode() or "hung up")
sys.exit(0 if got == b"" else 1)
PY
grep -q "connections from this address already" "$MT_TMP/fs.log" || fail "no log line for the 9th connection"

# Still serving after all of that.
export DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH=$MT_TMP/cache
got=$(debuginfod-find debuginfo "$id") || fail "memtrace-fs stopped serving"
cmp "$got" "$root/usr/bin/.debug/prog.debug" || fail "bytes differ after the hostile input"
stop_fs || fail "memtrace-fs did not stop cleanly"

echo "--allow:"
start_fs "$MT_TMP/fs2.log" "$MEMTRACE_FS" -n -p 0 --http 0 --allow 10.0.0.0/8 "$root"
HP=$(fs_http_port "$MT_TMP/fs2.log") || { echo "$HP"; exit 1; }
code=$(curl -sS -o "$MT_TMP/body" -w '%{http_code}' "http://127.0.0.1:$HP/buildid/$id/debuginfo" 2>/dev/null)
[ "$code" = 000 ] || fail "a client outside --allow got HTTP $code"
grep -q "refused: not in --allow" "$MT_TMP/fs2.log" || fail "no --allow refusal in the log"
echo "  outside --allow: hung up on"
stop_fs || fail "memtrace-fs did not stop cleanly"

echo "--no-http, --key:"
start_fs "$MT_TMP/fs3.log" "$MEMTRACE_FS" -n -p 0 --no-http "$root"
grep -q "debuginfod endpoint" "$MT_TMP/fs3.log" && fail "--no-http still serves HTTP"
stop_fs
head -c 32 /dev/urandom >"$MT_TMP/key"
start_fs "$MT_TMP/fs4.log" "$MEMTRACE_FS" -n -p 0 --http 0 --key "$MT_TMP/key" "$root"
grep -q "debuginfod endpoint: http" "$MT_TMP/fs4.log" && fail "--key still serves unkeyed HTTP"
grep -q "\-\-http ignored" "$MT_TMP/fs4.log" || fail "--key: no word on --http"
stop_fs
echo "fs_debuginfod_hostile: ok"
