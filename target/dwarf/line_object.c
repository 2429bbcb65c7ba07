#include "target/dwarf/line_object.h"

#include <stdlib.h>

#include "shared/xalloc.h"
#include "target/dwarf/info_inline.h"
#include "target/dwarf/info_stream.h"
#include "target/elf/elf_section_map.h"

/* Bytes of each section kept resident (elf_section_map.h).  .debug_line
 * stays for lookups, which decode one line program at a time; the others
 * serve the walk over .debug_info, which reads them unit by unit, mostly
 * forward.  Strings are read in no order and are small: kept whole. */
#define LINE_BUDGET (32u * 1024)
/* After the index is built: lookups come back to the same few line
 * programs (each miss inflates up to a checkpoint span again). */
#define LINE_LOOKUP_BUDGET (128u * 1024)
#define ABBREV_BUDGET (16u * 1024)
#define RANGES_BUDGET (16u * 1024)
#define WHOLE 0

struct line_object {
    struct section_map *line, *line_str, *str;
    struct line_index *index;
    struct inline_index *inlines;   /* NULL unless asked for */
};

/* Maps a section if present; an absent or unreadable one stays empty. */
static struct section_map *load(struct elf_file *f, const char *name, size_t budget, struct dwarf_span *span)
{
    const struct elf_section *s = elf_file_find_section(f, name);
    struct section_map *m = s ? section_map_open(f, s, budget, NULL) : NULL;
    span->data = m ? section_map_data(m) : NULL;
    span->size = m ? section_map_size(m) : 0;
    span->map = m;
    return m;
}

/* Walks .debug_info one unit at a time (info_stream), feeding the line
 * index (comp_dir) and the function index: only one unit is in memory. */
static void index_units(struct line_object *o, struct elf_file *f, struct dwarf_sections *secs, bool inline_names)
{
    struct section_map *abbrev, *str_offsets, *addr = NULL, *ranges = NULL, *rnglists = NULL;
    o->str = load(f, ".debug_str", WHOLE, &secs->str);
    abbrev = load(f, ".debug_abbrev", ABBREV_BUDGET, &secs->abbrev);
    str_offsets = load(f, ".debug_str_offsets", WHOLE, &secs->str_offsets);
    if (inline_names) {
        addr = load(f, ".debug_addr", WHOLE, &secs->addr);
        ranges = load(f, ".debug_ranges", RANGES_BUDGET, &secs->ranges);
        rnglists = load(f, ".debug_rnglists", RANGES_BUDGET, &secs->rnglists);
        o->inlines = inline_index_new();
    }
    o->index = line_index_new(secs);
    struct info_stream *units = info_stream_open(f);
    const uint8_t *data;
    size_t size;
    uint64_t offset;
    while (units && info_stream_next(units, &data, &size, &offset)) {
        struct dwarf_sections unit = *secs;
        unit.info.data = data;
        unit.info.size = size;
        unit.info.map = NULL;
        line_index_add_unit(o->index, &unit, 0);
        if (o->inlines)
            inline_index_add_unit(o->inlines, &unit, 0, offset);
    }
    info_stream_close(units);
    section_map_close(abbrev);
    section_map_close(str_offsets);
    section_map_close(addr);
    section_map_close(ranges);
    section_map_close(rnglists);
    line_index_finish(o->index);
    /* comp_dir strings and names were copied into the indexes; .debug_str
     * stays only when a line table names its files through it.  Given
     * back (with the line map's stream) before the function index is
     * finished, which needs neither and is the peak of indexing. */
    if (line_index_release_debug_str(o->index)) {
        section_map_close(o->str);
        o->str = NULL;
    }
    section_map_park(o->line);
    if (o->inlines)
        inline_index_finish(o->inlines);
}

struct line_object *line_object_open(struct elf_file *f, bool inline_names)
{
    struct line_object *o = xcalloc(1, sizeof(*o));
    struct dwarf_sections secs = { .big_endian = elf_file_big_endian(f) };
    o->line = load(f, ".debug_line", LINE_BUDGET, &secs.line);
    if (!o->line) {
        free(o);
        return NULL;
    }
    o->line_str = load(f, ".debug_line_str", WHOLE, &secs.line_str);
    /* DWARF 5 line tables name their compilation directory themselves, so
     * without function names .debug_info is not read at all. */
    bool needs_str;
    if (!inline_names && line_section_self_contained(&secs, &needs_str)) {
        if (needs_str)
            o->str = load(f, ".debug_str", WHOLE, &secs.str);
        o->index = line_index_build(&secs);
    } else {
        index_units(o, f, &secs, inline_names);
    }
    /* Lookups decode a program now and then: the stream is made again
     * when one needs it. */
    section_map_park(o->line);
    section_map_set_budget(o->line, LINE_LOOKUP_BUDGET);
    return o;
}

void line_object_close(struct line_object *o)
{
    if (!o)
        return;
    line_index_free(o->index);
    inline_index_free(o->inlines);
    section_map_close(o->line);
    section_map_close(o->line_str);
    section_map_close(o->str);
    free(o);
}

bool line_object_lookup(struct line_object *o, uint64_t link_vaddr, struct line_location *out)
{
    return line_index_lookup(o->index, link_vaddr, out);
}

struct line_index *line_object_index(struct line_object *o) { return o->index; }

const char *line_object_inline_name(const struct line_object *o, uint64_t link_vaddr, uint64_t lowest)
{
    return o->inlines ? inline_index_lookup(o->inlines, link_vaddr, lowest) : NULL;
}

size_t line_object_inline_chain(const struct line_object *o, uint64_t link_vaddr, uint64_t lowest,
                                struct inline_frame *out, size_t max)
{
    return o->inlines ? inline_index_chain(o->inlines, link_vaddr, lowest, out, max) : 0;
}

const char *line_object_call_target(const struct line_object *o, uint64_t return_pc, bool *tail)
{
    return o->inlines ? inline_index_call_target(o->inlines, return_pc, tail) : NULL;
}

size_t line_object_tail_calls(const struct line_object *o, const char *caller, struct inline_tail_call *out,
                              size_t max)
{
    return o->inlines ? inline_index_tail_calls(o->inlines, caller, out, max) : 0;
}

bool line_object_file_name(struct line_object *o, uint64_t line_offset, uint64_t file, char *buf, size_t len)
{
    return line_index_file_name(o->index, line_offset, file, buf, len);
}

size_t line_object_memory(const struct line_object *o)
{
    return sizeof(*o) + (o->line ? section_map_memory(o->line) : 0) +
           (o->line_str ? section_map_memory(o->line_str) : 0) + (o->str ? section_map_memory(o->str) : 0) +
           line_index_memory(o->index) +
           (o->inlines ? inline_index_memory(o->inlines) : 0);
}
