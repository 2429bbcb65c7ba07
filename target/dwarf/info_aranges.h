/* .debug_aranges: which compilation unit holds the code at an address, so
 * that a lookup can index that one unit instead of all of .debug_info.
 * Parsed once into a sorted array (24 bytes a range; libc has ~5,000);
 * the section itself is not kept.  The section comes from the file being
 * traced: every length is checked, a malformed set is skipped whole. */
#ifndef MT_DWARF_INFO_ARANGES_H
#define MT_DWARF_INFO_ARANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/dwarf/dwarf_sections.h"

struct arange {
    uint64_t lo, hi;        /* [lo, hi) */
    uint64_t cu;            /* .debug_info offset of the unit header */
};

struct aranges {
    struct arange *ranges;  /* by lo */
    size_t count;
    /* Ranges of two units overlap somewhere: an address could then belong
     * to either, and only a walk of every unit can answer as before. */
    bool overlap;
};

/* Parses secs->aranges-like span s.  Ranges starting at 0 (code of
 * discarded sections, relocated there) or empty ones are left out, so
 * their addresses are "not covered".  false (and an empty table) when s
 * holds no usable set. */
bool aranges_parse(const struct dwarf_span *s, bool big_endian, struct aranges *out);
void aranges_free(struct aranges *a);

/* The unit whose code covers address.  false when no range covers it. */
bool aranges_find(const struct aranges *a, uint64_t address, uint64_t *cu);

size_t aranges_memory(const struct aranges *a);

#endif
