#include "target/dwarf/unit_index.h"

#include <stdlib.h>

#include "shared/xalloc.h"
#include "target/dwarf/info_aranges.h"
#include "target/dwarf/info_stream.h"
#include "target/elf/elf_section_map.h"

struct unit_entry {
    uint64_t offset;              /* of the unit in .debug_info */
    struct inline_index *index;   /* NULL: the unit could not be read */
    struct line_index *lines;     /* NULL: nor its line program named */
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
    for (size_t i = 0; i < u->count; i++) {
        inline_index_free(u->units[i].index);
        line_index_free(u->units[i].lines);
    }
    info_stream_close(u->info);
    aranges_free(&u->aranges);
    free(u);
}

/* Its line program alone, named through the unit DIE (comp_dir), as the
 * whole walk adds each unit's: NULL when the unit names none (an index
 * with no unit would read every program of .debug_line). */
static struct line_index *index_lines(const struct dwarf_sections *unit)
{
    struct line_index *lines = line_index_new(unit);
    line_index_add_unit(lines, unit, 0);
    if (line_index_unit_count(lines) == 0) {
        line_index_free(lines);
        return NULL;
    }
    line_index_finish(lines);
    return lines;
}

/* The inflate states go until the next lookup: lookups come now and then. */
static void park(struct unit_index *u)
{
    info_stream_park(u->info);
    const struct dwarf_span *read[] = { &u->secs->abbrev, &u->secs->str, &u->secs->str_offsets, &u->secs->addr,
                                        &u->secs->ranges, &u->secs->rnglists, &u->secs->line };
    for (size_t i = 0; i < sizeof(read) / sizeof(read[0]); i++)
        section_map_park(read[i]->map);
}

/* Walks the one unit at offset, as line_object's whole walk does each:
 * the unit alone in the info span, span_base its section offset. */
static void index_unit(struct unit_index *u, struct unit_entry *e)
{
    const uint8_t *data;
    size_t size;
    uint64_t at;
    info_stream_seek(u->info, e->offset);
    if (!info_stream_next(u->info, &data, &size, &at) || at != e->offset)
        return;
    struct dwarf_sections unit = *u->secs;
    unit.info = (struct dwarf_span){ .data = data, .size = size };
    e->index = inline_index_new();
    inline_index_add_unit(e->index, &unit, 0, e->offset);
    inline_index_finish(e->index);
    e->lines = index_lines(&unit);
}

static const struct unit_entry *entry_of(const struct unit_index *u, uint64_t offset)
{
    for (size_t i = 0; i < u->count; i++)
        if (u->units[i].offset == offset)
            return &u->units[i];
    return NULL;
}

static const struct unit_entry *entry_at(struct unit_index *u, uint64_t address)
{
    uint64_t offset;
    if (!aranges_find(&u->aranges, address, &offset))
        return NULL;
    const struct unit_entry *known = entry_of(u, offset);
    if (known)
        return known;
    if (u->count == UNIT_INDEX_MAX)
        return NULL;
    struct unit_entry *e = &u->units[u->count++];
    e->offset = offset;
    index_unit(u, e);
    park(u);
    return e;
}

static int offset_order(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void unit_index_prefetch(struct unit_index *u, const uint64_t *addresses, size_t n)
{
    if (!u || n == 0)
        return;
    uint64_t *want = xreallocarray(NULL, n, sizeof(*want));
    size_t nwant = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t offset;
        if (aranges_find(&u->aranges, addresses[i], &offset) && !entry_of(u, offset))
            want[nwant++] = offset;
    }
    qsort(want, nwant, sizeof(*want), offset_order);
    size_t unique = 0;
    for (size_t i = 0; i < nwant; i++)
        if (unique == 0 || want[unique - 1] != want[i])
            want[unique++] = want[i];
    /* All or none: past the cap the caller's whole walk answers anyway. */
    if (unique > 0 && u->count + unique <= UNIT_INDEX_MAX) {
        for (size_t i = 0; i < unique; i++) {
            struct unit_entry *e = &u->units[u->count++];
            e->offset = want[i];
            index_unit(u, e);
        }
        park(u);
    }
    free(want);
}

const struct inline_index *unit_index_at(struct unit_index *u, uint64_t address)
{
    const struct unit_entry *e = entry_at(u, address);
    return e ? e->index : NULL;
}

struct line_index *unit_index_lines_at(struct unit_index *u, uint64_t address)
{
    const struct unit_entry *e = entry_at(u, address);
    return e ? e->lines : NULL;
}

bool unit_index_file_name(struct unit_index *u, uint64_t line_offset, uint64_t file, char *buf, size_t len,
                          bool *known)
{
    *known = false;
    for (size_t i = 0; i < u->count; i++) {
        struct line_index *lines = u->units[i].lines;
        if (lines && line_index_has_unit(lines, line_offset)) {
            *known = true;
            return line_index_file_name(lines, line_offset, file, buf, len);
        }
    }
    return false;
}

size_t unit_index_count(const struct unit_index *u) { return u->count; }

size_t unit_index_memory(const struct unit_index *u)
{
    size_t n = sizeof(*u) + aranges_memory(&u->aranges) + info_stream_memory(u->info);
    for (size_t i = 0; i < u->count; i++)
        n += (u->units[i].index ? inline_index_memory(u->units[i].index) : 0) +
             (u->units[i].lines ? line_index_memory(u->units[i].lines) : 0);
    return n;
}
