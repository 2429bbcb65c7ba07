/* Address ranges of a DIE: DW_AT_low_pc/high_pc, or DW_AT_ranges through
 * .debug_ranges (DWARF 2-4) or .debug_rnglists (DWARF 5), with addresses
 * given directly or as .debug_addr indexes. */
#ifndef MT_DWARF_INFO_RANGES_H
#define MT_DWARF_INFO_RANGES_H

#include <stdbool.h>
#include <stdint.h>

#include "target/dwarf/dwarf_sections.h"
#include "target/dwarf/info_form.h"

/* What a unit's DIEs need to turn range attributes into addresses. */
struct range_unit {
    struct form_unit unit;
    uint64_t base;            /* the unit's DW_AT_low_pc */
    uint64_t addr_base;       /* DW_AT_addr_base */
    uint64_t rnglists_base;   /* DW_AT_rnglists_base */
};

typedef void (*range_fn)(void *ctx, uint64_t lo, uint64_t hi);

/* An address-class value (DW_FORM_addr or an addrx index).  false when
 * it cannot be resolved. */
bool range_address(const struct dwarf_sections *secs, const struct range_unit *ru,
                   const struct form_value *v, uint64_t *out);

/* Calls fn for each non-empty [lo, hi) of a DW_AT_ranges value (of form
 * form: an offset, or a DW_FORM_rnglistx index).  At most
 * max_entries entries are read (garbage cannot run long).  false when the
 * list is malformed (ranges before the fault were reported). */
bool range_list_walk(const struct dwarf_sections *secs, const struct range_unit *ru, uint64_t form,
                     const struct form_value *ranges, unsigned max_entries, range_fn fn, void *ctx);

#endif
