#!/usr/bin/env bash
# Statically linked programs (gcc -static, glibc): the allocation functions
# are found through .symtab.  valgrind cannot replace malloc in a static
# binary, so the oracle is the program's own known counts (intercept_counts
# prints them; they are checked against valgrind on its dynamic build by
# intercept_musl).  Static glibc allocates a few blocks before main: the
# program stops itself first thing in main, the test sends `clear` through
# the console, and the final report must then equal the program's figures
# (mmap'ed bytes included: the executable is its own C library, and only
# mappings made inside malloc are the library's).
# A stripped static binary: one clear line saying the allocation functions
# cannot be found, and the program runs to its normal end.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
gcc $MT_TARGET_CFLAGS -std=gnu11 -static -g -O0 -o counts_static "$MT_ROOT/selftest/programs/intercept_counts.c" 2>cc.err ||
    skip "cannot link statically (no libc.a?): $(tail -n 1 cc.err)"
readelf -lW counts_static | grep -q 'INTERP' && fail "counts_static is not static"
readelf -SW counts_static | grep -q '\.symtab' || fail "counts_static has no .symtab"

console_open mt.out -C -j -o "$MT_TMP/static.json" ./counts_static stop
cleanup() {
    exec 3>&- 2>/dev/null
    kill "$CONSOLE_PID" 2>/dev/null
}
trap cleanup EXIT
pid=
end=$((SECONDS + 10))
while [ -z "$pid" ]; do
    pid=$(program_pid "$CONSOLE_PID" counts_static)
    [ $SECONDS -lt $end ] || fail "counts_static did not start: $(cat mt.out.err)"
    [ -n "$pid" ] || sleep 0.05
done
until [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = t ] ||
      [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = T ]; do
    [ $SECONDS -lt $end ] || fail "counts_static did not stop itself"
    sleep 0.05
done
console_cmd clear
kill -CONT "$pid"
exec 3>&-
wait "$CONSOLE_PID" || fail "memtrace failed: $(cat mt.out.err)"
grep -q 'counts_static: [0-9]* functions intercepted' mt.out.err ||
    fail "no functions intercepted in the static binary: $(cat mt.out.err)"
want=$(sed -n 's/^expect: //p' mt.out)
got=$(python3 - static.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
h = d['heap']
print(h['allocs'], h['frees'], h['bytes_allocated'], h['in_use_bytes'], h['in_use_blocks'],
      d['mapped']['bytes'])
PY
)
echo "static: expected $want | memtrace $got"
[ -n "$want" ] && [ "$want" = "$got" ] || fail "static figures differ (allocs frees bytes in_use_bytes in_use_blocks mapped)"

cp counts_static counts_stripped && strip counts_stripped || fail "strip failed"
"$MEMTRACE" -o /dev/null ./counts_stripped > stripped.out 2> stripped.err; rc=$?
cat stripped.err
[ $rc = 0 ] || fail "memtrace exit $rc on the stripped binary"
grep -q '^expect: ' stripped.out || fail "the stripped program did not run to its end"
[ "$(grep -c 'cannot be found' stripped.err)" = 1 ] || fail "no single clear message for the stripped binary"
[ "$(wc -l < stripped.err)" = 1 ] || fail "more than one line of messages for the stripped binary"
exit 0
