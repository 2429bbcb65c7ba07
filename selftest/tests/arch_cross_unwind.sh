#!/usr/bin/env bash
# Unwinding and line lookup on arm and aarch64, without a board: programs
# cross-compiled with clang (-O0, and -O2 -fomit-frame-pointer; arm in ARM
# and in Thumb state) run under qemu-user; gdb-multiarch, connected to
# qemu's gdbstub over a unix socket, stops them at the first instruction of
# malloc (of shapes_leaf for unwind_shapes) and records registers, the stack
# and its own backtrace (arch_cross_capture.py).  snapshot_replay, memtrace's
# modules + CFI + unwinder + symbolizer built for that CPU by `make cross`,
# runs under qemu too and must find gdb's frames, function names and lines.
#
# Recorded at test time rather than committed: the snapshots belong to the
# exact binaries and cross libc installed here, and recording takes seconds.
#
# arm: Debian's armhf libc has only .ARM.exidx unwind tables: memtrace's
# frames through it (__libc_start_call_main, __libc_start_main, the dynamic
# linker's during dlopen) come from its EHABI reader and must be gdb's too.
set -u
: "${MT_ROOT:?}" "${MT_TMP:?}"
. "$MT_ROOT/selftest/tests/lib.bash"
CAPTURE=$MT_ROOT/selftest/tests/arch_cross_capture.py
src=$MT_ROOT/selftest/programs

need_tool qemu-aarch64 qemu-user
need_tool qemu-arm qemu-user
need_tool gdb-multiarch gdb-multiarch
need_tool clang clang
need_tool ld.lld lld
for a in aarch64 arm; do
    [ -x "$MT_ROOT/build-$a/cross/snapshot_replay" ] ||
        skip "no cross build in build-$a (make cross)"
done
cd "$MT_TMP" || exit 1

qemu_pids=()
cleanup() {
    for p in "${qemu_pids[@]}"; do kill "$p" 2>/dev/null; done
    true
}
trap cleanup EXIT

triple() { [ "$1" = aarch64 ] && echo aarch64-linux-gnu || echo arm-linux-gnueabihf; }

build() {   # ARCH VARIANT FLAGS...
    local arch=$1 v=$2; shift 2
    local cc=(clang --target="$(triple "$arch")" -fuse-ld=lld -g -fasynchronous-unwind-tables "$@")
    "${cc[@]}" -fPIC -shared -DUNWIND_LIB_SHARED -o "libunwind_lib_$arch$v.so" "$src/unwind_lib.c" &&
        "${cc[@]}" -pthread -o "unwind_chain_$arch$v" "$src/unwind_chain.c" -ldl &&
        "${cc[@]}" -o "unwind_shapes_$arch$v" "$src/unwind_shapes.c"
}

capture() {   # NAME ARCH BREAK MAX PROGRAM ARGS...  (env CAP_START)
    local name=$1 arch=$2 brk=$3 max=$4; shift 4
    local sysroot=/usr/$(triple "$arch") sock=$PWD/gdb-$name.sock
    mkdir -p "snaps/$name"
    rm -f "$sock"
    "qemu-$arch" -L "$sysroot" -g "$sock" "$@" >"snaps/$name.qemu" 2>&1 &
    local qpid=$!
    qemu_pids+=("$qpid")
    for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
    CAP_SOCK=$sock CAP_PROG=$PWD/$1 CAP_SYSROOT=$sysroot CAP_OUT=$PWD/snaps/$name \
        CAP_BREAK=$brk CAP_MAX=$max timeout 60 gdb-multiarch -nx -batch -x "$CAPTURE" \
        >"snaps/$name.log" 2>&1
    kill "$qpid" 2>/dev/null
    wait "$qpid" 2>/dev/null
    local n
    n=$(ls "snaps/$name"/snap-*.txt 2>/dev/null | wc -l)
    echo "$name: $n snapshots"
    [ "$n" -gt 0 ] || { echo "no snapshots for $name:"; tail -n 20 "snaps/$name.log"; return 1; }
}

fail=0
# pac: return addresses signed with pointer authentication (qemu-aarch64's
# default CPU, max, has it): memtrace must strip the signature as gdb does.
variants_aarch64=("O0:-O0" "O2:-O2 -fomit-frame-pointer" "pacO2:-O2 -mbranch-protection=standard")
variants_arm=("O0:-O0 -marm" "O2:-O2 -marm -fomit-frame-pointer" "thumbO2:-O2 -mthumb -fomit-frame-pointer")
for arch in aarch64 arm; do
    eval "variants=(\"\${variants_$arch[@]}\")"
    for spec in "${variants[@]}"; do
        v=${spec%%:*}
        # shellcheck disable=SC2086  # the flags are words
        build "$arch" "$v" ${spec#*:} || { echo "cross compile failed: $arch $v"; fail=1; continue; }
        p=unwind_chain_$arch$v
        capture "${arch}_${v}_deep" "$arch" malloc 3 "$p" deep || fail=1
        capture "${arch}_${v}_thread" "$arch" malloc 3 "$p" thread || fail=1
        [ "$v" = pacO2 ] && continue
        # dlopen's own mallocs (frames in ld.so), then the library's
        [ "$v" = O2 ] && { capture "${arch}_${v}_dlopen" "$arch" malloc 2 "$p" lib \
            "$PWD/libunwind_lib_$arch$v.so" || fail=1; }
        CAP_START=unwind_lib_alloc capture "${arch}_${v}_lib" "$arch" malloc 1 "$p" lib \
            "$PWD/libunwind_lib_$arch$v.so" || fail=1
        [ "$v" = O0 ] || capture "${arch}_${v}_shapes" "$arch" shapes_leaf 6 "unwind_shapes_$arch$v" ||
            fail=1
    done
done

# The binaries are what they claim: the CPU, and the instruction set state
# of the code (a Thumb function's symbol has bit 0 set).
readelf -h unwind_chain_aarch64O2 | grep -q 'Machine:.*AArch64' || { echo "not an aarch64 ELF"; fail=1; }
readelf -h unwind_chain_armO2 | grep -q 'Machine:.*ARM' || { echo "not an arm ELF"; fail=1; }
sym_value() { readelf -sW "$1" | awk -v f="$2" '$8 == f && $4 == "FUNC" {print $2; exit}'; }
odd() { [ $((0x$1 & 1)) -eq 1 ]; }
odd "$(sym_value unwind_chain_armthumbO2 level1)" || { echo "thumb build: level1 is not Thumb code"; fail=1; }
odd "$(sym_value unwind_chain_armO2 level1)" && { echo "arm build: level1 is Thumb code"; fail=1; }
llvm-objdump -d --mattr=+v8.3a --no-show-raw-insn unwind_chain_aarch64pacO2 | grep -q paciasp ||
    { echo "pac build: no paciasp in the program"; fail=1; }

# The interesting cases must be in the snapshots, or the replay proves
# nothing: a thread's stack, a frame in the dlopen'ed library, a deep chain.
for arch in aarch64 arm; do
    grep -l "thread_main" snaps/${arch}_*_thread/snap-*.bt >/dev/null ||
        { echo "$arch: no snapshot in a thread"; fail=1; }
    grep -l "unwind_lib_alloc" snaps/${arch}_*_lib/snap-*.bt >/dev/null ||
        { echo "$arch: no snapshot has a frame in the shared library"; fail=1; }
    grep -l "level3" snaps/${arch}_*_deep/snap-*.bt >/dev/null ||
        { echo "$arch: no deep chain"; fail=1; }
done

echo "--- aarch64 replay"
qemu-aarch64 -L /usr/aarch64-linux-gnu "$MT_ROOT/build-aarch64/cross/snapshot_replay" \
    $(ls snaps/aarch64_*/snap-*.txt | grep -v _pacO2_) || fail=1
# Signed return addresses: gdb here cannot strip them (see snapshot_replay.c),
# so names and lines come from gdb's bt of the same stop in the O2 build.
echo "--- aarch64 replay, pointer authentication"
for c in deep thread; do
    qemu-aarch64 -L /usr/aarch64-linux-gnu "$MT_ROOT/build-aarch64/cross/snapshot_replay" \
        --pac-ref snaps/aarch64_O2_$c/snap-0.txt snaps/aarch64_pacO2_$c/snap-0.txt || fail=1
done
echo "--- arm replay"
qemu-arm -L /usr/arm-linux-gnueabihf "$MT_ROOT/build-arm/cross/snapshot_replay" \
    snaps/arm_*/snap-*.txt || fail=1
exit $fail
