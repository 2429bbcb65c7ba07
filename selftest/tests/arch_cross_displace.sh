#!/usr/bin/env bash
# Displaced execution on aarch64 and arm, checked by the CPU (qemu-user):
# a64_displace_check and arm_displace_check (selftest/cross/, built by
# `make cross`) run every instruction class once in place and once as
# arch_displace planned it (emulated, or copied to a near and, on aarch64,
# a far slot) and compare the registers and flags.  thumb_displace_check
# does the same for Thumb instructions assembled here by llvm-mc from
# data/thumb_cases.txt (their bytes and lengths are llvm-objdump's, after
# ld.lld resolved the branches).
set -u
: "${MT_ROOT:?}" "${MT_TMP:?}"
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool qemu-aarch64 qemu-user
need_tool qemu-arm qemu-user
need_tool llvm-mc llvm
need_tool llvm-objdump llvm
need_tool ld.lld lld
for a in aarch64 arm; do
    [ -x "$MT_ROOT/build-$a/cross/${a/aarch64/a64}_displace_check" ] ||
        skip "no cross build in build-$a (make cross)"
done
fail=0
qemu-aarch64 -L /usr/aarch64-linux-gnu "$MT_ROOT/build-aarch64/cross/a64_displace_check" || fail=1
# The agent engine's entry patch (arch/aarch64_patch.c), run for real.
qemu-aarch64 -L /usr/aarch64-linux-gnu "$MT_ROOT/build-aarch64/cross/a64_patch_check" || fail=1
qemu-arm -L /usr/arm-linux-gnueabihf "$MT_ROOT/build-arm/cross/arm_displace_check" || fail=1
# The agent engine's entry patch on arm (arch/arm_patch.c), Thumb and ARM.
qemu-arm -L /usr/arm-linux-gnueabihf "$MT_ROOT/build-arm/cross/arm_patch_check" || fail=1

# One object per case: the instruction at 0x400 + OFFSET, its labels
# around it where thumb_displace_check puts its targets.
thumb_cases() {
    local off flags expect asm head line s="$MT_TMP/thumb_case.s" o="$MT_TMP/thumb_case.o"
    while IFS= read -r line; do
        case "$line" in '#'* | '') continue ;; esac
        head=${line%% ;*}
        asm=${line#*; }
        read -r off flags expect <<<"$head"
        printf '%s\n' .syntax\ unified .thumb .text '.org 0x300' 'before: .word 0' \
            ".org 0x400 + $off" "$asm" '.org 0x440' 'near: nop' '.org 0x500' 'far: nop' \
            '.org 0x580' .arm 'armfar: nop' .thumb '.org 0x600' 'lit: .word 0' >"$s"
        # Linked, so that bl/blx to the labels are resolved as a linker would.
        llvm-mc -triple=thumbv7-linux-gnueabihf -mattr=+vfp3 -filetype=obj -o "$o.o" "$s" &&
            ld.lld -Ttext=0 -e 0 -o "$o" "$o.o" 2>/dev/null ||
            { echo "FAIL: llvm-mc/ld.lld cannot assemble: $asm" >&2; return 1; }
        local bytes
        bytes=$(llvm-objdump -d --triple=thumbv7 --start-address=$((0x400 + off)) \
            --stop-address=$((0x401 + off)) "$o" |
            awk '/^ *4[0-9a-f]+:/ { for (i = 2; i <= 5 && $i ~ /^[0-9a-f][0-9a-f]$/; i++)
                                        printf "%s ", $i; exit }')
        [ -n "$bytes" ] || { echo "FAIL: llvm-objdump shows no instruction for: $asm" >&2; return 1; }
        echo "$off $flags $expect $bytes# $asm"
    done <"$MT_ROOT/selftest/tests/data/thumb_cases.txt"
}
cases=$(thumb_cases) || fail=1

# Every exported Thumb function of the armhf libc: its first instruction as
# llvm-objdump decodes it; trap and plan must cover exactly those bytes,
# and the allocation functions memtrace intercepts must not be refused.
libc=/usr/arm-linux-gnueabihf/lib/libc.so.6
must="malloc free calloc realloc reallocarray posix_memalign aligned_alloc memalign valloc pvalloc mmap mmap64 munmap mremap"
entries() {
    python3 - "$libc" "$must" <<'PY'
import re, subprocess, sys
libc, must = sys.argv[1], sys.argv[2].split()
odd = {}
for l in subprocess.run(['readelf', '-Ws', '--dyn-syms', libc], capture_output=True,
                        text=True, check=True).stdout.splitlines():
    f = l.split()
    if len(f) >= 8 and f[3] == 'FUNC' and f[6] != 'UND' and int(f[1], 16) % 2:
        odd.setdefault(int(f[1], 16) - 1, f[7].split('@')[0])
dis = subprocess.run(['llvm-objdump', '-d', '--triple=thumbv7', libc], capture_output=True,
                     text=True, check=True).stdout.splitlines()
seen = set()
for i, l in enumerate(dis):
    if not re.match(r'^[0-9a-f]+ <[^>]+>:$', l) or i + 1 >= len(dis):
        continue
    m = re.match(r'^ *([0-9a-f]+):((?: [0-9a-f]{2})+)', dis[i + 1].replace('\t', ' '))
    if not m:
        continue
    addr = int(m.group(1), 16)
    if addr not in odd or addr in seen:
        continue
    seen.add(addr)
    b = m.group(2).split()[:4]
    name = odd[addr]
    print(addr % 4, 0, 'must' if name in must else 'plan', ' '.join(b), '#', name)
PY
}
[ -f "$libc" ] || skip "no armhf libc ($libc)"
cases+=$'\n'$(entries) || fail=1
qemu-arm -L /usr/arm-linux-gnueabihf "$MT_ROOT/build-arm/cross/thumb_displace_check" <<<"$cases" ||
    fail=1
exit $fail
