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

/* Where the table at offset ends, reading only [offset, limit): false when
 * it does not end there (or is malformed). */
static bool table_end(const struct dwarf_sections *secs, uint64_t offset, uint64_t limit, uint64_t *end)
{
    struct cursor c;
    cursor_init(&c, secs->abbrev.data, (size_t)limit, secs->big_endian);
    cursor_seek(&c, (size_t)offset);
    while (cursor_ok(&c) && !cursor_at_end(&c)) {
        if (cursor_uleb128(&c) == 0) {
            *end = c.pos;
            return cursor_ok(&c);
        }
        cursor_uleb128(&c); /* tag */
        cursor_u8(&c);      /* children */
        struct abbrev_spec_iter it = { .c = c };
        uint64_t attr, form;
        int64_t ic;
        for (unsigned n = 0; abbrev_specs_next(&it, &attr, &form, &ic); n++)
            if (n > ABBREV_MAX_ATTRS)
                return false;
        c = it.c;
    }
    return false;
}

#define TABLE_WINDOW 4096

bool abbrev_ensure_table(const struct dwarf_sections *secs, uint64_t offset)
{
    const struct dwarf_span *s = &secs->abbrev;
    if (!s->map)
        return true;
    if (offset >= s->size)
        return false;
    /* A window that doubles until the table ends inside it, then just the
     * table, so a small budget keeps exactly the unit's table. */
    uint64_t window = TABLE_WINDOW, end;
    for (;;) {
        uint64_t limit = s->size - offset < window ? s->size : offset + window;
        if (!dwarf_span_ensure(s, offset, limit - offset))
            return false;
        if (table_end(secs, offset, limit, &end))
            return dwarf_span_ensure(s, offset, end - offset);
        if (limit == s->size)
            return true; /* malformed: the parsers find out themselves */
        window *= 2;
    }
}

bool abbrev_table_load(struct abbrev_table *t, const struct dwarf_sections *secs, uint64_t offset)
{
    t->count = 0;
    t->offset = offset;
    t->loaded = true;
    if (!secs->abbrev.data || offset >= secs->abbrev.size || !abbrev_ensure_table(secs, offset))
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
