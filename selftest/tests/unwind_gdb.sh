#!/usr/bin/env bash
# The unwinder against gdb: gdb stops at every malloc of programs built -O0
# and -O2 -fomit-frame-pointer (deep chains, a dlopen'ed .so, a signal
# handler interrupting ordinary code, C++ through libstdc++), records a
# snapshot (registers, stack bytes, mappings, its own frame pcs), and
# test_unwind_replay unwinds each snapshot with target/unwind and compares
# every frame with gdb's.
set -u
: "${MT_ROOT:?}" "${MT_TMP:?}"
. "$MT_ROOT/selftest/tests/lib.bash"
MT_BUILD=${MT_BUILD:-build}
REPLAY=$MT_ROOT/$MT_BUILD/unit/test_unwind_replay
PROGS=${MT_PROGS:-$MT_ROOT/build/selftest}
CAPTURE=$MT_ROOT/selftest/tests/unwind_capture.py

need_tool gdb gdb
[ -x "$REPLAY" ] || { echo "missing $REPLAY (make tests-build)"; exit 1; }
gdb -nx -batch -ex 'python print("py")' 2>/dev/null | grep -q py ||
    skip "gdb has no python"

cd "$MT_TMP" || exit 1
src=$MT_ROOT/selftest/programs
set -e
for opt in O0 O2; do
    flags="-g -$opt"
    [ $opt = O2 ] && flags="$flags -fomit-frame-pointer"
    gcc ${MT_TARGET_CFLAGS:-} -std=gnu11 $flags -fPIC -shared -DUNWIND_LIB_SHARED -o libunwind_lib_$opt.so "$src/unwind_lib.c"
    gcc ${MT_TARGET_CFLAGS:-} -std=gnu11 $flags -pthread -o unwind_chain_$opt "$src/unwind_chain.c" -ldl
    g++ ${MT_TARGET_CFLAGS:-} -std=gnu++17 $flags -o unwind_cxx_$opt "$src/unwind_cxx.cpp"
done
set +e
# The Makefile's own -O0 builds too, when present.
[ -x "$PROGS/unwind_chain" ] && cp "$PROGS/unwind_chain" unwind_chain_mk
[ -x "$PROGS/unwind_cxx" ] && cp "$PROGS/unwind_cxx" unwind_cxx_mk

capture() {   # NAME PROGRAM ARGS...
    local name=$1; shift
    mkdir -p "snaps/$name"
    UNWIND_OUT=$PWD/snaps/$name UNWIND_MAX=${UNWIND_MAX:-25} \
        timeout 120 gdb -nx -batch -x "$CAPTURE" --args "$@" >"snaps/$name.log" 2>&1
    local n
    n=$(ls "snaps/$name"/snap-*.txt 2>/dev/null | wc -l)
    echo "$name: $n snapshots"
    [ "$n" -gt 0 ] || { echo "no snapshots for $name:"; tail -n 20 "snaps/$name.log"; return 1; }
}

fail=0
for v in O0 O2 mk; do
    [ -x unwind_chain_$v ] || continue
    lib=$PWD/libunwind_lib_${v/mk/O0}.so
    capture chain_deep_$v ./unwind_chain_$v deep || fail=1
    capture chain_signal_$v ./unwind_chain_$v signal || fail=1
    capture chain_thread_$v ./unwind_chain_$v thread || fail=1
    capture chain_altstack_$v ./unwind_chain_$v altstack || fail=1
    capture chain_lib_$v ./unwind_chain_$v lib "$lib" || fail=1
    capture cxx_$v ./unwind_cxx_$v || fail=1
done

# The interesting cases must really be in the snapshots, or the test proves
# nothing: gdb saw a signal frame, a frame in the .so, and libstdc++.
grep -l "signal handler called" snaps/chain_signal_*/snap-*.bt >/dev/null ||
    { echo "no snapshot crosses a signal frame"; fail=1; }
grep -l "start_thread" snaps/chain_thread_*/snap-*.bt >/dev/null ||
    { echo "no snapshot in a thread"; fail=1; }
grep -l "unwind_lib_alloc" snaps/chain_lib_*/snap-*.bt >/dev/null ||
    { echo "no snapshot has a frame in the shared library"; fail=1; }
grep -l "operator new" snaps/cxx_*/snap-*.bt >/dev/null ||
    { echo "no C++ snapshot goes through operator new"; fail=1; }

"$REPLAY" snaps/*/snap-*.txt || fail=1
exit $fail
