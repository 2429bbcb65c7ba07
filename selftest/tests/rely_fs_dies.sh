#!/usr/bin/env bash
# memtrace-fs dies (SIGKILL) while memtrace traces with -c: memtrace says so
# in one warning, goes on with local files, does not hang, and its figures
# still equal valgrind's HEAP SUMMARY for the program.
set -u
. "$(dirname "$0")/fs_common.bash"
. "$MT_ROOT/selftest/tests/lib.bash"
trap 'stop_fs >/dev/null 2>&1' EXIT
work=$MT_TMP/app
root=$MT_TMP/sysroot
mkdir -p "$work" "$root$work"
cat >"$work/slow.c" <<'C'
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
char *__attribute__((noinline)) grab(int n) { char *p = malloc(n); memset(p, 1, n); return p; }
int main(void) { for (int i = 0; i < 5; i++) { free(grab(50)); grab(100 + i); usleep(300000); } return 0; }
C
gcc $MT_TARGET_CFLAGS -g -O0 -Wl,--build-id -o "$root$work/slow" "$work/slow.c" || fail "gcc"
cp "$root$work/slow" "$work/slow"
start_fs "$MT_TMP/fs.log" "$MEMTRACE_FS" -n -p 0 "$root"
(sleep 0.6; kill -KILL "$FS_PID") &
start=$SECONDS
mt=$(memtrace_summary -c "127.0.0.1:$FS_PORT" "$work/slow" 2>"$MT_TMP/err.txt") || fail "memtrace failed: $(cat "$MT_TMP/err.txt")"
took=$((SECONDS - start))
wait
FS_PID=
cat "$MT_TMP/err.txt"
vg=$(valgrind_summary "$work/slow") || fail "valgrind failed"
echo "valgrind: $vg | memtrace: $mt | ${took} s"
[ "$vg" = "$mt" ] || fail "figures differ after memtrace-fs died"
grep -q "memtrace-fs .*going on without it" "$MT_TMP/err.txt" || fail "no clear warning that memtrace-fs is gone"
[ "$took" -lt 20 ] || fail "memtrace took ${took} s: it waited on the dead server"
