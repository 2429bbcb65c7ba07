/* The compilation units of .debug_info, read only as far as their first
 * (unit) DIE: that is where DW_AT_stmt_list and DW_AT_comp_dir live, which
 * is all the line-table reader needs.  Nothing below the unit DIE is
 * decoded, so walking every unit of a large debug file stays cheap. */
#ifndef MT_DWARF_INFO_CU_H
#define MT_DWARF_INFO_CU_H

#include <stdbool.h>
#include <stdint.h>

#include "target/dwarf/dwarf_sections.h"
#include "target/dwarf/info_form.h"

struct info_cu {
    uint64_t offset;          /* of the unit header in .debug_info */
    uint64_t next_offset;     /* of the next unit */
    uint64_t die_offset;      /* of the unit DIE */
    unsigned unit_type;       /* DW_UT_*; DWARF 2-4 units are DW_UT_compile */
    struct form_unit unit;    /* version, address and offset size */
    uint64_t abbrev_offset;
    uint64_t tag;             /* of the unit DIE; 0 when the unit is empty */
    bool has_stmt_list;
    uint64_t stmt_list;       /* offset of its line program in .debug_line */
    const char *comp_dir;     /* points into a section; NULL if absent */
    const char *name;         /* DW_AT_name of the unit; NULL if absent */
};

/* Reads the unit whose header starts at offset.  false when the header or
 * the unit DIE is malformed; cu->next_offset is still set when the unit
 * length was readable, so a caller can skip a bad unit (check it is greater
 * than offset). */
bool info_cu_read(const struct dwarf_sections *secs, uint64_t offset, struct info_cu *cu);

/* Finds the abbreviation with code in the table at abbrev_offset and leaves
 * c positioned at its first attribute specification (after tag and the
 * children flag).  false when absent or malformed. */
bool info_abbrev_find(const struct dwarf_sections *secs, uint64_t abbrev_offset, uint64_t code,
                      struct cursor *c, uint64_t *tag, bool *has_children);

#endif
