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
    /* Where ranges of two or more units overlap (cu 0): i386's
     * __x86.get_pc_thunk.* are one copy in the linked object but stay in
     * the aranges of every unit that made one.  An address there could
     * belong to any of them, so only a walk of every unit answers for it;
     * the rest stay one unit's.  By lo, disjoint. */
    struct arange *shared;
    size_t shared_count;
    /* The overlaps were too many to work out (not real debug info): no
     * address can be given to one unit. */
    bool overlap;
};

/* Parses secs->aranges-like span s.  Ranges starting at 0 (code of
 * discarded sections, relocated there) or empty ones are left out, so
 * their addresses are "not covered".  false (and an empty table) when s
 * holds no usable set. */
bool aranges_parse(const struct dwarf_span *s, bool big_endian, struct aranges *out);
void aranges_free(struct aranges *a);

/* The unit whose code covers address.  false when no range covers it,
 * or ranges of more than one unit do (a shared span). */
bool aranges_find(const struct aranges *a, uint64_t address, uint64_t *cu);

size_t aranges_memory(const struct aranges *a);

#endif
