#!/usr/bin/env bash
# memtrace-fs -n on loopback: files by path, build-id and debuglink read by
# range through the target's remote provider compare equal (cmp) with the
# sysroot's files; build-ids match readelf; escapes, loops, NUL bytes and
# garbage frames are refused; the server runs under valgrind.
set -u
. "$(dirname "$0")/fs_common.bash"

trap 'stop_fs >/dev/null 2>&1' EXIT
root=$MT_TMP/sysroot
make_sysroot "$root"

# valgrind runs the release build: an ASan build (make check) cannot run under it.
VG=()
FS_BIN=$MEMTRACE_FS
if [ -z "${MT_NO_VALGRIND:-}" ] && command -v valgrind >/dev/null; then
    VG=(valgrind -q --error-exitcode=97 --leak-check=full --errors-for-leak-kinds=definite)
    if nm "$FS_BIN" 2>/dev/null | grep -q __asan_init; then
        FS_BIN=$MT_ROOT/${MT_RELEASE_BUILD:-build}/memtrace-fs
    fi
fi
start_fs "$MT_TMP/fs.log" "${VG[@]}" "$FS_BIN" -n -p 0 "$root"
echo "memtrace-fs on port $FS_PORT (pid $FS_PID)"

id=$(readelf_build_id "$MT_TMP/prog.full")
crc=$(debuglink_crc "$root/usr/bin/prog")
out=$MT_TMP/out
mkdir -p "$out"
"$TEST_WIRE" client -c "127.0.0.1:$FS_PORT" 10000 >"$MT_TMP/client.out" <<CMDS
path /usr/bin/prog $out/prog
path /lib/libbig.so $out/libbig
path /lib/random.bin $out/random
buildid $id $out/byid
debuglink /usr/bin/prog prog.debug $crc $out/bylink
debuglink /usr/bin/prog prog.debug $(printf %08x $(( 0x$crc ^ 1 ))) $out/badcrc
path /lib/alias-abs.so $out/alias-abs
path /lib/alias-rel.so $out/alias-rel
path /lib/../lib/./libbig.so $out/dotdot-inside
path /../../etc/shadow $out/shadow
path /../secret $out/s1
path /lib/escape-rel $out/s2
path /lib/escape-abs $out/s3
path /lib/escape-dir/secret $out/s4
path /lib/loop1 $out/loop
path /lib/fifo $out/fifo
path /lib $out/dir
path /nonexistent $out/none
stats
buildid $(readelf_build_id "$root/opt/app/prog2") $out/indexed
buildid 0123456789abcdef0123456789abcdef01234567 $out/unknown
CMDS
rc=$?
cat "$MT_TMP/client.out"
[ $rc -eq 0 ] || fail "client exited $rc"
line() { sed -n "$1p" "$MT_TMP/client.out"; }

expect_ok() { # N FILE EXPECTED_BUILD_ID(or -)
    local l; l=$(line "$1")
    case $l in ok*) ;; *) fail "line $1: expected ok, got: $l";; esac
    cmp "$2" "$3" || fail "line $1: bytes differ from $2"
    local size; size=$(stat -c %s "$2")
    [ "$(echo "$l" | awk '{print $2}')" = "$size" ] || fail "line $1: size differs"
    if [ -n "${4:-}" ]; then
        [ "$(echo "$l" | awk '{print $3}')" = "$4" ] || fail "line $1: build-id $l, readelf says $4"
    fi
}
expect_err() {
    local l; l=$(line "$1")
    case $l in error*) ;; *) fail "line $1: expected an error, got: $l";; esac
}

libid=$(readelf_build_id "$root/lib/libbig.so")
expect_ok 2 "$root/usr/bin/prog" "$out/prog" "$id"
expect_ok 3 "$root/lib/libbig.so" "$out/libbig" "$libid"
expect_ok 4 "$root/lib/random.bin" "$out/random" "-"
expect_ok 5 "$root/usr/bin/.debug/prog.debug" "$out/byid" "$id"
expect_ok 6 "$root/usr/bin/.debug/prog.debug" "$out/bylink" "$id"
expect_err 7
expect_ok 8 "$root/lib/libbig.so" "$out/alias-abs" "$libid"
expect_ok 9 "$root/lib/libbig.so" "$out/alias-rel" "$libid"
expect_ok 10 "$root/lib/libbig.so" "$out/dotdot-inside" "$libid"
for n in 11 12 13 14 15 16 17 18 19; do expect_err $n; done
expect_ok 21 "$root/opt/app/prog2" "$out/indexed" "$(readelf_build_id "$root/opt/app/prog2")"
expect_err 22
if grep -rq "top secret" "$out"; then fail "a secret outside the sysroot was served"; fi
# Range reads, not whole files: the random file is not compressible, so
# received bytes ~ file bytes; libbig compresses.
line 20

# Raw frames: a path with a NUL byte, then garbage; the server must refuse
# both and still serve the next client.
python3 - "$FS_PORT" <<'PY' || fail "raw frame checks"
import socket, struct, sys
port = int(sys.argv[1])
def frame(t, payload): return struct.pack(">IBBH", len(payload), t, 0, 0) + payload
def recv_frame(s):
    try:
        return recv_frame_raw(s)
    except ConnectionResetError:
        return None
def recv_frame_raw(s):
    h = b""
    while len(h) < 8:
        c = s.recv(8 - len(h))
        if not c: return None
        h += c
    n, t, f, _ = struct.unpack(">IBBH", h)
    p = b""
    while len(p) < n:
        c = s.recv(n - len(p))
        if not c: break
        p += c
    return t, p
def hello(): return frame(1, struct.pack(">IH", 0x4d544653, 1) + struct.pack(">H", 3) + b"raw")
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(hello()); assert recv_frame(s)[0] == 1
path = b"/lib/libbig.so\x00/../../secret"
s.sendall(frame(2, struct.pack(">H", len(path)) + path))
t, p = recv_frame(s)
assert t == 0x7f, "NUL path not refused: type %x" % t
print("NUL path refused:", p[6:].decode())
s.close()
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(hello()); recv_frame(s)
s.sendall(struct.pack(">IBBH", 0x7fffffff, 5, 0, 0) + b"x" * 100)  # absurd length
r = recv_frame(s)
print("absurd length ->", r and hex(r[0]))
s.close()
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(b"GET / HTTP/1.0\r\n\r\n")
r = recv_frame(s)
print("http ->", r and hex(r[0]))
s.close()
PY
"$TEST_WIRE" client -c "127.0.0.1:$FS_PORT" 5000 >"$MT_TMP/client2.out" <<CMDS
path /usr/bin/prog $out/prog2
CMDS
grep -q '^ok' "$MT_TMP/client2.out" || fail "server does not serve after garbage"

# Compression pays on code: reading libbig front to back costs fewer bytes on
# the wire than the file has; the random file costs its size and the frame
# headers (sent raw, never grown by compression).
wire_cost() { # FILE: bytes received for one sequential read, per the client's counters
    printf 'seq %s %s 65536\nstats\n' "$1" "$out/cost" |
        "$TEST_WIRE" client -c "127.0.0.1:$FS_PORT" 10000 | sed -n 's/.* received=\([0-9]*\).*/\1/p'
}
big=$(stat -c %s "$root/lib/libbig.so")
got=$(wire_cost /lib/libbig.so)
echo "libbig.so: $big bytes, $got on the wire"
[ -n "$got" ] && [ "$got" -lt $((big * 9 / 10)) ] || fail "no compression on the wire"
rnd=$(stat -c %s "$root/lib/random.bin")
got=$(wire_cost /lib/random.bin)
echo "random.bin: $rnd bytes, $got on the wire"
[ "$got" -lt $((rnd + rnd / 100)) ] || fail "incompressible data grew on the wire"
cmp "$out/cost" "$root/lib/random.bin" || fail "sequential read: bytes differ"

# Many targets at once: 8 clients in parallel, each reading two big files.
pids=()
for i in 1 2 3 4 5 6 7 8; do
    printf 'path /lib/libbig.so %s\npath /lib/random.bin %s\n' "$out/par$i.a" "$out/par$i.b" |
        "$TEST_WIRE" client -c "127.0.0.1:$FS_PORT" 20000 >"$MT_TMP/par$i.out" 2>&1 &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "parallel client failed"; done
for i in 1 2 3 4 5 6 7 8; do
    [ "$(grep -c '^ok' "$MT_TMP/par$i.out")" -eq 2 ] || { cat "$MT_TMP/par$i.out"; fail "parallel client $i"; }
    cmp "$out/par$i.a" "$root/lib/libbig.so" && cmp "$out/par$i.b" "$root/lib/random.bin" ||
        fail "parallel client $i: bytes differ"
done
echo "8 parallel clients: ok"

stop_fs
rc=$?
cat "$MT_TMP/fs.log"
for p in /../../etc/shadow /../secret /lib/escape-rel /lib/escape-dir/secret /lib/loop1; do
    grep -qF "refused $p:" "$MT_TMP/fs.log" || fail "server did not log refusing $p"
done
[ $rc -eq 0 ] || fail "memtrace-fs exited $rc (97: valgrind found errors)"
echo "fs_loopback: ok"
