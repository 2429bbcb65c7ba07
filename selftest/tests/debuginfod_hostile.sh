#!/usr/bin/env bash
# memtrace --debuginfod against hostile HTTP servers (in a network namespace
# of this test): a header over 8 KiB, a Content-Range other than the one
# asked, a body cut short, a server that sends one byte a second, chunked
# coding, garbage, a whole file bigger than memtrace downloads.  Each time:
# one warning line naming the fault, no hang (the 5 s request deadline), the
# traced program unharmed (its allocations counted, its exit status kept),
# and the report written with the frames it could not name left as
# addresses.
set -u
. "$(dirname "$0")/debuginfod_common.bash"
dinf_netns
d=$MT_TMP/d
make_dprog "$d"
cd "$d"
export MEMTRACE_REPORT_IN_PLACE=1

cat >"$MT_TMP/hostile.py" <<'PY'
import os, socket, sys, threading, time
mode, port_file, debug = sys.argv[1], sys.argv[2], open(sys.argv[3], "rb").read()
total = len(debug)
def answer(c):
    try:
        serve(c)
    except OSError:
        pass  # memtrace hung up: what it should do with most of these
def serve(c):
    c.settimeout(30)
    req = b""
    while b"\r\n\r\n" not in req:
        got = c.recv(4096)
        if not got:
            return
        req += got
    first = min(65536, total)
    if mode == "bighead":
        c.sendall(b"HTTP/1.1 206 Partial Content\r\n" + b"X-Junk: " + b"a" * 9000 + b"\r\n\r\n")
    elif mode == "badrange":
        c.sendall(b"HTTP/1.1 206 Partial Content\r\nContent-Length: 100\r\n"
                  b"Content-Range: bytes 5-104/%d\r\n\r\n" % total + debug[5:105])
    elif mode == "truncated":
        c.sendall(b"HTTP/1.1 206 Partial Content\r\nContent-Length: %d\r\n"
                  b"Content-Range: bytes 0-%d/%d\r\n\r\n" % (first, first - 1, total) + debug[:first // 2])
        c.shutdown(socket.SHUT_WR)
    elif mode == "slow":
        for b in b"HTTP/1.1 206 Partial Content\r\nContent-Length: 10\r\n":
            c.sendall(bytes([b]))
            time.sleep(1)
    elif mode == "chunked":
        c.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n" + b"x" * 16 + b"\r\n0\r\n\r\n")
    elif mode == "garbage":
        c.sendall(b"\x7fELF this is not HTTP at all\r\n\r\n")
    elif mode == "huge":
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n" + debug)
    time.sleep(0.5)
    c.close()
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(port_file + ".tmp", "w").write(str(s.getsockname()[1]))
os.rename(port_file + ".tmp", port_file)
while True:
    c, _ = s.accept()
    threading.Thread(target=answer, args=(c,), daemon=True).start()
PY

check() { # MODE EXPECTED-WORDS
    local mode=$1 want=$2
    rm -f "$MT_TMP/$mode.port"
    "${IN_NS[@]}" python3 "$MT_TMP/hostile.py" "$mode" "$MT_TMP/$mode.port" "$d/debug/dprog.debug" &
    for _ in $(seq 1 50); do [ -s "$MT_TMP/$mode.port" ] && break; sleep 0.1; done
    local t0=$SECONDS rc=0
    timeout 60 "${IN_NS[@]}" env -u DEBUGINFOD_URLS "$MEMTRACE" \
        --debuginfod "http://127.0.0.1:$(cat "$MT_TMP/$mode.port")" ./dprog \
        >"$MT_TMP/$mode.out" 2>"$MT_TMP/$mode.err" || rc=$?
    local took=$((SECONDS - t0))
    [ $rc -eq 0 ] || { cat "$MT_TMP/$mode.err"; fail "$mode: memtrace exited $rc (the program's status is 0)"; }
    [ $took -le 15 ] || fail "$mode: took $took s"
    grep -q "total heap usage: 3 allocs" "$MT_TMP/$mode.out" ||
        fail "$mode: the program's allocations are not all counted: $(cat "$MT_TMP/$mode.out")"
    grep -q 'dprog+0x' "$MT_TMP/$mode.out" || fail "$mode: no unnamed frames in the report"
    local n
    n=$(grep -c "debuginfod" "$MT_TMP/$mode.err")
    [ "$n" -eq 1 ] || fail "$mode: $n debuginfod lines, one expected: $(cat "$MT_TMP/$mode.err")"
    grep "debuginfod" "$MT_TMP/$mode.err" | grep -q "$want" ||
        fail "$mode: the warning does not say '$want': $(grep debuginfod "$MT_TMP/$mode.err")"
    printf '%-10s %2d s: %s\n' "$mode" "$took" "$(grep debuginfod "$MT_TMP/$mode.err" | cut -c1-150)"
}
check bighead "header over 8192 bytes"
check badrange "not the one asked"
check truncated "cut short"
check slow "timed out"
check chunked "chunked"
check garbage "not an HTTP/1.x status line"
check huge "more than the"
echo PASS
