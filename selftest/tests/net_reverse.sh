#!/usr/bin/env bash
# Reversed roles across two network namespaces: the target listens
# (remote_provider_listen, as memtrace -l does), memtrace-fs -c in the host
# namespace connects in; files read through it compare equal (cmp).  When the
# connection drops, memtrace-fs comes back and the target reconnects.
set -u
. "$(dirname "$0")/net_common.bash"
setup_netns
root=$MT_TMP/sysroot
make_sysroot "$root"
id=$(readelf_build_id "$MT_TMP/prog.full")
crc=$(debuglink_crc "$root/usr/bin/prog")
out=$MT_TMP/out
mkdir -p "$out"

mkfifo "$MT_TMP/cmds"
"${IN_TARGET[@]}" "$TEST_WIRE" client -l "$ADDR_T:4002" 10000 <"$MT_TMP/cmds" >"$MT_TMP/client.out" 2>"$MT_TMP/client.err" &
CLIENT=$!
PIDS+=($CLIENT)
exec 3>"$MT_TMP/cmds"
wait_until 10 "the target to listen on port 4002" tcp_listening 4002 "$NS_T"
"${IN_HOST[@]}" "$MEMTRACE_FS" -c "$ADDR_T:4002" "$root" >"$MT_TMP/fs.log" 2>&1 3>&- &
FS=$!
PIDS+=($FS)

wait_lines() { # N: until client.out has N lines
    for _ in $(seq 1 100); do
        [ "$(wc -l <"$MT_TMP/client.out")" -ge "$1" ] && return 0
        kill -0 "$CLIENT" 2>/dev/null || break
        sleep 0.1
    done
    cat "$MT_TMP/client.out" "$MT_TMP/client.err" "$MT_TMP/fs.log"; fail "client gave no line $1"
}
wait_lines 1
grep -q '^connected' "$MT_TMP/client.out" || fail "listen: $(cat "$MT_TMP/client.out")"
echo "path /usr/bin/prog $out/prog" >&3
echo "buildid $id $out/byid" >&3
echo "debuglink /usr/bin/prog prog.debug $crc $out/bylink" >&3
echo "hold /lib/libbig.so" >&3
wait_lines 5
# Drop the connection: memtrace-fs goes away and a new one connects in.
kill -TERM "$FS"; wait "$FS" 2>/dev/null
echo "readheld $out/after-drop" >&3
wait_lines 6
"${IN_HOST[@]}" "$MEMTRACE_FS" -c "$ADDR_T:4002" "$root" >"$MT_TMP/fs2.log" 2>&1 3>&- &
FS=$!
PIDS+=($FS)
# memtrace-fs -c retries every second: until its new connection is in, and
# the provider's back-off after the failed read is over.
wait_until 10 "memtrace-fs to connect in again" tcp_connected 4002 "$NS_T"
readheld_until_ok 6 "$out/reconnected"
ok=$OK_LINE
echo "stats" >&3
wait_lines $((ok + 1))
exec 3>&-
wait "$CLIENT"
cat "$MT_TMP/client.out" "$MT_TMP/client.err"
line() { sed -n "$1p" "$MT_TMP/client.out"; }
[[ $(line 2) == ok* ]] && cmp "$out/prog" "$root/usr/bin/prog" || fail "by path"
[[ $(line 3) == ok* ]] && cmp "$out/byid" "$root/usr/bin/.debug/prog.debug" || fail "by build-id"
[[ $(line 4) == ok* ]] && cmp "$out/bylink" "$root/usr/bin/.debug/prog.debug" || fail "by debuglink"
[[ $(line 6) == error* ]] || fail "read after the drop did not fail: $(line 6)"
[[ $(line $ok) == ok* ]] && cmp "$out/reconnected" "$root/lib/libbig.so" || fail "no reconnect: $(line $ok)"
[[ $(line $((ok + 1))) == *reconnects=1* ]] || fail "stats: $(line $((ok + 1)))"
echo "net_reverse: ok"
