#!/usr/bin/env bash
# A library replaced on disk while the program runs (a package upgrade:
# a new file renamed over the old path).  The frames in it are named from
# the file the program maps (/proc/PID/map_files), not from the new one at
# the same path: binutils' addr2line on a copy of the old build is the
# oracle, and the new build must name those offsets otherwise (or the test
# could not fail).  Both engines.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP" || fail "no scratch directory"
need_tool addr2line binutils
D="$MT_ROOT/selftest/tests/data"
# shellcheck disable=SC2086
{
    gcc $MT_TARGET_CFLAGS -g -O2 -fPIC -shared -o libreplaced.so "$D/replaced_lib_v1.c" &&
    gcc $MT_TARGET_CFLAGS -g -O2 -fPIC -shared -o libreplaced.new "$D/replaced_lib_v2.c" &&
    gcc $MT_TARGET_CFLAGS -g -O0 -o replaced_main "$D/replaced_lib_main.c" -L. -lreplaced \
        -Wl,-rpath,'$ORIGIN'
} || fail "cannot build the programs"
cp libreplaced.so old.so

frames_in_lib() { # JSON -> "offset function" of every frame in the library
    python3 - "$1" <<'PY'
import json, sys
for s in json.load(open(sys.argv[1]))['stacks']:
    for f in s['frames']:
        if f.get('module', '').endswith('/libreplaced.so'):
            print(f['offset'], f.get('function', '?'))
PY
}

for engine in ptrace agent; do
    rm -f ready go
    cp old.so libreplaced.so.tmp && mv libreplaced.so.tmp libreplaced.so
    cp libreplaced.new libreplaced.next
    "$MEMTRACE" -q -j --engine=$engine -o $engine.json ./replaced_main > $engine.out 2> $engine.err &
    pid=$!
    wait_until 20 "the program's first allocation" test -e ready
    mv libreplaced.next libreplaced.so
    touch go
    wait $pid || fail "$engine: memtrace failed: $(cat $engine.err)"
    frames_in_lib $engine.json > $engine.frames
    [ "$(wc -l < $engine.frames)" -ge 2 ] || fail "$engine: no stack through the library: $(cat $engine.frames)"
    while read -r off name; do
        pc=$(printf '0x%x' $((off - 1)))  # a return address: the call is before it
        want=$(addr2line -f -e old.so "$pc" | head -1)
        now=$(addr2line -f -e libreplaced.so "$pc" | head -1)
        [ "$want" != "$now" ] || fail "the new build names $pc the same ($now): this test cannot fail"
        [ "$name" = "$want" ] || fail "$engine: frame at $off named $name; the mapped file says $want (the file on disk now: $now)"
    done < $engine.frames
    grep -q "the mapped file is read instead" $engine.err ||
        fail "$engine: no warning that the file on disk changed: $(cat $engine.err)"
    echo "$engine: $(wc -l < $engine.frames) frames in the replaced library named as the mapped build ($(sort -u $engine.frames | paste -sd,))"
done
