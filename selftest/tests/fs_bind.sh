#!/usr/bin/env bash
# memtrace-fs --bind ADDR (repeatable) on loopback: it listens on the given
# addresses only (ss, the oracle, lists its sockets; a client of another
# local address is refused by the kernel), serves on each, and warns at
# start when neither --allow nor --key is set (not when one is).
set -u
. "$(dirname "$0")/fs_common.bash"
trap 'stop_fs >/dev/null 2>&1' EXIT
root=$MT_TMP/sysroot
make_sysroot "$root"
try() { # HOST: one read of /usr/bin/prog
    echo "path /usr/bin/prog $MT_TMP/got" | "$TEST_WIRE" client -c "$1:$FS_PORT" 3000 2>&1
}

start_fs "$MT_TMP/fs.log" "$MEMTRACE_FS" -n -p 0 --bind 127.0.0.2 --bind ::1 "$root"
sockets=$(ss -Hltn "sport = :$FS_PORT" | awk '{print $4}' | sort | tr '\n' ' ')
echo "listening on: $sockets"
[ "$sockets" = "127.0.0.2:$FS_PORT [::1]:$FS_PORT " ] || fail "not listening on exactly the --bind addresses"
for h in 127.0.0.2 '[::1]'; do
    try "$h" | grep -q '^ok' || fail "not served on $h"
    cmp -s "$MT_TMP/got" "$root/usr/bin/prog" || fail "$h: bytes differ"
done
res=$(try 127.0.0.1)
case $res in *ok*) fail "served on 127.0.0.1, which is not bound";; esac
echo "127.0.0.1: $res"
grep -q "warning: no --allow and no --key: anyone who can reach the --bind addresses" "$MT_TMP/fs.log" ||
    fail "no warning without --allow and --key"
stop_fs
start_fs "$MT_TMP/fs2.log" "$MEMTRACE_FS" -n -p 0 --bind 127.0.0.1 --allow 127.0.0.0/8 "$root"
grep -q "no --allow and no --key" "$MT_TMP/fs2.log" && fail "warned although --allow is set"
stop_fs
timeout 5 "$MEMTRACE_FS" -n -p 0 --bind 192.0.2.77 "$root" >"$MT_TMP/bad.log" 2>&1 &&
    fail "started on an address this host does not have"
echo "a foreign address: $(cat "$MT_TMP/bad.log" | tail -n 1)"
grep -q "error: listening on 192.0.2.77" "$MT_TMP/bad.log" || fail "no one-line error for a foreign address"
echo "fs_bind: ok"
