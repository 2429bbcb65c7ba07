#!/usr/bin/env bash
# memtrace exits with the traced program's status (128+signal when it was
# killed), reports even when the program crashes, and errors out in one line
# for bad input.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"

cat > crash.c <<'C'
#include <signal.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    void *p = malloc(64);
    (void)p;
    if (argc > 1) raise(SIGSEGV);
    return 7;
}
C
gcc ${MT_TARGET_CFLAGS:-} -g -o crash crash.c || fail "cannot build"

"$MEMTRACE" -q ./crash > out.txt; rc=$?
[ $rc -eq 7 ] || fail "exit status $rc, expected 7"
grep -q '64 bytes in 1 blocks were not free' out.txt || fail "no report for a normal exit"

"$MEMTRACE" -q ./crash segv > out.txt 2>err.txt; rc=$?
[ $rc -eq $((128 + 11)) ] || fail "exit status $rc after SIGSEGV, expected 139"
grep -q 'in use: 64 bytes in 1 blocks' out.txt || fail "no report after a crash"

# Bad input: one line on stderr, exit 1.
check_error() {
    local expect=$1; shift
    "$MEMTRACE" "$@" > out.txt 2> err.txt; rc=$?
    [ $rc -eq 1 ] || fail "memtrace $*: exit $rc, expected 1"
    [ "$(wc -l < err.txt)" -eq 1 ] || fail "memtrace $*: expected one line on stderr, got: $(cat err.txt)"
    grep -qi "$expect" err.txt || fail "memtrace $*: '$expect' not in: $(cat err.txt)"
}
check_error "no such process" -p 999999999
check_error "not a process id" -p abc
check_error "cannot run" ./does-not-exist
check_error "not a process id" -p 0
echo ok
