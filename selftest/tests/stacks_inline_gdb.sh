#!/usr/bin/env bash
# Inlined and tail-call frames against gdb's `bt` at -O2: always_inline
# helpers nested two deep and tail-calling wrappers (return calloc(...),
# return realloc(...) compiled as jumps) in the program and in a shared
# library.  Every frame of the program's own files in gdb's backtrace at
# malloc/calloc/realloc must be in memtrace's JSON stacks, in order, with
# function, file and line: inlined frames and the frames gdb restores from
# DWARF call-site information included.  Then the JSON markers ("inlined"
# frames share their physical frame's pc, "tail_call"), the text markers,
# and --depth counting the frames shown.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
command -v gdb >/dev/null || skip "gdb is not installed"
cd "$MT_TMP"
D="$MT_ROOT/selftest/tests/data"

gcc ${MT_TARGET_CFLAGS:-} -g -O2 -fPIC -shared -o libinline.so "$D/inline_lib.c" || fail "build lib"
gcc ${MT_TARGET_CFLAGS:-} -g -O2 -o inline_main "$D/inline_main.c" -L. -linline || fail "build main"
# The wrappers must really be jumps, or there is no tail call to restore.
objdump -d inline_main | awk '/<zeroed>:/,/^$/' | grep -q 'jmp.*calloc' || skip "gcc did not compile zeroed() as a tail call"
objdump -d libinline.so | awk '/<lib_grow>:/,/^$/' | grep -q 'jmp.*realloc' || skip "gcc did not compile lib_grow() as a tail call"

# Breakpoints on libc's functions once it is loaded (before, *malloc is the PLT stub).
cat > inline.gdb <<'GDB'
set pagination off
set print frame-arguments none
set confirm off
break main
run
break *malloc
break *calloc
break *realloc
continue
while 1
  bt 40
  continue
end
GDB
LD_LIBRARY_PATH=. gdb -batch -nx -x inline.gdb ./inline_main > inline.gdb.log 2>&1
grep -q ' in zeroed ' inline.gdb.log && grep -q ' in lib_grow ' inline.gdb.log ||
    fail "gdb restored no tail-call frame (see inline.gdb.log)"
LD_LIBRARY_PATH=. "$MEMTRACE" -q -d 40 -j -o inline.json ./inline_main > /dev/null || fail "memtrace failed"
python3 "$MT_ROOT/selftest/tests/stacks_compare.py" inline.gdb.log inline.json inline_main.c inline_lib.c ||
    fail "memtrace's stacks differ from gdb's backtraces"

python3 - inline.json <<'PY' || fail "JSON markers wrong"
import json, sys
stacks = json.load(open(sys.argv[1]))['stacks']
names = lambda s: [f['function'] for f in s['frames']]
ok = True
for s in stacks:
    fr = s['frames']
    for a, b in zip(fr, fr[1:]):
        if a['inlined'] and a['pc'] != b['pc']:
            print('inlined frame with its own pc:', a, b); ok = False
    if 'zeroed' in names(s):
        z = fr[names(s).index('zeroed')]
        if not z['tail_call'] or z['inlined']:
            print('zeroed not marked as a tail call:', z); ok = False
    if 'dup_name' in names(s):
        i = names(s).index('dup_name')
        if names(s)[i:i + 3] != ['dup_name', 'label', 'register_all'] or not fr[i]['inlined'] or not fr[i + 1]['inlined'] or fr[i + 2]['inlined']:
            print('inline chain wrong:', names(s)); ok = False
need = {'zeroed', 'lib_grow', 'dup_name', 'lib_copy'}
seen = {n for s in stacks for n in names(s)}
if not need <= seen:
    print('missing frames:', need - seen); ok = False
sys.exit(0 if ok else 1)
PY

# Text: the markers; --depth 3 shows malloc, dup_name, label and no more.
LD_LIBRARY_PATH=. "$MEMTRACE" -q -d 3 -o inline3.txt ./inline_main > /dev/null || fail "memtrace -d 3 failed"
LD_LIBRARY_PATH=. "$MEMTRACE" -q -d 40 -o inline.txt ./inline_main > /dev/null || fail "memtrace failed"
grep -q '#1 zeroed() in .*inline_main.c:[0-9]* \[tail call\]$' inline.txt || fail "no [tail call] marker: $(cat inline.txt)"
grep -q '#1 dup_name() in .*inline_main.c:[0-9]* \[inlined\]$' inline.txt || fail "no [inlined] marker: $(cat inline.txt)"
awk '/were not free/ { n = 0; getline; while ($0 ~ /^    #/) { n++; last = $0; if ((getline) <= 0) break } print n }' inline3.txt | sort -u > depths.txt
[ "$(cat depths.txt)" = 3 ] || fail "--depth 3: stacks of $(tr '\n' ' ' < depths.txt) frames"
grep -A3 'were not free' inline3.txt | grep -q '#2 label() .*\[inlined\]' || fail "--depth 3 did not count inlined frames: $(cat inline3.txt)"
echo "PASS: inline and tail-call frames equal gdb's"
