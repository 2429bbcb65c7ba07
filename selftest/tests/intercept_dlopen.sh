#!/usr/bin/env bash
# dlopen/dlclose: a C program loads a plugin three times (dlopen, call,
# dlclose).  The plugin allocates (some blocks outlive it) and brings its own
# operator new/delete, which must be intercepted at each load and forgotten
# at each unload (its 16-byte headers would show in the bytes otherwise).
# Oracles: valgrind memcheck's HEAP SUMMARY; for the stacks of the unloaded
# plugin in the JSON report, binutils addr2line -f on the .so.  Then a C++
# plugin brings libstdc++ into the C program late: counts equal valgrind's,
# and a block made by operator new has that operator as its first frame, at
# the address nm -D gives for _Znwm (_Znwj on i386) in the libstdc++ that was loaded.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool valgrind valgrind
need_tool addr2line binutils
src=$MT_ROOT/selftest/programs/lib
driver=$MT_PROGS/intercept_dlopen
plugin=$MT_TMP/libintercept_plugin.so
cxxplugin=$MT_TMP/libintercept_cxxlib.so
gcc $MT_TARGET_CFLAGS -std=gnu11 -g -O0 -fPIC -shared -o "$plugin" "$src/intercept_plugin.c" || fail "cannot build the plugin"
g++ $MT_TARGET_CFLAGS -g -O0 -fPIC -shared -o "$cxxplugin" "$src/intercept_cxxlib.cpp" || fail "cannot build the C++ plugin"

compare_with_valgrind "$driver" "$plugin" 3
compare_with_valgrind "$driver" "$plugin" 12

# The plugin is unloaded when the report is written: its frames must still
# name its functions as addr2line names them.
"$MEMTRACE" -q -j -o "$MT_TMP/plugin.json" "$driver" "$plugin" 3 >/dev/null 2>"$MT_TMP/err" ||
    fail "memtrace failed: $(cat "$MT_TMP/err")"
python3 - "$MT_TMP/plugin.json" "$plugin" <<'PY' || fail "frames in the unloaded plugin do not resolve as addr2line says"
import json, subprocess, sys
report, lib = sys.argv[1], sys.argv[2]
frames = []
for st in json.load(open(report))['stacks']:
    for i, f in enumerate(st['frames']):
        if f['module'] == lib:
            # A return address names the call one byte before it.
            off = int(f['offset'], 16) - (0 if i == 0 else 1)
            frames.append((off, f['function']))
names = set()
for off, got in frames:
    want = subprocess.run(['addr2line', '-C', '-f', '-e', lib, hex(off)], capture_output=True,
                          text=True, check=True).stdout.split('\n')[0]
    print(f'{off:#x}: memtrace {got!r}, addr2line {want!r}')
    if got != want:
        sys.exit(1)
    names.add(want)
for need in ('plugin_make_name', 'plugin_leak_object', 'plugin_work'):
    if need not in names:
        sys.exit(f'no stack names {need}')
PY

compare_with_valgrind "$driver" "$cxxplugin" 3
"$MEMTRACE" -q -j -o "$MT_TMP/cxx.json" "$driver" "$cxxplugin" 2 >/dev/null 2>"$MT_TMP/err" ||
    fail "memtrace failed: $(cat "$MT_TMP/err")"
# operator new(size_t): _Znwm on LP64, _Znwj on ILP32 (i386).
znw=_Znwm
[ -z "$MT_TARGET_CFLAGS" ] || znw=_Znwj
python3 - "$MT_TMP/cxx.json" "$znw" <<'PY' || fail "operator new of the late libstdc++ was not intercepted"
import json, subprocess, sys
znw = sys.argv[2]
found = False
for st in json.load(open(sys.argv[1]))['stacks']:
    f = st['frames'][0]
    if f['module'] and 'libstdc++' in f['module']:
        syms = subprocess.run(['nm', '-D', '--defined-only', f['module']], capture_output=True,
                              text=True, check=True).stdout.split('\n')
        new = [int(l.split()[0], 16) for l in syms if l.split()[-1:] and l.split()[-1].split('@')[0] == znw]
        print('first frame', f['module'], f['offset'], 'nm', znw, [hex(a) for a in new])
        found = found or int(f['offset'], 16) in new
sys.exit(0 if found else 'no block has operator new of libstdc++ as its first frame')
PY
exit 0
