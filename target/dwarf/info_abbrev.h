/* One .debug_abbrev table parsed into an array, for walking every DIE of a
 * unit (info_cu only ever needs the first DIE and searches linearly). */
#ifndef MT_DWARF_INFO_ABBREV_H
#define MT_DWARF_INFO_ABBREV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/files/cursor.h"
#include "target/dwarf/dwarf_sections.h"

/* Real abbreviations have a few dozen attributes at most; more is garbage,
 * and would let zero-width forms make every DIE cost that much. */
#define ABBREV_MAX_ATTRS 256

struct abbrev_entry {
    uint64_t code;
    uint64_t tag;
    bool has_children;
    size_t specs;              /* offset of its (attr, form) list in .debug_abbrev */
};

struct abbrev_table {
    uint64_t offset;           /* of the table in .debug_abbrev */
    bool loaded;
    struct abbrev_entry *entries;
    size_t count, cap;
};

/* Parses the table at offset (reusing t's memory).  false when malformed;
 * the entries read before the fault stay usable. */
bool abbrev_table_load(struct abbrev_table *t, const struct dwarf_sections *secs, uint64_t offset);
/* Makes the whole table at offset resident when .debug_abbrev is mapped
 * (dwarf_span_ensure); true when there is nothing to do. */
bool abbrev_ensure_table(const struct dwarf_sections *secs, uint64_t offset);
const struct abbrev_entry *abbrev_table_find(const struct abbrev_table *t, uint64_t code);
void abbrev_table_free(struct abbrev_table *t);

/* Iterates an entry's attribute specifications. */
struct abbrev_spec_iter {
    struct cursor c;
};
void abbrev_specs_begin(struct abbrev_spec_iter *it, const struct dwarf_sections *secs,
                        const struct abbrev_entry *e);
/* false at the (0, 0) terminator or on malformed data. */
bool abbrev_specs_next(struct abbrev_spec_iter *it, uint64_t *attr, uint64_t *form, int64_t *implicit_const);

#endif
