#include "target/dwarf/line_object.h"

#include <stdlib.h>

#include "shared/xalloc.h"
#include "target/dwarf/info_inline.h"
#include "target/dwarf/info_stream.h"

struct line_object {
    struct elf_blob line, line_str, str;
    struct line_index *index;
    struct inline_index *inlines;   /* NULL unless asked for */
};

/* Loads a section if present; an absent or unreadable one stays empty. */
static void load(struct elf_file *f, const char *name, struct elf_blob *blob, struct dwarf_span *span)
{
    blob->data = NULL;
    blob->size = 0;
    const struct elf_section *s = elf_file_find_section(f, name);
    if (!s || elf_file_load_section(f, s, blob) != 0) {
        blob->data = NULL;
        blob->size = 0;
    }
    span->data = blob->data;
    span->size = blob->size;
}

/* Walks .debug_info one unit at a time (info_stream), feeding the line
 * index (comp_dir) and the function index: only one unit is in memory. */
static void index_units(struct line_object *o, struct elf_file *f, struct dwarf_sections *secs, bool inline_names)
{
    struct elf_blob abbrev, str_offsets, addr = { 0 }, ranges = { 0 }, rnglists = { 0 };
    load(f, ".debug_str", &o->str, &secs->str);
    load(f, ".debug_abbrev", &abbrev, &secs->abbrev);
    load(f, ".debug_str_offsets", &str_offsets, &secs->str_offsets);
    if (inline_names) {
        load(f, ".debug_addr", &addr, &secs->addr);
        load(f, ".debug_ranges", &ranges, &secs->ranges);
        load(f, ".debug_rnglists", &rnglists, &secs->rnglists);
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
        line_index_add_unit(o->index, &unit, 0);
        if (o->inlines)
            inline_index_add_unit(o->inlines, &unit, 0, offset);
    }
    info_stream_close(units);
    line_index_finish(o->index);
    if (o->inlines)
        inline_index_finish(o->inlines);
    elf_blob_free(&abbrev);
    elf_blob_free(&str_offsets);
    elf_blob_free(&addr);
    elf_blob_free(&ranges);
    elf_blob_free(&rnglists);
    /* comp_dir strings and names were copied into the indexes; .debug_str
     * stays only when a line table names its files through it. */
    if (line_index_release_debug_str(o->index))
        elf_blob_free(&o->str);
}

struct line_object *line_object_open(struct elf_file *f, bool inline_names)
{
    struct line_object *o = xcalloc(1, sizeof(*o));
    struct dwarf_sections secs = { .big_endian = elf_file_big_endian(f) };
    load(f, ".debug_line", &o->line, &secs.line);
    if (!o->line.data) {
        free(o);
        return NULL;
    }
    load(f, ".debug_line_str", &o->line_str, &secs.line_str);
    /* DWARF 5 line tables name their compilation directory themselves, so
     * without function names .debug_info is not read at all. */
    bool needs_str;
    if (!inline_names && line_section_self_contained(&secs, &needs_str)) {
        if (needs_str)
            load(f, ".debug_str", &o->str, &secs.str);
        o->index = line_index_build(&secs);
        return o;
    }
    index_units(o, f, &secs, inline_names);
    return o;
}

void line_object_close(struct line_object *o)
{
    if (!o)
        return;
    line_index_free(o->index);
    inline_index_free(o->inlines);
    elf_blob_free(&o->line);
    elf_blob_free(&o->line_str);
    elf_blob_free(&o->str);
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
    return sizeof(*o) + o->line.size + o->line_str.size + o->str.size + line_index_memory(o->index) +
           (o->inlines ? inline_index_memory(o->inlines) : 0);
}
