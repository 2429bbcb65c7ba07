/* Reading one attribute value given its DW_FORM, as .debug_info DIEs and
 * DWARF 5 line-table headers encode them.  Every form of DWARF 2-5 (and the
 * GNU extensions gcc emits) is at least skipped correctly, so a reader can
 * walk past attributes it does not care about. */
#ifndef MT_DWARF_INFO_FORM_H
#define MT_DWARF_INFO_FORM_H

#include <stdbool.h>
#include <stdint.h>

#include "shared/files/cursor.h"
#include "target/dwarf/dwarf_sections.h"

/* What a form means for the reader, as far as we interpret it. */
enum form_kind {
    FORM_KIND_NONE,        /* flags, references, blocks: skipped */
    FORM_KIND_UNSIGNED,    /* data1/2/4/8, udata, sec_offset, implicit_const */
    FORM_KIND_SIGNED,      /* sdata */
    FORM_KIND_ADDRESS,     /* addr */
    FORM_KIND_ADDRX,       /* index into .debug_addr */
    FORM_KIND_STRING,      /* inline string: value.str */
    FORM_KIND_STRP,        /* offset into .debug_str */
    FORM_KIND_LINE_STRP,   /* offset into .debug_line_str */
    FORM_KIND_STRX,        /* index into .debug_str_offsets */
    FORM_KIND_BLOCK,       /* value.block / value.u bytes (also data16) */
};

struct form_value {
    enum form_kind kind;
    uint64_t u;            /* number, offset, index, or block length */
    const char *str;       /* FORM_KIND_STRING */
    const uint8_t *block;  /* FORM_KIND_BLOCK */
};

/* The unit a value is read in: sizes that some forms depend on. */
struct form_unit {
    unsigned version;
    unsigned address_size;   /* 1, 2, 4 or 8 */
    unsigned offset_size;    /* 4 or 8 */
};

/* Reads a value of form at c.  implicit_const is the value from the
 * abbreviation (for DW_FORM_implicit_const).  false (and c in error) for an
 * unknown form or truncated data. */
bool form_read(struct cursor *c, uint64_t form, int64_t implicit_const,
               const struct form_unit *unit, struct form_value *out);

/* Resolves a string-valued form against the string sections; strx needs the
 * unit's str_offsets_base.  NULL when the value is not a string or points
 * outside its section. */
const char *form_string(const struct form_value *v, const struct dwarf_sections *secs,
                        const struct form_unit *unit, uint64_t str_offsets_base);

#endif
