#!/usr/bin/env bash
# memtrace-fs under valgrind (memcheck, --leak-check=full, every error and
# every definite or indirect leak fails it) serves a real trace over
# loopback: memtrace traces a program whose local copy is stripped of all
# symbols while memtrace-fs serves the unstripped file (same build-id), so
# the function names in the report can only have come over the wire; then
# memtrace-fs is stopped and valgrind must report no error.
set -u
. "$(dirname "$0")/fs_common.bash"
need_tool valgrind valgrind
trap 'stop_fs >/dev/null 2>&1' EXIT
# valgrind cannot run an ASan build: use the release one.
FS_BIN=$MT_ROOT/${MT_RELEASE_BUILD:-build}/memtrace-fs
[ -x "$FS_BIN" ] || FS_BIN=$MEMTRACE_FS

work=$MT_TMP/app
root=$MT_TMP/sysroot
mkdir -p "$work" "$root$work"
cat >"$work/leaky.c" <<'C'
#include <stdlib.h>
#include <string.h>
char *__attribute__((noinline)) rely_served_name(int n) { char *p = malloc(n); memset(p, 1, n); return p; }
int main(void) { for (int i = 0; i < 5; i++) rely_served_name(100 + i); return 0; }
C
gcc $MT_TARGET_CFLAGS -g -O0 -Wl,--build-id -o "$root$work/leaky" "$work/leaky.c" || fail "gcc"
strip --strip-all -o "$work/leaky" "$root$work/leaky"
nm "$work/leaky" 2>&1 | grep -q rely_served_name && fail "local copy still has symbols"
[ "$(readelf_build_id "$work/leaky")" = "$(readelf_build_id "$root$work/leaky")" ] || fail "build-ids differ"

start_fs "$MT_TMP/fs.log" valgrind -q --error-exitcode=1 --leak-check=full \
    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
    "$FS_BIN" -n -p 0 "$root"
echo "memtrace-fs under valgrind on port $FS_PORT"
"$MEMTRACE" -q -c "127.0.0.1:$FS_PORT" -o "$MT_TMP/report.txt" "$work/leaky" || fail "memtrace failed"
grep -q rely_served_name "$MT_TMP/report.txt" || { cat "$MT_TMP/report.txt"; fail "no name from the served file in the report"; }
# Same bytes leaked as valgrind counts for the program itself.
vg=$(valgrind --leak-check=full "$work/leaky" 2>&1 | sed -n 's/.*definitely lost: \([0-9,]*\) bytes in \([0-9,]*\) blocks.*/\1 \2/p' | tr -d ,)
echo "valgrind on the program: definitely lost $vg (bytes blocks)"
grep -q "$(echo "$vg" | awk '{print $1}')" "$MT_TMP/report.txt" || fail "report does not show the $vg leaked"
stop_fs
rc=$?
cat "$MT_TMP/fs.log"
[ $rc -eq 0 ] || fail "valgrind found errors or leaks in memtrace-fs (exit $rc)"
echo "memtrace-fs is valgrind-clean after serving a trace"
