#!/usr/bin/env bash
# C++: containers, strings, shared_ptr, new/new[], nothrow, aligned and
# sized operators.  memtrace's HEAP SUMMARY equals valgrind memcheck's: the
# malloc inside operator new and the free at the end of a chain of tail
# calls (sized delete -> delete -> free) are not counted again.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool valgrind valgrind
compare_with_valgrind "$MT_PROGS/intercept_cxx"
# No release may be taken for an unknown pointer on the way.
"$MEMTRACE" -o /dev/null "$MT_PROGS/intercept_cxx" >/dev/null 2>"$MT_TMP/err" || fail "memtrace failed"
! grep -E 'invalid|mismatched' "$MT_TMP/err" || fail "releases misread (above)"
exit 0
