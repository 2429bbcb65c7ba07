#!/usr/bin/env bash
# memtrace refuses, in one line, a process of the other word size: a 64-bit
# memtrace a 32-bit program, the i386 memtrace a 64-bit one.  Launching it
# (the program must not run), attaching to it (it must run on unharmed), and
# following an exec into it (memtrace detaches; the program finishes).  The
# word size the message names is the one readelf gives for the program.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"

elf_class() { readelf -h "$1" 2>/dev/null | sed -n 's/^ *Class: *ELF//p'; }
mine=$(elf_class "$MEMTRACE")
case $mine in
64) other_flags=-m32 ;;
32) other_flags=-m64 ;;
*) fail "cannot tell the ELF class of $MEMTRACE" ;;
esac
[ "$(uname -m)" = x86_64 ] || skip "needs an x86_64 kernel running both word sizes"

cat > other.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "w");
    if (!f) return 2;
    fprintf(f, "ran\n");
    fclose(f);
    if (argc > 2) {                 /* stay alive until argv[2] exists */
        for (int i = 0; i < 3000 && access(argv[2], F_OK) != 0; i++)
            usleep(10000);
        fprintf(stderr, "other: done\n");
    }
    return 0;
}
C
gcc $other_flags -O0 -o other other.c 2>/dev/null ||
    skip "gcc $other_flags cannot build programs here"
./other probe.txt || skip "gcc $other_flags programs do not run here"
bits=$(elf_class other)
[ -n "$bits" ] && [ "$bits" != "$mine" ] || fail "other is ELF$bits, memtrace ELF$mine"

one_line_error() { # WHAT ERRFILE
    [ "$(wc -l < "$2")" -eq 1 ] || fail "$1: expected one line on stderr, got: $(cat "$2")"
    grep -q "cannot trace process [0-9]*: it runs a $bits-bit .* program and this memtrace is built for" "$2" ||
        fail "$1: unexpected message: $(cat "$2")"
    echo "$1: $(cat "$2")"
}

# Launch: refused, exit 1, and the program never ran.
"$MEMTRACE" ./other launched.txt > out.txt 2> err.txt; rc=$?
[ $rc -eq 1 ] || fail "launch: exit $rc, expected 1"
one_line_error launch err.txt
[ ! -e launched.txt ] || fail "launch: the program ran although memtrace refused it"

# Attach: refused, and the program goes on to finish normally.
./other attached.txt go 2> other.err &
pid=$!
for _ in $(seq 1 100); do [ -e attached.txt ] && break; sleep 0.05; done
"$MEMTRACE" -p "$pid" > out.txt 2> err.txt < /dev/null; rc=$?
[ $rc -eq 1 ] || fail "attach: exit $rc, expected 1"
one_line_error attach err.txt
grep -q TracerPid:.0 "/proc/$pid/status" || fail "attach: the process is still traced"
touch go
wait "$pid" || fail "attach: the program exited $? after the refusal"
grep -q 'other: done' other.err || fail "attach: the program did not finish"

# Exec: memtrace follows a program of its own word size, which execs the
# other one: memtrace says so, detaches, and the new program completes.
"$MEMTRACE" -q "$MT_PROGS/exec_into" "$MT_TMP/other" exec.txt > out.txt 2> err.txt; rc=$?
[ $rc -eq 0 ] || fail "exec: memtrace exited $rc: $(cat err.txt)"
grep -q "cannot trace process [0-9]*: it runs a $bits-bit .*detaching after its exec" err.txt ||
    fail "exec: no message: $(cat err.txt)"
echo "exec: $(cat err.txt)"
for _ in $(seq 1 100); do [ -s exec.txt ] && break; sleep 0.05; done
grep -q ran exec.txt || fail "exec: the exec'ed program did not run"
echo "arch_i386_word_size: ok"
