#!/usr/bin/env bash
# memtrace on a real arm64 kernel: Debian's linux-image-arm64 booted in
# qemu-system-aarch64 (-M virt -cpu cortex-a57, TCG), the board suite of
# selftest/tests/board_common.bash, with valgrind:arm64 and gdb (gdbserver
# in the VM, gdb-multiarch here) as the oracles.
. "$MT_ROOT/selftest/tests/board_common.bash"
board_suite aarch64 ""
