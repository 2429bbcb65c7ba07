/* libFuzzer harness for the placement of the tracer's mappings
 * (target/tracer/map_place.c): the /proc/PID/auxv and /proc/PID/limits
 * readers, and the decisions from a /proc/PID/maps text.  Every address it
 * answers must be page aligned and overlap no mapping (the harness aborts
 * otherwise).
 *
 * Input: a 5-byte header, then the parts back to back:
 *   [0]     bit 0: 4-byte words (else 8); bit 1: legacy layout
 *   [1..2]  auxv length (little-endian u16)
 *   [3..4]  limits text length (u16)
 *   then the auxv bytes, the limits text, and the rest is the maps text.
 * Each part is copied to its own allocation, so AddressSanitizer sees any
 * read past its end.  Seeds: selftest/fuzz/seeds/map_place/.
 *
 *   selftest/fuzz/run-fuzzers.sh 60 map_place */
#include <stdlib.h>
#include <string.h>

#include "target/tracer/map_place.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *copy(const uint8_t *p, size_t n)
{
    char *c = malloc(n ? n : 1);
    if (c && n)
        memcpy(c, p, n);
    return c;
}

/* An answer overlaps nothing and is page aligned. */
static void check(const struct proc_maps *m, uint64_t at, uint64_t size)
{
    if (!at)
        return;
    size = (size + 4095) & ~4095ull;
    if (at & 4095)
        abort();
    for (size_t i = 0; i < m->count; i++)
        if (at < m->entries[i].end && m->entries[i].start < at + size)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5)
        return 0;
    unsigned word = data[0] & 1 ? 4 : 8;
    size_t auxv_len = (size_t)(data[1] | data[2] << 8);
    size_t lim_len = (size_t)(data[3] | data[4] << 8);
    const uint8_t *p = data + 5;
    size_t left = size - 5;
    if (auxv_len > left)
        auxv_len = left;
    char *auxv = copy(p, auxv_len);
    p += auxv_len;
    left -= auxv_len;
    if (lim_len > left)
        lim_len = left;
    char *lim = copy(p, lim_len);
    p += lim_len;
    left -= lim_len;
    char *maps = copy(p, left);

    struct place_facts f = {0};
    f.word = word;
    f.legacy = data[0] & 2;
    f.interp_base = place_auxv_value((const uint8_t *)auxv, auxv_len, word, 7);
    f.entry = place_auxv_value((const uint8_t *)auxv, auxv_len, word, 9);
    f.stack_limit = place_limits_stack(lim, lim_len);
    if (proc_maps_parse(maps, left, &f.maps) == 0) {
        struct place_layout l;
        place_layout_of(&f, &l);
        static const uint64_t sizes[] = {4096, 1, 0x191000, 128ull << 20, 1ull << 40};
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            uint64_t at = place_near(&l, &f.maps, sizes[i], f.entry, 1ull << 30);
            check(&f.maps, at, sizes[i]);
            at = place_near(&l, &f.maps, sizes[i], l.mmap_base, l.room_top - l.mmap_base);
            check(&f.maps, at, sizes[i]);
            at = place_far(&l, &f.maps, sizes[i], word);
            check(&f.maps, at, sizes[i]);
        }
        proc_maps_free(&f.maps);
    }
    free(auxv);
    free(lim);
    free(maps);
    return 0;
}
