#!/usr/bin/env bash
# A 32-bit target against a 64-bit host, for real: the i386 memtrace (ELF32,
# per readelf) fetches the debug file of a stripped 32-bit program from the
# native memtrace-fs (ELF64) over loopback.  The report equals a local trace
# of the unstripped program, a local trace of the stripped one lacks the
# names (so they came over the wire), and the counts equal valgrind's.
set -u
. "$(dirname "$0")/fs_common.bash"
. "$MT_ROOT/selftest/tests/lib.bash"
MEMTRACE=${MEMTRACE:-$MT_ROOT/$MT_BUILD/memtrace}
MT_PROGS=${MT_PROGS:-$MT_ROOT/$MT_BUILD/selftest}

elf_class() { readelf -h "$1" 2>/dev/null | sed -n 's/^ *Class: *//p'; }
[ "$(elf_class "$MEMTRACE")" = ELF32 ] || skip "not the i386 build (make ARCH=i386 test runs this)"
[ "$(elf_class "$MEMTRACE_FS")" = ELF64 ] || fail "memtrace-fs of the i386 build should be the native 64-bit host program"
[ -x "$MT_PROGS/demo" ] || skip "selftest programs not built"
[ "$(elf_class "$MT_PROGS/demo")" = ELF32 ] || fail "$MT_PROGS/demo is not a 32-bit program"

trap 'stop_fs >/dev/null 2>&1' EXIT
t=$MT_TMP/t
root=$MT_TMP/sysroot
mkdir -p "$t" "$root$t"
cp "$MT_PROGS/demo" "$t/demo"
id=$(readelf_build_id "$t/demo")
[ -n "$id" ] || fail "demo has no build-id"
mkdir -p "$root/usr/lib/debug/.build-id/${id:0:2}"
objcopy --only-keep-debug "$t/demo" "$root/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"

"$MEMTRACE" -q -o "$MT_TMP/local" "$t/demo" >/dev/null 2>"$MT_TMP/local.err" ||
    fail "local trace: $(cat "$MT_TMP/local.err")"
grep -q "cache_insert() in .*demo.c" "$MT_TMP/local" || fail "the local trace lacks names"
strip --strip-all "$t/demo"
cp "$t/demo" "$root$t/demo"
"$MEMTRACE" -q -o "$MT_TMP/stripped" "$t/demo" >/dev/null 2>&1
grep -q cache_insert "$MT_TMP/stripped" && fail "the stripped demo has names without memtrace-fs: the test proves nothing"

start_fs "$MT_TMP/fs.log" "$MEMTRACE_FS" -n -p 0 "$root"
"$MEMTRACE" -q -c "127.0.0.1:$FS_PORT" -o "$MT_TMP/remote" "$t/demo" >/dev/null 2>"$MT_TMP/remote.err" ||
    fail "memtrace -c: $(cat "$MT_TMP/remote.err")"
if ! diff -u <(report_timeless "$MT_TMP/local") <(report_timeless "$MT_TMP/remote") >"$MT_TMP/diff"; then
    head -40 "$MT_TMP/diff"
    fail "the report over the wire differs from the local trace of the unstripped program"
fi
echo "32-bit memtrace + 64-bit memtrace-fs: report identical to the local unstripped trace"

# The figures of that run, against valgrind's for the same stripped program.
if command -v valgrind >/dev/null; then
    vg=$(valgrind_summary "$t/demo") || fail "valgrind failed"
    mt=$(memtrace_summary -c "127.0.0.1:$FS_PORT" "$t/demo") || fail "memtrace -c -j failed"
    echo "valgrind: $vg | memtrace over the wire: $mt"
    [ "$vg" = "$mt" ] || fail "figures differ from valgrind's"
fi
stop_fs || fail "memtrace-fs exited with an error: $(cat "$MT_TMP/fs.log")"
echo "arch_i386_wire: ok"
