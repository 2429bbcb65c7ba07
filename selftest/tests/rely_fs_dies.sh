#!/usr/bin/env bash
# memtrace-fs dies (SIGKILL) while memtrace traces with -c (the program has
# made its first round of allocations under memtrace): memtrace says so
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
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
char *__attribute__((noinline)) grab(int n) { char *p = malloc(n); memset(p, 1, n); return p; }
/* argv[1]: a file made after the first round (open allocates nothing). */
int main(int argc, char **argv) {
    for (int i = 0; i < 5; i++) {
        free(grab(50)); grab(100 + i);
        if (i == 0 && argc > 1) close(open(argv[1], O_CREAT | O_WRONLY, 0644));
        usleep(300000);
    }
    return 0;
}
C
gcc $MT_TARGET_CFLAGS -g -O0 -Wl,--build-id -o "$root$work/slow" "$work/slow.c" || fail "gcc"
cp "$root$work/slow" "$work/slow"
start_fs "$MT_TMP/fs.log" "$MEMTRACE_FS" -n -p 0 "$root"
(wait_until 20 "the program's first round under memtrace" test -e "$MT_TMP/round1"
 kill -KILL "$FS_PID") &
killer=$!
start=$SECONDS
mt=$(memtrace_summary -c "127.0.0.1:$FS_PORT" "$work/slow" "$MT_TMP/round1" 2>"$MT_TMP/err.txt") || fail "memtrace failed: $(cat "$MT_TMP/err.txt")"
took=$((SECONDS - start))
wait "$killer" || fail "memtrace-fs was not killed mid-trace"
FS_PID=
cat "$MT_TMP/err.txt"
start=$SECONDS
vg=$(valgrind_summary "$work/slow" "$MT_TMP/round1.vg") || fail "valgrind failed"
vg_took=$((SECONDS - start))
echo "valgrind: $vg in ${vg_took} s | memtrace: $mt in ${took} s"
[ "$vg" = "$mt" ] || fail "figures differ after memtrace-fs died"
grep -q "memtrace-fs .*going on without it" "$MT_TMP/err.txt" || fail "no clear warning that memtrace-fs is gone"
# A hang detector measured against valgrind on the same program, under the
# same load: a memtrace that waited on the dead server (a connect or read
# timeout of tens of seconds) takes far longer; one that went on does not.
[ "$took" -le $((3 * vg_took + 10)) ] ||
    fail "memtrace took ${took} s against valgrind's ${vg_took} s: it waited on the dead server"
