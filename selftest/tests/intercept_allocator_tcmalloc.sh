#!/usr/bin/env bash
# A program linked with tcmalloc (libtcmalloc.so.4, then
# libtcmalloc_minimal.a in the executable): 100,000 malloc/free pairs and
# one call of each standard function, then the same through tcmalloc's tc_
# API (tc_malloc, tc_free_sized, tc_new, tc_delete_sized...; tc_nallocx and
# tc_malloc_size are queries), shared and static.  Oracle: valgrind memcheck
# (allocators_common.bash), on the same programs: in libtcmalloc.so and in
# its .a every tc_ function is an alias of a standard one, which valgrind
# replaces.
set -u
. "$MT_ROOT/selftest/tests/allocators_common.bash"
alloc_build tc_shared -ltcmalloc -lstdc++
alloc_build tc_own -DAPI_TC -ltcmalloc -lstdc++
alloc_build tc_static -Wl,-Bstatic -ltcmalloc_minimal -Wl,-Bdynamic -lstdc++ -lpthread -lm
alloc_build tc_static_own -DAPI_TC -Wl,-Bstatic -ltcmalloc_minimal -Wl,-Bdynamic -lstdc++ -lpthread -lm

vg=$(alloc_valgrind '*tcmalloc*' "$MT_TMP/tc_shared" std "$PAIRS")
alloc_compare shared '*/libtcmalloc.so*' "$vg" "$MT_TMP/tc_shared" std "$PAIRS"
vg=$(alloc_valgrind '*tcmalloc*' "$MT_TMP/tc_own" own "$PAIRS")
alloc_compare own_api '*/libtcmalloc.so*' "$vg" "$MT_TMP/tc_own" own "$PAIRS"
vg=$(alloc_valgrind NONE "$MT_TMP/tc_static" std "$PAIRS")
alloc_compare static '*/tc_static' "$vg" "$MT_TMP/tc_static" std "$PAIRS"
vg=$(alloc_valgrind NONE "$MT_TMP/tc_static_own" own "$PAIRS")
alloc_compare static_own_api '*/tc_static_own' "$vg" "$MT_TMP/tc_static_own" own "$PAIRS"
exit 0
