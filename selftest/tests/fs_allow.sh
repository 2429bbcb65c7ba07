#!/usr/bin/env bash
# memtrace-fs --allow CIDR on loopback: clients outside every rule are
# refused before any file is served, clients inside are served (cmp), IPv4
# clients on the dual-stack socket match IPv4 rules, bad rules are refused.
set -u
. "$(dirname "$0")/fs_common.bash"
trap 'stop_fs >/dev/null 2>&1' EXIT
root=$MT_TMP/sysroot
make_sysroot "$root"

try() { # LOG: one read of /usr/bin/prog; prints the client's output
    echo "path /usr/bin/prog $MT_TMP/got" | "$TEST_WIRE" client -c "127.0.0.1:$FS_PORT" 3000 2>&1
}

start_fs "$MT_TMP/fs1.log" "$MEMTRACE_FS" -n -p 0 --allow 10.0.0.0/8 -a fe80::/10 "$root"
res=$(try)
echo "outside: $res"
case $res in ok*|*$'\nok'*) fail "a client outside --allow was served";; esac
stop_fs
grep -q "refused: not in --allow" "$MT_TMP/fs1.log" || fail "no refusal message"

start_fs "$MT_TMP/fs2.log" "$MEMTRACE_FS" -n -p 0 --allow 10.0.0.0/8 --allow 127.0.0.0/8 "$root"
res=$(try)
echo "inside: $res"
echo "$res" | grep -q '^ok' || fail "a client inside --allow was refused"
cmp "$MT_TMP/got" "$root/usr/bin/prog" || fail "bytes differ"
stop_fs

for bad in 10.0.0.0/33 nonsense 1.2.3.4/ ::1/129; do
    if timeout 5 "$MEMTRACE_FS" -n -p 0 --allow "$bad" "$root" >/dev/null 2>&1; then
        fail "--allow $bad accepted"
    fi
done
echo "fs_allow: ok"
