#!/usr/bin/env bash
# --key on the board binaries of `make cross` (aarch64, arm), under
# qemu-user against the native memtrace-fs --key on loopback: the right key
# is served, a wrong one is refused in one line on both sides, and the
# binary still needs nothing but libc and zlib (readelf -d: OpenSSL is in
# it, statically).  Skipped when the cross build has no TLS (no libssl-dev
# for the target could be fetched).
set -u
. "$(dirname "$0")/fs_common.bash"
trap 'stop_fs >/dev/null 2>&1' EXIT
need_tool readelf binutils
need_tool qemu-aarch64 qemu-user
need_tool qemu-arm qemu-user
root=$MT_TMP/root
mkdir -p "$root/bin" && cp /bin/true "$root/bin/"
head -c 32 /dev/urandom >"$MT_TMP/k1"; head -c 32 /dev/urandom >"$MT_TMP/k2"
start_fs "$MT_TMP/fs.log" "$MEMTRACE_FS" -n -p 0 --key "$MT_TMP/k1" "$root"
tested=0
for a in aarch64:aarch64-linux-gnu:qemu-aarch64 arm:arm-linux-gnueabihf:qemu-arm; do
    IFS=: read -r dir triple qemu <<<"$a"
    bin=$MT_ROOT/build-$dir/memtrace
    [ -x "$bin" ] || continue
    run() { timeout 120 "$qemu" -L "/usr/$triple" "$bin" "$@"; }
    if run --key /dev/null -c 127.0.0.1:1 /bin/true 2>&1 | grep -q "no TLS"; then
        echo "$dir: built without TLS"; continue
    fi
    needed=$(readelf -d "$bin" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
    echo "$dir: needs $needed"
    case $needed in *ssl*|*crypto*) fail "$dir: OpenSSL is not linked in";; esac
    n0=$(grep -c "connected (memtrace on" "$MT_TMP/fs.log")
    run --key "$MT_TMP/k1" -c "127.0.0.1:$FS_PORT" --addr2line /bin/true 0x10 >"$MT_TMP/$dir.ok" 2>&1 ||
        { cat "$MT_TMP/$dir.ok"; fail "$dir: the right key failed"; }
    [ "$(grep -c "connected (memtrace on" "$MT_TMP/fs.log")" -gt "$n0" ] || fail "$dir: not served"
    run --key "$MT_TMP/k2" -c "127.0.0.1:$FS_PORT" --addr2line /bin/true 0x10 >"$MT_TMP/$dir.bad" 2>&1 &&
        fail "$dir: a wrong key was accepted"
    echo "$dir, wrong key: $(tail -n 1 "$MT_TMP/$dir.bad")"
    grep -q "error: key check failed" "$MT_TMP/$dir.bad" || fail "$dir: no one-line error"
    tested=$((tested + 1))
done
[ $tested -gt 0 ] || skip "no cross build with TLS (make cross)"
sleep 0.3
[ "$(grep -c "refused: key check failed" "$MT_TMP/fs.log")" = $tested ] || fail "memtrace-fs did not log each refusal"
echo "arch_cross_key: ok"
