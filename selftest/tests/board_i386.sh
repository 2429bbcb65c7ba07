#!/usr/bin/env bash
# memtrace on a real i386 kernel: Debian's linux-image-686-pae booted in
# qemu-system-i386 (-M pc -cpu max, TCG), the board suite of
# selftest/tests/board_common.bash with valgrind:i386 and gdb (gdbserver in
# the VM) as the oracles.  The tracer is make ARCH=i386's (gcc -m32), the
# programs gcc -m32's, run on Debian's i386 libc; this host's own kernel
# runs no 32-bit programs, so this board is where the i386 build meets a
# kernel.
. "$MT_ROOT/selftest/tests/board_common.bash"
board_suite i386 ""
