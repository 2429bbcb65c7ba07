#include "target/dwarf/line_object.h"

#include <stdlib.h>

#include "shared/xalloc.h"
#include "target/dwarf/info_inline.h"
#include "target/dwarf/info_stream.h"
#include "target/dwarf/unit_index.h"
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

/* The sections a DIE walk reads besides .debug_info. */
struct die_maps {
    struct section_map *abbrev, *str, *str_offsets, *addr, *ranges, *rnglists;
};

struct line_object {
    struct section_map *line, *line_str, *str;
    struct line_index *index;
    /* The function index of the whole object: NULL unless asked for, and
     * with units, until a lookup the units cannot answer needs it. */
    struct inline_index *inlines;
    /* Function indexes per unit (unit_index.h); NULL when not used.  Kept
     * once the whole index exists: names they handed out stay valid. */
    struct unit_index *units;
    struct elf_file *f;
    struct dwarf_sections die_secs; /* for units and the whole walk after them */
    struct die_maps maps;
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

static void load_die_maps(struct elf_file *f, struct dwarf_sections *secs, struct die_maps *m, bool inline_names)
{
    m->abbrev = load(f, ".debug_abbrev", ABBREV_BUDGET, &secs->abbrev);
    m->str_offsets = load(f, ".debug_str_offsets", WHOLE, &secs->str_offsets);
    if (inline_names) {
        m->addr = load(f, ".debug_addr", WHOLE, &secs->addr);
        m->ranges = load(f, ".debug_ranges", RANGES_BUDGET, &secs->ranges);
        m->rnglists = load(f, ".debug_rnglists", RANGES_BUDGET, &secs->rnglists);
    }
}

static void close_die_maps(struct die_maps *m)
{
    section_map_close(m->abbrev);
    section_map_close(m->str_offsets);
    section_map_close(m->addr);
    section_map_close(m->ranges);
    section_map_close(m->rnglists);
    m->abbrev = m->str_offsets = m->addr = m->ranges = m->rnglists = NULL;
}

/* Walks .debug_info one unit at a time (info_stream), feeding the line
 * index (comp_dir) and the function index: only one unit is in memory. */
static void index_units(struct line_object *o, struct elf_file *f, struct dwarf_sections *secs, bool inline_names)
{
    struct die_maps maps = { 0 };
    o->str = load(f, ".debug_str", WHOLE, &secs->str);
    load_die_maps(f, secs, &maps, inline_names);
    if (inline_names)
        o->inlines = inline_index_new();
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
    close_die_maps(&maps);
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

/* Lines and function names one unit at a time (unit_index.h): nothing
 * reads all of .debug_info, nor all of .debug_line, unless a lookup the
 * units cannot answer comes.  The DIE walk's sections stay mapped (within
 * their budgets) for the units indexed later and for that walk. */
static bool open_units(struct line_object *o, struct elf_file *f, const struct dwarf_sections *secs)
{
    o->die_secs = *secs;
    load(f, ".debug_str", WHOLE, &o->die_secs.str);
    o->maps.str = o->die_secs.str.map;
    load_die_maps(f, &o->die_secs, &o->maps, true);
    o->units = unit_index_open(f, &o->die_secs);
    if (!o->units) {
        close_die_maps(&o->maps);
        section_map_close(o->maps.str);
        o->maps.str = NULL;
        return false;
    }
    o->f = f;
    return true;
}

/* The whole walk of index_units over the sections open_units mapped,
 * for what the units cannot answer: the function index, or the line
 * index (each built the first time one is needed). */
static void walk_all_units(struct line_object *o, struct inline_index *inlines, struct line_index *lines)
{
    struct info_stream *units = info_stream_open(o->f);
    const uint8_t *data;
    size_t size;
    uint64_t offset;
    while (units && info_stream_next(units, &data, &size, &offset)) {
        struct dwarf_sections unit = o->die_secs;
        unit.info = (struct dwarf_span){ .data = data, .size = size };
        if (lines)
            line_index_add_unit(lines, &unit, 0);
        if (inlines)
            inline_index_add_unit(inlines, &unit, 0, offset);
    }
    info_stream_close(units);
}

static struct inline_index *whole_inlines(struct line_object *o)
{
    if (o->inlines || !o->units)
        return o->inlines;
    o->inlines = inline_index_new();
    walk_all_units(o, o->inlines, NULL);
    inline_index_finish(o->inlines);
    return o->inlines;
}

static struct line_index *whole_lines(struct line_object *o)
{
    if (!o->index) {
        o->index = line_index_new(&o->die_secs);
        walk_all_units(o, NULL, o->index);
        line_index_finish(o->index);
        section_map_park(o->line);
    }
    return o->index;
}

/* The function index that answers for address: its unit's while units
 * can, else the whole object's. */
static const struct inline_index *inlines_at(struct line_object *o, uint64_t address)
{
    const struct inline_index *idx = o->units && !o->inlines ? unit_index_at(o->units, address) : NULL;
    return idx ? idx : whole_inlines(o);
}

static bool lazy_wanted(void)
{
    /* Hidden switch for comparing both ways on the same object (selftest). */
    return !getenv("MEMTRACE_DWARF_WHOLE");
}

struct line_object *line_object_open_mode(struct elf_file *f, bool inline_names, bool lazy)
{
    struct line_object *o = xcalloc(1, sizeof(*o));
    struct dwarf_sections secs = { .big_endian = elf_file_big_endian(f) };
    o->line = load(f, ".debug_line", LINE_BUDGET, &secs.line);
    if (!o->line) {
        free(o);
        return NULL;
    }
    o->line_str = load(f, ".debug_line_str", WHOLE, &secs.line_str);
    /* With function names, both indexes come one unit at a time when
     * .debug_aranges allows (units, then whole_lines and whole_inlines
     * for what they cannot answer); else from one walk over every unit.
     * Without, DWARF 5 line tables name their compilation directory
     * themselves: the line index needs no .debug_info. */
    bool needs_str;
    if (inline_names && lazy && open_units(o, f, &secs)) {
        /* o->index stays NULL until whole_lines */
    } else if (!inline_names && line_section_self_contained(&secs, &needs_str)) {
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

struct line_object *line_object_open(struct elf_file *f, bool inline_names)
{
    return line_object_open_mode(f, inline_names, lazy_wanted());
}

void line_object_close(struct line_object *o)
{
    if (!o)
        return;
    line_index_free(o->index);
    inline_index_free(o->inlines);
    unit_index_close(o->units);
    close_die_maps(&o->maps);
    section_map_close(o->maps.str);
    section_map_close(o->line);
    section_map_close(o->line_str);
    section_map_close(o->str);
    free(o);
}

/* The line index that answers for address: its unit's, else the whole
 * object's. */
static struct line_index *lines_at(struct line_object *o, uint64_t address)
{
    struct line_index *idx = o->units ? unit_index_lines_at(o->units, address) : NULL;
    return idx ? idx : o->units ? whole_lines(o) : o->index;
}

void line_object_prefetch(struct line_object *o, const uint64_t *link_vaddrs, size_t n)
{
    /* Once the whole walk happened, it answers everything. */
    if (o && o->units && !o->inlines && !o->index)
        unit_index_prefetch(o->units, link_vaddrs, n);
}

bool line_object_lookup(struct line_object *o, uint64_t link_vaddr, struct line_location *out)
{
    return line_index_lookup(lines_at(o, link_vaddr), link_vaddr, out);
}

struct line_index *line_object_index(struct line_object *o) { return o->units ? whole_lines(o) : o->index; }

bool line_object_lazy(const struct line_object *o, size_t *units)
{
    if (units)
        *units = o->units ? unit_index_count(o->units) : 0;
    return o->units && !o->inlines && !o->index;
}

const char *line_object_inline_name(struct line_object *o, uint64_t link_vaddr, uint64_t lowest)
{
    const struct inline_index *idx = inlines_at(o, link_vaddr);
    return idx ? inline_index_lookup(idx, link_vaddr, lowest) : NULL;
}

size_t line_object_inline_chain(struct line_object *o, uint64_t link_vaddr, uint64_t lowest,
                                struct inline_frame *out, size_t max)
{
    const struct inline_index *idx = inlines_at(o, link_vaddr);
    return idx ? inline_index_chain(idx, link_vaddr, lowest, out, max) : 0;
}

size_t line_object_call_candidates(struct line_object *o, uint64_t return_pc, const char **out, size_t max)
{
    if (!o->units || o->inlines || return_pc == 0)
        return SIZE_MAX;
    /* The call's own bytes end at return_pc: its site is in the unit
     * holding return_pc - 1 (return_pc's own unit is asked too, in case a
     * unit ends with the call). */
    const struct inline_index *at = unit_index_at(o->units, return_pc - 1);
    const struct inline_index *after = unit_index_at(o->units, return_pc);
    if (!at || !after)
        return SIZE_MAX;
    size_t n = inline_index_calls_at(at, return_pc, out, max);
    if (after != at && n <= max)
        n += inline_index_calls_at(after, return_pc, out ? out + n : NULL, max - n);
    return n <= max ? n : SIZE_MAX;
}

const char *line_object_call_target(struct line_object *o, uint64_t return_pc, bool *tail)
{
    const char *only = NULL;
    size_t n = line_object_call_candidates(o, return_pc, &only, 1);
    if (n <= 1) {
        if (tail)
            *tail = false;
        /* One candidate: the whole index answers it too, or NULL when its
         * filter over every unit drops the call (a function defined here
         * that makes no jumps).  Either way a search from it finds no
         * jump (line_object_tail_calls), so the unit's answer will do. */
        return n ? only : NULL;
    }
    const struct inline_index *idx = whole_inlines(o);
    return idx ? inline_index_call_target(idx, return_pc, tail) : NULL;
}

/* By name, over every unit that may define a function of that name (a
 * static one in several): only the whole index knows them all. */
size_t line_object_tail_calls(struct line_object *o, const char *caller, struct inline_tail_call *out,
                              size_t max)
{
    const struct inline_index *idx = whole_inlines(o);
    return idx ? inline_index_tail_calls(idx, caller, out, max) : 0;
}

size_t line_object_tail_calls_at(struct line_object *o, const char *caller, const uint64_t *starts, size_t nstarts,
                                 struct inline_tail_call *out, size_t max)
{
    enum { UNITS_AT_MOST = 8 };
    const struct inline_index *seen[UNITS_AT_MOST];
    size_t nseen = 0, n = 0;
    if (!o->units || o->inlines || nstarts == 0)
        return SIZE_MAX;
    for (size_t i = 0; i < nstarts; i++) {
        const struct inline_index *idx = unit_index_at(o->units, starts[i]);
        if (!idx)
            return SIZE_MAX;
        bool again = false;
        for (size_t j = 0; j < nseen; j++)
            again |= seen[j] == idx;
        if (again)
            continue;
        if (nseen == UNITS_AT_MOST)
            return SIZE_MAX;
        seen[nseen++] = idx;
        n += inline_index_tail_calls(idx, caller, out + n, max - n);
        /* at max, which jumps the whole index lists first decides */
        if (n >= max)
            return SIZE_MAX;
    }
    return n;
}

size_t line_object_call_pcs(struct line_object *o, uint64_t *out, size_t max)
{
    const struct inline_index *idx = whole_inlines(o);
    return idx ? inline_index_call_pcs(idx, out, max) : 0;
}

bool line_object_file_name(struct line_object *o, uint64_t line_offset, uint64_t file, char *buf, size_t len)
{
    bool known = false;
    if (o->units) {
        bool found = unit_index_file_name(o->units, line_offset, file, buf, len, &known);
        if (known)
            return found;
    }
    return line_index_file_name(line_object_index(o), line_offset, file, buf, len);
}

static size_t map_memory(const struct section_map *m) { return m ? section_map_memory(m) : 0; }

size_t line_object_memory(const struct line_object *o)
{
    const struct die_maps *m = &o->maps;
    return sizeof(*o) + map_memory(o->line) + map_memory(o->line_str) + map_memory(o->str) +
           (o->index ? line_index_memory(o->index) : 0) + (o->inlines ? inline_index_memory(o->inlines) : 0) +
           (o->units ? unit_index_memory(o->units) : 0) + map_memory(m->abbrev) + map_memory(m->str) +
           map_memory(m->str_offsets) + map_memory(m->addr) + map_memory(m->ranges) + map_memory(m->rnglists);
}
