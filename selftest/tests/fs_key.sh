#!/usr/bin/env bash
# --key FILE on memtrace-fs and memtrace (issue 21): TLS 1.3 with a
# pre-shared key.  The right key traces demo with names from memtrace-fs;
# the bytes on the wire hold none of the plain protocol (a recording proxy
# looks for the "MTFS" magic and for a function name).  Refused, each with
# one line on both sides: a wrong key, no key on the client, no key on the
# server, a replay of a recorded session, and a downgrade to TLS 1.2
# (openssl s_client).  openssl s_client with the same PSK (SHA-256 of the
# file) also talks to memtrace-fs: the oracle that this is plain TLS 1.3
# PSK, not something of our own.  Reversed roles (-l, memtrace-fs -c) too.
# Loopback only, memtrace-fs -n.
set -u
. "$(dirname "$0")/fs_common.bash"
PROXY=
trap 'stop_fs >/dev/null 2>&1; [ -n "$PROXY" ] && kill $PROXY 2>/dev/null; [ -n "${FSC:-}" ] && kill $FSC 2>/dev/null' EXIT
"$MEMTRACE" --key /dev/null -c 127.0.0.1:1 /bin/true 2>&1 | grep -q "this build has no TLS" &&
    skip "this build has no TLS (--key)"
here=$(dirname "$0")
demo=$MT_PROGS/demo
root=$MT_TMP/root
mkdir -p "$root$(dirname "$demo")" && cp "$demo" "$root$demo"
head -c 32 /dev/urandom >"$MT_TMP/k1"; head -c 32 /dev/urandom >"$MT_TMP/k2"
chmod 600 "$MT_TMP/k1" "$MT_TMP/k2"
demo_rc=0; "$demo" >/dev/null 2>&1 || demo_rc=$?

start_proxy() { # PREFIX TARGET_PORT: sets PROXY and PROXY_PORT
    rm -f "$MT_TMP/$1".*
    python3 "$here/tcp_proxy.py" "$MT_TMP/$1.port" "$2" --record "$MT_TMP/$1" &
    PROXY=$!
    for _ in $(seq 1 50); do [ -s "$MT_TMP/$1.port" ] && break; sleep 0.1; done
    PROXY_PORT=$(cat "$MT_TMP/$1.port")
}
stop_proxy() { kill $PROXY 2>/dev/null; wait $PROXY 2>/dev/null; PROXY=; }
last_line() { grep -v "^$" "$1" | tail -n 1; }
refusals() { grep -c "refused" "$MT_TMP/fs.log"; }

# 1. The right key, through a recording proxy.
start_fs "$MT_TMP/fs.log" "$MEMTRACE_FS" -n -p 0 --key "$MT_TMP/k1" "$root"
grep -q "no --allow and no --key" "$MT_TMP/fs.log" && fail "warned although a key is set"
start_proxy keyed "$FS_PORT"
t0=$(date +%s%N)
"$MEMTRACE" --key "$MT_TMP/k1" -c "127.0.0.1:$PROXY_PORT" "$demo" >"$MT_TMP/r1" 2>"$MT_TMP/e1"
rc=$?; t1=$(date +%s%N)
stop_proxy
[ $rc = $demo_rc ] || { cat "$MT_TMP/e1"; fail "right key: memtrace exited $rc"; }
grep -q "cache_insert() in " "$MT_TMP/r1" || fail "right key: no names in the report"
grep -q "connected (memtrace on" "$MT_TMP/fs.log" || fail "right key: memtrace-fs did not serve"
for w in c2s s2c; do
    grep -qa "MTFS" "$MT_TMP/keyed.$w" && fail "the protocol's magic is readable on the wire ($w)"
done
grep -qa "cache_insert" "$MT_TMP/keyed.s2c" && fail "file contents readable on the wire"
read -r kc2s ks2c <"$MT_TMP/keyed.count"
echo "with --key: $((kc2s + ks2c)) bytes on the wire ($kc2s to, $ks2c from memtrace-fs), $(((t1 - t0) / 1000000)) ms"

# 2. A wrong key.
n0=$(refusals)
"$MEMTRACE" --key "$MT_TMP/k2" -c "127.0.0.1:$FS_PORT" "$demo" >/dev/null 2>"$MT_TMP/e2" && fail "wrong key accepted"
echo "wrong key: $(last_line "$MT_TMP/e2")"
[ "$(grep -c "error" "$MT_TMP/e2")" = 1 ] && grep -q "key check failed" "$MT_TMP/e2" || fail "wrong key: no one-line error"
sleep 0.3
[ "$(refusals)" = $((n0 + 1)) ] || fail "wrong key: memtrace-fs did not log one refusal"
grep "refused" "$MT_TMP/fs.log" | tail -n 1

# 3. No key on the client.
"$MEMTRACE" -c "127.0.0.1:$FS_PORT" "$demo" >/dev/null 2>"$MT_TMP/e3" && fail "a client without a key was served"
echo "no key: $(last_line "$MT_TMP/e3")"
grep -q "refused by the peer: this memtrace-fs requires a key" "$MT_TMP/e3" || fail "no key: no one-line error"
sleep 0.3
grep "refused" "$MT_TMP/fs.log" | tail -n 1 | grep -q "the peer has no key" || fail "no key: no refusal logged"

# 4. A replay of the session recorded in 1, sent again byte for byte.
n0=$(refusals)
PYTHONPATH=$here python3 - "$FS_PORT" "$MT_TMP/keyed.c2s" <<'PY' || fail "replay"
import sys, socket
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
try:
    s.sendall(open(sys.argv[2], "rb").read())
    got = b""
    while True:
        c = s.recv(65536)
        if not c: break
        got += c
except OSError:
    pass
print("replay: the server sent %d bytes and hung up" % len(got))
PY
sleep 0.3
[ "$(refusals)" -gt "$n0" ] || fail "replay: no refusal logged"
grep "refused" "$MT_TMP/fs.log" | tail -n 1
[ "$(grep -c "connected (memtrace on" "$MT_TMP/fs.log")" = 1 ] || fail "the replayed session was served"

# 5. A downgrade to TLS 1.2, and the oracle: TLS 1.3 PSK by openssl s_client.
psk=$(sha256sum "$MT_TMP/k1" | cut -c1-64)
n0=$(refusals)
echo | timeout 10 openssl s_client -tls1_2 -psk "$psk" -psk_identity memtrace-fs \
    -connect "127.0.0.1:$FS_PORT" >"$MT_TMP/s12" 2>&1
grep -q "alert protocol version" "$MT_TMP/s12" || { cat "$MT_TMP/s12"; fail "TLS 1.2 was not refused"; }
sleep 0.3
[ "$(refusals)" -gt "$n0" ] || fail "downgrade: no refusal logged"
echo "downgrade to TLS 1.2: $(grep "refused" "$MT_TMP/fs.log" | tail -n 1)"
python3 -c 'import struct,sys; n=b"s_client"; sys.stdout.buffer.write(struct.pack(">IBBHIHH", 4+2+2+len(n), 1, 0, 0, 0x4d544653, 1, len(n)) + n)' |
    timeout 10 openssl s_client -tls1_3 -quiet -psk "$psk" -psk_identity memtrace-fs \
    -connect "127.0.0.1:$FS_PORT" >"$MT_TMP/s13" 2>"$MT_TMP/s13.err"
grep -qa "MTFS" "$MT_TMP/s13" || { cat "$MT_TMP/s13.err"; fail "openssl s_client (TLS 1.3 PSK) got no hello"; }
echo "openssl s_client, TLS 1.3 with the PSK: memtrace-fs answered its hello"
stop_fs || fail "memtrace-fs did not stop cleanly"

# 6. No key on the server, a key on the client; the cost without a key.
start_fs "$MT_TMP/fs.log" "$MEMTRACE_FS" -n -p 0 "$root"
grep -q "warning: no --allow and no --key" "$MT_TMP/fs.log" || fail "no warning without --allow and --key"
"$MEMTRACE" --key "$MT_TMP/k1" -c "127.0.0.1:$FS_PORT" "$demo" >/dev/null 2>"$MT_TMP/e6" && fail "served by a server without a key"
echo "server without a key: $(last_line "$MT_TMP/e6")"
grep -q "key check failed" "$MT_TMP/e6" || fail "server without key: no one-line error"
sleep 0.3
grep -q "the peer uses a key (--key) and this side has none" "$MT_TMP/fs.log" || fail "server without key: no line"
start_proxy plain "$FS_PORT"
t0=$(date +%s%N)
"$MEMTRACE" -c "127.0.0.1:$PROXY_PORT" "$demo" >"$MT_TMP/r6" 2>/dev/null
t1=$(date +%s%N)
stop_proxy
grep -qa "MTFS" "$MT_TMP/plain.s2c" || fail "the recording proxy sees nothing (the encryption check proves nothing)"
read -r pc2s ps2c <"$MT_TMP/plain.count"
echo "without a key: $((pc2s + ps2c)) bytes on the wire, $(((t1 - t0) / 1000000)) ms"
stop_fs

# 7. Reversed roles: memtrace -l, memtrace-fs -c, both with the key; then a wrong one.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$MEMTRACE_FS" -n --key "$MT_TMP/k1" -c "127.0.0.1:$port" "$root" >"$MT_TMP/fsc.log" 2>&1 &
FSC=$!
"$MEMTRACE" --key "$MT_TMP/k1" -l "127.0.0.1:$port" "$demo" >"$MT_TMP/r7" 2>"$MT_TMP/e7"
rc=$?
kill $FSC; wait $FSC 2>/dev/null; FSC=
[ $rc = $demo_rc ] && grep -q "cache_insert() in " "$MT_TMP/r7" || { cat "$MT_TMP/e7"; fail "reversed roles with the key"; }
"$MEMTRACE_FS" -n --key "$MT_TMP/k2" -c "127.0.0.1:$port" "$root" >"$MT_TMP/fsc2.log" 2>&1 &
FSC=$!
"$MEMTRACE" --key "$MT_TMP/k1" -l "127.0.0.1:$port" "$demo" >/dev/null 2>"$MT_TMP/e8" && fail "reversed roles: a wrong key was accepted"
kill $FSC; wait $FSC 2>/dev/null; FSC=
echo "reversed, wrong key: $(last_line "$MT_TMP/e8") | $(grep "key check" "$MT_TMP/fsc2.log" | head -n 1)"
grep -q "key check failed" "$MT_TMP/e8" && grep -q "refused: key check failed" "$MT_TMP/fsc2.log" ||
    fail "reversed roles, wrong key: no one-line errors"

# 8. OpenSSL is loaded only for --key (shared/tls_lib.c): neither program
# needs it at start (binutils' readelf), and where libssl.so.3 or
# libcrypto.so.3 cannot be loaded (/dev/null mounted over every copy
# ld.so's cache lists, in a mount namespace of our own) --key fails with
# one line naming the library, and the programs exit non-zero.
for p in "$MEMTRACE" "$MEMTRACE_FS"; do
    readelf -d "$p" | grep -E "NEEDED.*lib(ssl|crypto)\." && fail "$p links OpenSSL at start"
done
for lib in libssl.so.3 libcrypto.so.3; do
    files=$(ldconfig -p | awk -v l="$lib" '$1 == l {print $NF}')
    [ -n "$files" ] || fail "ldconfig -p lists no $lib"
    # shellcheck disable=SC2016
    unshare -m --propagation private bash -c 'for f in $1; do mount --bind /dev/null "$f" || exit 99; done
        timeout 20 "$2" --key "$4" -c 127.0.0.1:1 /bin/true 2>"$5.t"; echo "memtrace rc=$?" >"$5.rc"
        timeout 20 "$3" -n -p 0 --key "$4" /tmp 2>"$5.fs"; echo "memtrace-fs rc=$?" >>"$5.rc"' \
        _ "$files" "$MEMTRACE" "$MEMTRACE_FS" "$MT_TMP/k1" "$MT_TMP/nolib"
    [ $? = 99 ] && fail "cannot mount /dev/null over $files"
    # memtrace-fs's other libraries may need it (libcrypto: libdebuginfod,
    # through libcurl and krb5): then ld.so refuses to start it, and only
    # memtrace is checked.
    outs="t fs"
    ldd "$MEMTRACE_FS" | grep -q "^[[:space:]]*$lib " && outs=t
    for out in $outs; do
        echo "without $lib: $(cat "$MT_TMP/nolib.$out")"
        [ "$(wc -l <"$MT_TMP/nolib.$out")" = 1 ] && grep -q "error: --key .*: cannot load OpenSSL ($lib): " "$MT_TMP/nolib.$out" ||
            fail "without $lib: not one line naming it"
    done
    grep -q "rc=0" "$MT_TMP/nolib.rc" && fail "without $lib: exit status 0 ($(tr '\n' ' ' <"$MT_TMP/nolib.rc"))"
done
echo "fs_key: ok"
