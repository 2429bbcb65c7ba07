#!/usr/bin/env bash
# memtrace on a real armhf kernel: Debian's linux-image-armmp booted in
# qemu-system-arm (-M virt, cortex-a15, TCG), the board suite of
# selftest/tests/board_common.bash with valgrind:armhf and gdb as the
# oracles.  The programs are Thumb-2, as Debian's armhf compiler makes
# them; Debian's armhf glibc is Thumb-2 too.
. "$MT_ROOT/selftest/tests/board_common.bash"
board_suite arm "-mthumb"
