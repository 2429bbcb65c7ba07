#!/usr/bin/env bash
# A program linked with jemalloc (libjemalloc.so.2, then libjemalloc.a in
# the executable): 100,000 malloc/free pairs and one call of each standard
# function, then the same through jemalloc's own API (mallocx, rallocx,
# xallocx, sdallocx, dallocx; nallocx and malloc_usable_size are queries),
# shared and static.
# Oracle: valgrind memcheck (allocators_common.bash); its program for the
# own API is the same source calling the standard equivalents (-DEQUIV),
# which valgrind counts: jemalloc's own functions are not valgrind's.
set -u
. "$MT_ROOT/selftest/tests/allocators_common.bash"
# libstdc++ always loaded: its start allocates, in both programs
alloc_build je_shared -ljemalloc -Wl,--no-as-needed -lstdc++
alloc_build je_own -DAPI_JE -ljemalloc -Wl,--no-as-needed -lstdc++
alloc_build je_equiv -DAPI_JE -DEQUIV -Wl,--no-as-needed -lstdc++
alloc_build je_static -Wl,-Bstatic -ljemalloc -Wl,-Bdynamic -Wl,--no-as-needed -lstdc++ -lpthread -lm
# mallocx and the rest are in no dynamic table there: found in .symtab
alloc_build je_static_own -DAPI_JE -Wl,-Bstatic -ljemalloc -Wl,-Bdynamic -Wl,--no-as-needed -lstdc++ \
    -lpthread -lm

vg=$(alloc_valgrind '*jemalloc*' "$MT_TMP/je_shared" std "$PAIRS")
alloc_compare shared '*/libjemalloc.so*' "$vg" "$MT_TMP/je_shared" std "$PAIRS"
vg=$(alloc_valgrind '' "$MT_TMP/je_equiv" own "$PAIRS")
alloc_compare own_api '*/libjemalloc.so*' "$vg" "$MT_TMP/je_own" own "$PAIRS"
vg=$(alloc_valgrind NONE "$MT_TMP/je_static" std "$PAIRS")
alloc_compare static '*/je_static' "$vg" "$MT_TMP/je_static" std "$PAIRS"
vg=$(alloc_valgrind '' "$MT_TMP/je_equiv" own "$PAIRS")
alloc_compare static_own_api '*/je_static_own' "$vg" "$MT_TMP/je_static_own" own "$PAIRS"
exit 0
