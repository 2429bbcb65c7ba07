#!/usr/bin/env bash
# The arm and aarch64 builds of `make cross` are what they claim (readelf:
# machine, class, float ABI, interpreter, every object of libmt.a), and run
# under qemu-user: -V names the CPU, and --addr2line on a cross-compiled
# program prints what binutils addr2line prints.  Tracing itself cannot run
# under qemu-user (it does not implement ptrace): memtrace must say so in
# one line and fail cleanly.
set -u
: "${MT_ROOT:?}" "${MT_TMP:?}"
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool readelf binutils
need_tool addr2line binutils
need_tool qemu-aarch64 qemu-user
need_tool qemu-arm qemu-user
need_tool clang clang
need_tool ld.lld lld
for a in aarch64 arm; do
    [ -x "$MT_ROOT/build-$a/memtrace" ] || skip "no cross build in build-$a (make cross)"
done
cd "$MT_TMP" || exit 1
fail=0

check_elf() {   # FILE MACHINE CLASS
    local h
    h=$(readelf -h "$1" 2>&1)
    grep -q "Machine:.*$2" <<<"$h" || { echo "$1: not $2: $(grep Machine <<<"$h")"; fail=1; }
    grep -q "Class:.*$3" <<<"$h" || { echo "$1: not $3"; fail=1; }
}

for a in aarch64 arm; do
    if [ $a = aarch64 ]; then
        machine=AArch64 class=ELF64 triple=aarch64-linux-gnu interp=/lib/ld-linux-aarch64.so.1
    else
        machine=ARM class=ELF32 triple=arm-linux-gnueabihf interp=/lib/ld-linux-armhf.so.3
    fi
    b=$MT_ROOT/build-$a
    sysroot=/usr/$triple
    check_elf "$b/memtrace" "$machine" "$class"
    readelf -lW "$b/memtrace" | grep -q "interpreter: $interp" || { echo "$a: interpreter is not $interp"; fail=1; }
    # Every object in the library, not just the linked result.
    wrong=$(readelf -h "$b/libmt.a" | grep 'Machine:' | grep -vc "$machine")
    [ "$wrong" -eq 0 ] || { echo "$a: $wrong objects in libmt.a are for another CPU"; fail=1; }
    if [ $a = arm ]; then
        readelf -h "$b/memtrace" | grep -q 'hard-float ABI' || { echo "arm: not hard-float (armhf)"; fail=1; }
    fi

    v=$(qemu-$a -L "$sysroot" "$b/memtrace" -V 2>&1)
    [ "$(head -n 1 <<<"$v")" = "memtrace $(cat "$MT_ROOT/VERSION") ($a)" ] && grep -qx "cpus: $a" <<<"$v" ||
        { echo "$a: -V says: $v"; fail=1; }

    # --addr2line against binutils, at the entry and inside every function
    # of a program built for the CPU.
    clang --target=$triple -fuse-ld=lld -g -O1 -o "prog_$a" "$MT_ROOT/selftest/programs/unwind_chain.c" \
        -pthread -ldl || { echo "$a: cross compile failed"; fail=1; continue; }
    # The program's own functions: the sysroot's crt objects carry a CU
    # without lines, which binutils prints as ??:? and memtrace as ??:0.
    own='^(alloc_here|recurse|level[123]|on_usr1|interrupted|thread_main|in_thread|interrupted_on_altstack|via_library|main)$'
    addrs=$(readelf -sW "prog_$a" | awk -v own="$own" '$4 == "FUNC" && $8 ~ own {print $2}' |
        head -n 20 | while read -r v; do
            v=$(( 0x$v & ~1 )); printf '0x%x\n0x%x\n' $v $((v + 6)); done)
    [ -n "$addrs" ] || { echo "$a: no functions found"; fail=1; continue; }
    # shellcheck disable=SC2086
    addr2line -f -e "prog_$a" $addrs >expected_$a.txt
    # shellcheck disable=SC2086
    qemu-$a -L "$sysroot" "$b/memtrace" --addr2line "prog_$a" $addrs >got_$a.txt 2>got_$a.err
    if ! diff -u expected_$a.txt got_$a.txt >diff_$a.txt; then
        echo "$a: --addr2line differs from binutils addr2line:"
        head -n 30 diff_$a.txt
        fail=1
    else
        echo "$a: --addr2line agrees with binutils on $(wc -l <got_$a.txt) lines"
    fi

    # Tracing under qemu-user: no ptrace there; one clear line, no crash.
    timeout 20 qemu-$a -L "$sysroot" "$b/memtrace" "./prog_$a" deep >trace_$a.out 2>trace_$a.err
    rc=$?
    if [ $rc -eq 0 ] || [ $rc -ge 124 ] || ! grep -q '^memtrace: error: .*' trace_$a.err; then
        echo "$a: tracing under qemu: exit $rc, stderr: $(head -c 300 trace_$a.err)"
        fail=1
    else
        echo "$a: under qemu-user: $(grep -m1 '^memtrace: error' trace_$a.err)"
    fi
done
exit $fail
