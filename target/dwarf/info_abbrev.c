#include "target/dwarf/info_abbrev.h"

#include <stdlib.h>

#include "shared/xalloc.h"
#include "target/dwarf/info_constants.h"

void abbrev_specs_begin(struct abbrev_spec_iter *it, const struct dwarf_sections *secs,
                        const struct abbrev_entry *e)
{
    cursor_init(&it->c, secs->abbrev.data, secs->abbrev.size, secs->big_endian);
    cursor_seek(&it->c, e->specs);
}

bool abbrev_specs_next(struct abbrev_spec_iter *it, uint64_t *attr, uint64_t *form, int64_t *implicit_const)
{
    *attr = cursor_uleb128(&it->c);
    *form = cursor_uleb128(&it->c);
    *implicit_const = 0;
    if (*form == DW_FORM_implicit_const)
        *implicit_const = cursor_sleb128(&it->c);
    return cursor_ok(&it->c) && (*attr != 0 || *form != 0);
}

bool abbrev_table_load(struct abbrev_table *t, const struct dwarf_sections *secs, uint64_t offset)
{
    t->count = 0;
    t->offset = offset;
    t->loaded = true;
    if (!secs->abbrev.data || offset >= secs->abbrev.size)
        return false;
    struct cursor c;
    cursor_init(&c, secs->abbrev.data, secs->abbrev.size, secs->big_endian);
    cursor_seek(&c, (size_t)offset);
    while (cursor_ok(&c) && !cursor_at_end(&c)) {
        uint64_t code = cursor_uleb128(&c);
        if (code == 0)
            return cursor_ok(&c);
        struct abbrev_entry e = { .code = code };
        e.tag = cursor_uleb128(&c);
        e.has_children = cursor_u8(&c) != 0;
        e.specs = c.pos;
        struct abbrev_spec_iter it = { .c = c };
        uint64_t attr, form;
        int64_t ic;
        unsigned attrs = 0;
        while (abbrev_specs_next(&it, &attr, &form, &ic))
            if (++attrs > ABBREV_MAX_ATTRS)
                return false;
        if (!cursor_ok(&it.c))
            return false;
        c = it.c;
        if (t->count == t->cap) {
            t->cap = t->cap ? t->cap * 2 : 64;
            t->entries = xreallocarray(t->entries, t->cap, sizeof(*t->entries));
        }
        t->entries[t->count++] = e;
    }
    return false;
}

const struct abbrev_entry *abbrev_table_find(const struct abbrev_table *t, uint64_t code)
{
    /* Producers number abbreviations 1, 2, 3...: try the direct slot. */
    if (code >= 1 && code <= t->count && t->entries[code - 1].code == code)
        return &t->entries[code - 1];
    for (size_t i = 0; i < t->count; i++)
        if (t->entries[i].code == code)
            return &t->entries[i];
    return NULL;
}

void abbrev_table_free(struct abbrev_table *t)
{
    free(t->entries);
    t->entries = NULL;
    t->count = t->cap = 0;
    t->loaded = false;
}
