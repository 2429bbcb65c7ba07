#!/usr/bin/env bash
# The corpus (corpus_common.bash): compilers whose allocations depend on
# where the kernel puts their mappings, so that memtrace's own mappings
# must move none of them (map_place.h; trace_layout checks that directly).
# gcc's cc1 keeps one 32 KiB page-table level per 16 MiB of addresses its
# garbage-collected heap touches (ggc-page.cc); clang 14 (libLLVM) asks
# for other sizes where its mappings fall elsewhere.  The oracle is gdb's
# count of the untraced compiler in the native layout (corpus_gdb_case);
# valgrind's layout is its own, its difference is checked exactly.
set -u
. "$MT_ROOT/selftest/tests/corpus_common.bash"
CC1=/usr/lib/gcc/x86_64-linux-gnu/12/cc1
[ -x "$CC1" ] || fail "missing package: gcc (no $CC1)"
corpus_need clang-14 clang
corpus_need gdb gdb
cp "$MT_ROOT/selftest/tests/data/corpus_list.c" list.c || fail "no input"
# valgrind's layout makes cc1's heap touch two more 16 MiB regions: two
# more second-level tables of 32,768 bytes, never freed (+65,536 bytes
# allocated and in use, in 2 blocks), nothing else differs.
CORPUS_VALGRIND_DELTA[cc1]="2 0 65536 65536 2"
corpus_gdb_case cc1 -- "$CC1" -quiet -frandom-seed=0 list.c -o "$CORPUS_OUT/list.s"
# clang under valgrind asks for other sizes (libLLVM's pointer-keyed hash
# tables grow with the addresses its malloc returns: allocators.md), and
# moves with the directory's name: printed, not checked.  -O0: its
# codegen still keys its tables by address (valgrind: 12,375 allocs and
# 4,012,975 bytes against gdb's 12,376 and 4,018,547), and gdb's count
# takes 53 s instead of -O2's 140 s.
CORPUS_VALGRIND_DELTA[clang]=-
corpus_gdb_case clang -- /usr/bin/clang-14 -O0 -S list.c -o "$CORPUS_OUT/list.clang.s"
corpus_end
