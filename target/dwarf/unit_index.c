#include "target/dwarf/unit_index.h"

#include <stdlib.h>

#include "shared/xalloc.h"
#include "target/dwarf/info_aranges.h"
#include "target/dwarf/info_stream.h"
#include "target/elf/elf_section_map.h"

struct unit_entry {
    uint64_t offset;              /* of the unit in .debug_info */
    struct inline_index *index;   /* NULL: the unit could not be read */
};

struct unit_index {
    const struct dwarf_sections *secs;
    struct aranges aranges;
    struct info_stream *info;
    struct unit_entry units[UNIT_INDEX_MAX];
    size_t count;
};

/* The aranges, parsed from the section inflated whole (libc's is 18 KiB
 * compressed) and then given back. */
static bool load_aranges(struct elf_file *f, struct aranges *out)
{
    const struct elf_section *s = elf_file_find_section(f, ".debug_aranges");
    struct section_map *m = s ? section_map_open(f, s, 0, NULL) : NULL;
    if (!m)
        return false;
    bool ok = false;
    size_t size = section_map_size(m);
    if (size && section_map_ensure(m, 0, size)) {
        struct dwarf_span span = { .data = section_map_data(m), .size = size };
        ok = aranges_parse(&span, elf_file_big_endian(f), out);
    }
    section_map_close(m);
    if (ok && out->overlap) {
        aranges_free(out);
        ok = false;
    }
    return ok;
}

struct unit_index *unit_index_open(struct elf_file *f, const struct dwarf_sections *secs)
{
    struct aranges a;
    if (!load_aranges(f, &a))
        return NULL;
    struct info_stream *info = info_stream_open(f);
    if (!info) {
        aranges_free(&a);
        return NULL;
    }
    struct unit_index *u = xcalloc(1, sizeof(*u));
    u->secs = secs;
    u->aranges = a;
    u->info = info;
    return u;
}

void unit_index_close(struct unit_index *u)
{
    if (!u)
        return;
    for (size_t i = 0; i < u->count; i++)
        inline_index_free(u->units[i].index);
    info_stream_close(u->info);
    aranges_free(&u->aranges);
    free(u);
}

/* Walks the one unit at offset, as line_object's whole walk does each:
 * the unit alone in the info span, span_base its section offset. */
static struct inline_index *index_unit(struct unit_index *u, uint64_t offset)
{
    const uint8_t *data;
    size_t size;
    uint64_t at;
    info_stream_seek(u->info, offset);
    if (!info_stream_next(u->info, &data, &size, &at) || at != offset)
        return NULL;
    struct dwarf_sections unit = *u->secs;
    unit.info = (struct dwarf_span){ .data = data, .size = size };
    struct inline_index *idx = inline_index_new();
    inline_index_add_unit(idx, &unit, 0, offset);
    inline_index_finish(idx);
    /* Lookups come now and then: the inflate states go until the next. */
    info_stream_park(u->info);
    const struct dwarf_span *read[] = { &u->secs->abbrev, &u->secs->str, &u->secs->str_offsets,
                                        &u->secs->addr, &u->secs->ranges, &u->secs->rnglists };
    for (size_t i = 0; i < sizeof(read) / sizeof(read[0]); i++)
        section_map_park(read[i]->map);
    return idx;
}

const struct inline_index *unit_index_at(struct unit_index *u, uint64_t address)
{
    uint64_t offset;
    if (!aranges_find(&u->aranges, address, &offset))
        return NULL;
    for (size_t i = 0; i < u->count; i++)
        if (u->units[i].offset == offset)
            return u->units[i].index;
    if (u->count == UNIT_INDEX_MAX)
        return NULL;
    struct unit_entry *e = &u->units[u->count++];
    e->offset = offset;
    e->index = index_unit(u, offset);
    return e->index;
}

size_t unit_index_count(const struct unit_index *u) { return u->count; }

size_t unit_index_memory(const struct unit_index *u)
{
    size_t n = sizeof(*u) + aranges_memory(&u->aranges) + info_stream_memory(u->info);
    for (size_t i = 0; i < u->count; i++)
        n += u->units[i].index ? inline_index_memory(u->units[i].index) : 0;
    return n;
}
