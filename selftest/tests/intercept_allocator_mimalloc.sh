#!/usr/bin/env bash
# A program linked with mimalloc (libmimalloc.so.2; Debian ships no static
# library): 100,000 malloc/free pairs and one call of each standard
# function, then the same through mimalloc's own API (mi_malloc, mi_zalloc,
# mi_mallocn, mi_reallocn, mi_reallocf, mi_rezalloc, mi_recalloc,
# mi_expand, mi_strdup, mi_strndup, the aligned ones, mi_heap_*, mi_free,
# mi_free_size, mi_free_aligned, mi_new; mi_usable_size is a query).
# Oracle: valgrind memcheck (allocators_common.bash); its program for the
# own API is the same source calling the standard equivalents (-DEQUIV),
# which valgrind counts: most mi_ functions are not valgrind's.
set -u
. "$MT_ROOT/selftest/tests/allocators_common.bash"
# libstdc++ always loaded: its start allocates, in both programs
alloc_build mi_shared -lmimalloc -Wl,--no-as-needed -lstdc++
alloc_build mi_own -DAPI_MI -lmimalloc -Wl,--no-as-needed -lstdc++
alloc_build mi_equiv -DAPI_MI -DEQUIV -Wl,--no-as-needed -lstdc++

vg=$(alloc_valgrind '*mimalloc*' "$MT_TMP/mi_shared" std "$PAIRS")
alloc_compare shared '*/libmimalloc.so*' "$vg" "$MT_TMP/mi_shared" std "$PAIRS"
vg=$(alloc_valgrind '' "$MT_TMP/mi_equiv" own "$PAIRS")
alloc_compare own_api '*/libmimalloc.so*' "$vg" "$MT_TMP/mi_own" own "$PAIRS"
exit 0
