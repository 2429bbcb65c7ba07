#!/usr/bin/env bash
# Displaced execution on aarch64 and arm, checked by the CPU (qemu-user):
# a64_displace_check and arm_displace_check (selftest/cross/, built by
# `make cross`) run every instruction class once in place and once as
# arch_displace planned it (emulated, or copied to a near and, on aarch64,
# a far slot) and compare the registers and flags.
set -u
: "${MT_ROOT:?}" "${MT_TMP:?}"
for tool in qemu-aarch64 qemu-arm; do
    command -v $tool >/dev/null || { echo "$tool is not installed (make deps)"; exit 77; }
done
for a in aarch64 arm; do
    [ -x "$MT_ROOT/build-$a/cross/${a/aarch64/a64}_displace_check" ] ||
        { echo "no cross build in build-$a (make cross)"; exit 77; }
done
fail=0
qemu-aarch64 -L /usr/aarch64-linux-gnu "$MT_ROOT/build-aarch64/cross/a64_displace_check" || fail=1
qemu-arm -L /usr/arm-linux-gnueabihf "$MT_ROOT/build-arm/cross/arm_displace_check" || fail=1
exit $fail
