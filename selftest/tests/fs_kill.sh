#!/usr/bin/env bash
# A server that stops answering (SIGSTOP) or dies (SIGKILL) mid-session: the
# target's reads fail within their timeout instead of hanging, and after a new
# memtrace-fs starts on the same port the provider reconnects, reopens the
# file and reads it whole again (cmp); a file that changed meanwhile is
# refused.  Loopback only, memtrace-fs -n.
set -u
. "$(dirname "$0")/fs_common.bash"
trap 'stop_fs >/dev/null 2>&1; [ -n "${CLIENT:-}" ] && kill "$CLIENT" 2>/dev/null' EXIT
root=$MT_TMP/sysroot
make_sysroot "$root"
out=$MT_TMP/out
mkdir -p "$out"

start_fs "$MT_TMP/fs.log" "$MEMTRACE_FS" -n -p 0 "$root"
port=$FS_PORT

mkfifo "$MT_TMP/cmds"
"$TEST_WIRE" client -c "127.0.0.1:$port" 2000 <"$MT_TMP/cmds" >"$MT_TMP/client.out" 2>"$MT_TMP/client.err" &
CLIENT=$!
exec 3>"$MT_TMP/cmds"
wait_lines() {
    for _ in $(seq 1 150); do
        [ "$(wc -l <"$MT_TMP/client.out")" -ge "$1" ] && return 0
        kill -0 "$CLIENT" 2>/dev/null || break
        sleep 0.1
    done
    cat "$MT_TMP/client.out" "$MT_TMP/client.err"; fail "client gave no line $1 (hung?)"
}
line() { sed -n "$1p" "$MT_TMP/client.out"; }

echo "hold /lib/random.bin" >&3
echo "readheld $out/r1" >&3
wait_lines 3
kill -STOP "$FS_PID"
start=$SECONDS
echo "readheld $out/r2" >&3
wait_lines 4
took=$((SECONDS - start))
echo "read from a stopped server: $(line 4) after ${took}s"
[[ $(line 4) == error* ]] || fail "read from a stopped server did not fail"
[ "$took" -le 6 ] || fail "read from a stopped server took ${took}s"

kill -KILL "$FS_PID"; wait "$FS_PID" 2>/dev/null; FS_PID=
echo "readheld $out/r3" >&3
wait_lines 5
[[ $(line 5) == error* ]] || fail "read with no server did not fail"
start_fs "$MT_TMP/fs2.log" "$MEMTRACE_FS" -n -p "$port" "$root"
readheld_until_ok 5 "$out/r4"
ok=$OK_LINE
echo "stats" >&3
wait_lines $((ok + 1))
# The file changes while the server is away: the reopened file is refused,
# nothing of it is mixed with what was read before.
stop_fs
mv "$root/lib/random.bin" "$MT_TMP/random.old"
head -c 2000000 /dev/urandom >"$root/lib/random.bin"
start_fs "$MT_TMP/fs3.log" "$MEMTRACE_FS" -n -p "$port" "$root"
echo "readheld $out/r5" >&3
wait_lines $((ok + 2))
exec 3>&-
wait "$CLIENT"; CLIENT=
cat "$MT_TMP/client.out" "$MT_TMP/client.err"
[[ $(line 3) == ok* ]] && cmp "$out/r1" "$MT_TMP/random.old" || fail "first read"
[[ $(line $ok) == ok* ]] && cmp "$out/r4" "$MT_TMP/random.old" || fail "no read after reconnect"
[[ $(line $((ok + 2))) == *"Stale file handle"* ]] || fail "a changed file was not refused: $(line $((ok + 2)))"
[[ $(line $((ok + 1))) == *reconnects=1* ]] || fail "stats: $(line $((ok + 1)))"
# The client warned once per outage, not once per read.
[ "$(grep -c warning "$MT_TMP/client.err")" -le 2 ] || fail "too many warnings"

stop_fs || fail "memtrace-fs did not exit cleanly"
cat "$MT_TMP/fs.log" "$MT_TMP/fs2.log" "$MT_TMP/fs3.log"
echo "fs_kill: ok"
