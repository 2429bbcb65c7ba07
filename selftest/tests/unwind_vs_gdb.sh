#!/usr/bin/env bash
# Every allocation stack of memtrace's JSON report equals gdb's `bt` at a
# breakpoint on the same function's first instruction: -O0 and -O2 without
# frame pointers, a shared library, a signal handler that allocates, C++.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool gdb gdb
cd "$MT_TMP"
D="$MT_ROOT/selftest/tests/data"

run_case() {
    local name=$1 bin=$2 breaks=$3; shift 3
    {
        echo "set pagination off"
        echo "set print frame-arguments none"
        echo "set confirm off"
        echo "handle SIGUSR1 nostop noprint pass"
        for b in $breaks; do
            echo "break *$b"
        done
        echo "run"
        echo "while 1"
        echo "  bt 40"
        echo "  continue"
        echo "end"
    } > "$name.gdb"
    LD_LIBRARY_PATH=. gdb -batch -nx -x "$name.gdb" "./$bin" > "$name.gdb.log" 2>&1
    LD_LIBRARY_PATH=. "$MEMTRACE" -q -d 40 -j -o "$name.json" "./$bin" > /dev/null ||
        fail "$name: memtrace failed"
    python3 "$MT_ROOT/selftest/tests/stacks_compare.py" "$name.gdb.log" "$name.json" "$@" ||
        fail "$name: memtrace's stacks differ from gdb's backtraces"
}

for opt in -O0 "-O2 -fomit-frame-pointer"; do
    tag=$(echo "$opt" | tr -dc 'O0-9')
    gcc ${MT_TARGET_CFLAGS:-} -g $opt -fPIC -shared -o libstacks.so "$D/stacks_lib.c" || fail "build lib"
    gcc ${MT_TARGET_CFLAGS:-} -g $opt -o "stacks_$tag" "$D/stacks_main.c" -L. -lstacks || fail "build main"
    run_case "c_$tag" "stacks_$tag" "malloc calloc" stacks_main.c stacks_lib.c
done

need_tool g++ g++
# -O0: in -O2 C++ almost every frame is inlined template code, where gdb's
# line choice for a physical frame departs from elfutils' and binutils'
# addr2line (both of which memtrace matches; see addr2line_elfutils.sh).
g++ ${MT_TARGET_CFLAGS:-} -g -O0 -o stacks_cxx "$D/stacks_cxx.cpp" || fail "build C++"
# operator new takes size_t: 'm' (unsigned long) on LP64, 'j' on ILP32.
if [ "${MT_TARGET_CFLAGS:-}" = -m32 ]; then news="_Znwj _Znaj"; else news="_Znwm _Znam"; fi
run_case cxx stacks_cxx "$news" stacks_cxx.cpp
