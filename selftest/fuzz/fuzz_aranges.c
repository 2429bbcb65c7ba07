/* libFuzzer target for the .debug_aranges reader (dwarf/info_aranges.h).
 * Input: a bare .debug_aranges section; the last byte's low bit picks the
 * byte order.  Parses, then looks up the edges of every range read and a
 * few addresses from the input, checking what the table promises: ranges
 * sorted, none empty or at 0, and a lookup's unit one of a range that
 * covers the address, and the only unit whose ranges cover it.
 *
 *   clang -g -fsanitize=fuzzer,address,undefined -I. -D_GNU_SOURCE selftest/fuzz/fuzz_aranges.c \
 *     build-fuzz/libmt.a -lz
 *   ./a.out -max_len=4096 selftest/fuzz/seeds/aranges
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "target/dwarf/info_aranges.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void probe(const struct aranges *a, uint64_t address)
{
    uint64_t cu;
    if (!aranges_find(a, address, &cu))
        return;
    bool covered = false;
    for (size_t i = 0; i < a->count; i++) {
        if (address < a->ranges[i].lo || address >= a->ranges[i].hi)
            continue;
        if (a->ranges[i].cu != cu)
            abort(); /* another unit covers it too: the answer is not the only one */
        covered = true;
    }
    if (!covered)
        abort(); /* named a unit none of whose ranges covers address */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Its own heap copy, so ASan sees any read past the end. */
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    struct dwarf_span s = { .data = copy, .size = size };
    struct aranges a;
    bool ok = aranges_parse(&s, size > 0 && (data[size - 1] & 1), &a);
    if (ok != (a.count > 0))
        abort();
    for (size_t i = 0; i < a.count; i++) {
        const struct arange *r = &a.ranges[i];
        if (r->lo == 0 || r->hi <= r->lo || (i && r->lo < a.ranges[i - 1].lo))
            abort();
        probe(&a, r->lo);
        probe(&a, r->hi - 1);
        probe(&a, r->hi);
        probe(&a, r->lo - 1);
    }
    for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
        uint64_t v;
        memcpy(&v, data + i, 8);
        probe(&a, v);
    }
    aranges_free(&a);
    free(copy);
    return 0;
}
