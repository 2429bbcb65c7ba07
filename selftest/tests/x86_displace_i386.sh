#!/usr/bin/env bash
# Displaced execution in 32-bit mode, checked by running it: the i386 half of
# selftest/unit/test_x86_insn.c (snippets run as is and with one instruction
# displaced; call rel32 / get_pc_thunk, jcc, loop, endbr32, addr16 ...),
# built with gcc -m32 because the unit tests are built for the host.
set -u
cd "${MT_ROOT:?}"
. "$MT_ROOT/selftest/tests/lib.bash"
tmp=${MT_TMP:-$(mktemp -d)}
case $(uname -m) in
x86_64|i?86) ;;
*) skip "not an x86 host" ;;
esac
if ! echo 'int main(void){return 0;}' | gcc -m32 -x c - -o "$tmp/probe" 2>/dev/null || ! "$tmp/probe"; then
    skip "gcc -m32 cannot build and run 32-bit programs here"
fi
gcc -m32 -DMT_NO_LIBELF -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wpointer-arith \
    -Wstrict-prototypes -Wmissing-prototypes -I. -D_GNU_SOURCE -O2 -g \
    selftest/unit/test_x86_insn.c arch/x86_insn.c -o "$tmp/test_x86_insn32" || exit 1
"$tmp/test_x86_insn32"
