#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* Building the function index of info_inline.h: one walk over every DIE
 * of .debug_info, which gives the ranges of subprograms and inlined
 * subroutines (info_inline_ranges.c sorts and searches them) and the call
 * sites (info_call_sites.c).  Names are numbered by shared/intern.h. */
#include "target/dwarf/info_inline.h"

#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"
#include "target/dwarf/info_abbrev.h"
#include "target/dwarf/info_constants.h"
#include "target/dwarf/info_cu.h"
#include "target/dwarf/info_inline_internal.h"
#include "target/dwarf/info_ranges.h"

/* A unit being walked. */
struct unit_walk {
    const struct dwarf_sections *secs;
    const struct info_cu *cu;
    uint64_t span_base;           /* section offset of secs->info's first byte */
    const struct abbrev_table *abbrevs;
    struct range_unit ru;
    uint64_t str_offsets_base;
};

/* The attributes of one DIE that matter here. */
struct die_attrs {
    uint64_t tag;
    struct form_value low_pc, high_pc, ranges;
    uint64_t ranges_form;
    struct form_value name, linkage_name; /* strings resolved when used */
    bool has_name, has_linkage_name;
    uint64_t origin;              /* absolute .debug_info offset, 0 if none */
    uint64_t call_file, call_line;
    struct form_value return_pc;
    bool has_return_pc, tail_call;
    struct form_value base_low_pc;
    bool has_low, has_high, has_ranges;
};

/* Reference forms: unit-relative, except ref_addr (section offset). */
static uint64_t ref_target(const struct unit_walk *w, uint64_t form, const struct form_value *v)
{
    switch (form) {
    case DW_FORM_ref1:
    case DW_FORM_ref2:
    case DW_FORM_ref4:
    case DW_FORM_ref8:
    case DW_FORM_ref_udata:
        return w->cu->offset + v->u;
    case DW_FORM_ref_addr:
        /* A section offset: into our span's coordinates (0 if outside). */
        return v->u >= w->span_base ? v->u - w->span_base : 0;
    default:
        return 0;
    }
}

/* Reads the DIE at c (after its code was read as entry e). */
static bool read_die(const struct unit_walk *w, struct cursor *c, const struct abbrev_entry *e,
                     struct die_attrs *a)
{
    memset(a, 0, sizeof(*a));
    a->tag = e->tag;
    struct abbrev_spec_iter it;
    abbrev_specs_begin(&it, w->secs, e);
    uint64_t attr, form;
    int64_t ic;
    while (abbrev_specs_next(&it, &attr, &form, &ic)) {
        struct form_value v;
        if (!form_read(c, form, ic, &w->cu->unit, &v))
            return false;
        switch (attr) {
        case DW_AT_low_pc:
            a->low_pc = v;
            a->has_low = true;
            break;
        case DW_AT_high_pc:
            a->high_pc = v;
            a->has_high = true;
            break;
        case DW_AT_ranges:
            a->ranges = v;
            a->ranges_form = form;
            a->has_ranges = true;
            break;
        case DW_AT_name:
            a->name = v;
            a->has_name = true;
            break;
        case DW_AT_linkage_name:
        case DW_AT_MIPS_linkage_name:
            a->linkage_name = v;
            a->has_linkage_name = true;
            break;
        case DW_AT_abstract_origin:
        case DW_AT_specification:
            a->origin = ref_target(w, form, &v);
            break;
        case DW_AT_call_return_pc:
            a->return_pc = v;
            a->has_return_pc = true;
            break;
        case DW_AT_call_origin:
            a->origin = ref_target(w, form, &v);
            break;
        case DW_AT_call_tail_call:
        case DW_AT_GNU_tail_call:
            a->tail_call = form == DW_FORM_flag_present || v.u != 0;
            break;
        case DW_AT_call_file:
            if (v.kind == FORM_KIND_UNSIGNED || v.kind == FORM_KIND_SIGNED)
                a->call_file = v.u;
            break;
        case DW_AT_call_line:
            if (v.kind == FORM_KIND_UNSIGNED || v.kind == FORM_KIND_SIGNED)
                a->call_line = v.u;
            break;
        default:
            break;
        }
    }
    return cursor_ok(&it.c);
}

/* A DIE's own name: its linkage name when it has one, else DW_AT_name.
 * Only that string is read (.debug_str is read by range: one string
 * resident at a time is all a caller may count on). */
static const char *die_name(const struct unit_walk *w, const struct die_attrs *a)
{
    const char *s = NULL;
    if (a->has_linkage_name)
        s = form_string(&a->linkage_name, w->secs, &w->cu->unit, w->str_offsets_base);
    if (!s && a->has_name)
        s = form_string(&a->name, w->secs, &w->cu->unit, w->str_offsets_base);
    return s;
}

/* The name of the function a subprogram or inlined subroutine stands for: its own, or
 * its abstract origin's, or that one's declaration's (specification). */
static const char *origin_name(const struct unit_walk *w, uint64_t offset)
{
    for (int hops = 0; hops < 4 && offset; hops++) {
        /* Only references into the same unit: its abbreviations apply. */
        if (offset < w->cu->die_offset || offset >= w->cu->next_offset)
            return NULL;
        struct cursor c;
        cursor_init(&c, w->secs->info.data, w->secs->info.size, w->secs->big_endian);
        c.end = (size_t)w->cu->next_offset;
        cursor_seek(&c, (size_t)offset);
        const struct abbrev_entry *e = abbrev_table_find(w->abbrevs, cursor_uleb128(&c));
        struct die_attrs a;
        if (!e || !read_die(w, &c, e, &a))
            return NULL;
        const char *name = die_name(w, &a);
        if (name)
            return name;
        offset = a.origin;
    }
    return NULL;
}

static bool intern(struct inline_index *idx, const char *s, uint32_t *out)
{
    bool added;
    *out = interner_add_string(&idx->names, s, &added);
    return *out < NAMES_MAX;
}

struct emit_ctx {
    struct inline_index *idx;
    uint64_t *range_budget;
    uint32_t name;
    unsigned depth;
    uint32_t call_line, where;
};

/* 1 + the number of w (added when new); 0 when full. */
static uint32_t intern_where(struct inline_index *idx, struct call_where w)
{
    bool added;
    uint32_t n = interner_add(&idx->wheres, &w, sizeof(w), &added);
    return n < UINT32_MAX - 1 ? n + 1 : 0;
}

static void add_range(void *ctx, uint64_t lo, uint64_t hi)
{
    struct emit_ctx *e = ctx;
    struct inline_index *idx = e->idx;
    if (*e->range_budget == 0)
        return;
    (*e->range_budget)--;
    /* Discarded code is relocated to 0 (or to -1/-2 by lld). */
    if (lo == 0 || hi <= lo || hi - lo > UINT32_MAX || lo >= UINT64_MAX - 1)
        return;
    if (idx->count == idx->cap) {
        idx->cap = idx->cap ? idx->cap * 2 : 256;
        idx->ranges = xreallocarray(idx->ranges, idx->cap, sizeof(*idx->ranges));
    }
    idx->ranges[idx->count++] = (struct inline_range){
        .lo = lo, .size = (uint32_t)(hi - lo), .name_depth = e->name << 8 | (e->depth > 255 ? 255 : e->depth),
        .call_line = e->call_line, .where = e->where,
    };
}

static void add_function(struct inline_index *idx, const struct unit_walk *w, const struct die_attrs *a,
                         unsigned depth, uint64_t *range_budget)
{
    if (*range_budget == 0)
        return;
    if (!a->has_ranges && !(a->has_low && a->has_high))
        return; /* a declaration, or an abstract instance: no code */
    struct emit_ctx e = { .idx = idx, .depth = depth, .range_budget = range_budget };
    if (a->tag == DW_TAG_inlined_subroutine) {
        /* Without a line table (or beyond 4 GiB) the call site stays unknown. */
        struct call_where where = { .line_offset = UINT32_MAX };
        if (w->cu->has_stmt_list && w->cu->stmt_list < UINT32_MAX && a->call_file < UINT32_MAX &&
            a->call_line <= UINT32_MAX) {
            where = (struct call_where){ (uint32_t)w->cu->stmt_list, (uint32_t)a->call_file };
            e.call_line = (uint32_t)a->call_line;
        }
        e.where = intern_where(idx, where);
        if (!e.where)
            return; /* cannot happen with real data: 4 billion distinct call files */
    }
    const char *name = die_name(w, a);
    if (!name)
        name = origin_name(w, a->origin);
    if (!name || !intern(idx, name, &e.name))
        return;
    if (a->tag == DW_TAG_subprogram) {
        idx->cur_caller = e.name;
        idx->cur_depth = depth;
    }
    if (a->has_ranges) {
        unsigned max = *range_budget < 4096 ? (unsigned)*range_budget : 4096;
        range_list_walk(w->secs, &w->ru, a->ranges_form, &a->ranges, max, add_range, &e);
        return;
    }
    uint64_t lo, hi;
    if (!a->has_low || !a->has_high || !range_address(w->secs, &w->ru, &a->low_pc, &lo))
        return;
    if (a->high_pc.kind == FORM_KIND_UNSIGNED || a->high_pc.kind == FORM_KIND_SIGNED)
        hi = lo + a->high_pc.u;            /* DWARF 4+: a length */
    else if (!range_address(w->secs, &w->ru, &a->high_pc, &hi))
        return;
    add_range(&e, lo, hi);
}

static void add_call_site(struct inline_index *idx, const struct unit_walk *w, const struct die_attrs *a,
                          unsigned depth)
{
    if (idx->cur_caller == NO_NAME || depth <= idx->cur_depth)
        return; /* not inside a function with code */
    uint64_t pc;
    const struct form_value *at = a->has_return_pc ? &a->return_pc : a->has_low ? &a->low_pc : NULL;
    if (!at || !range_address(w->secs, &w->ru, at, &pc) || pc == 0)
        return;
    uint32_t target = NO_NAME;
    const char *name = a->origin ? origin_name(w, a->origin) : NULL;
    if (name && !intern(idx, name, &target))
        target = NO_NAME;
    call_sites_add(idx, (struct call_site){
        .return_pc = pc, .target = target, .caller = idx->cur_caller, .tail = a->tail_call,
    });
}

/* The unit DIE's bases, which its other DIEs' addresses need. */
static void read_unit_bases(const struct dwarf_sections *secs, const struct info_cu *cu, struct unit_walk *w)
{
    w->str_offsets_base = cu->unit.offset_size == 8 ? 16 : 8;
    w->ru.unit = cu->unit;
    struct cursor c;
    cursor_init(&c, secs->info.data, secs->info.size, secs->big_endian);
    c.end = (size_t)cu->next_offset;
    cursor_seek(&c, (size_t)cu->die_offset);
    const struct abbrev_entry *e = abbrev_table_find(w->abbrevs, cursor_uleb128(&c));
    if (!e)
        return;
    struct abbrev_spec_iter it;
    abbrev_specs_begin(&it, secs, e);
    uint64_t attr, form;
    int64_t ic;
    struct form_value low = { .kind = FORM_KIND_NONE };
    while (abbrev_specs_next(&it, &attr, &form, &ic)) {
        struct form_value v;
        if (!form_read(&c, form, ic, &cu->unit, &v))
            return;
        if (attr == DW_AT_low_pc)
            low = v;
        else if ((attr == DW_AT_addr_base || attr == DW_AT_GNU_addr_base) && v.kind == FORM_KIND_UNSIGNED)
            w->ru.addr_base = v.u;
        else if (attr == DW_AT_rnglists_base && v.kind == FORM_KIND_UNSIGNED)
            w->ru.rnglists_base = v.u;
        else if (attr == DW_AT_str_offsets_base && v.kind == FORM_KIND_UNSIGNED)
            w->str_offsets_base = v.u;
    }
    range_address(secs, &w->ru, &low, &w->ru.base);
}

static void index_unit(struct inline_index *idx, const struct dwarf_sections *secs, const struct info_cu *cu,
                       uint64_t span_base, uint64_t *range_budget)
{
    struct abbrev_table *abbrevs = &idx->abbrevs;
    if (!abbrevs->loaded || abbrevs->offset != cu->abbrev_offset)
        abbrev_table_load(abbrevs, secs, cu->abbrev_offset);
    struct unit_walk w = { .secs = secs, .cu = cu, .abbrevs = abbrevs, .span_base = span_base };
    read_unit_bases(secs, cu, &w);

    struct cursor c;
    cursor_init(&c, secs->info.data, secs->info.size, secs->big_endian);
    c.end = (size_t)cu->next_offset;
    cursor_seek(&c, (size_t)cu->die_offset);
    /* Every DIE takes at least one byte, so this ends with the unit. */
    unsigned depth = 0;
    idx->cur_caller = NO_NAME;
    idx->cur_depth = 0;
    while (cursor_ok(&c) && !cursor_at_end(&c)) {
        uint64_t code = cursor_uleb128(&c);
        if (code == 0) {
            if (depth > 0)
                depth--;
            if (depth <= idx->cur_depth)
                idx->cur_caller = NO_NAME;
            continue;
        }
        const struct abbrev_entry *e = abbrev_table_find(abbrevs, code);
        struct die_attrs a;
        if (!e || !read_die(&w, &c, e, &a))
            return;
        if (a.tag == DW_TAG_subprogram && depth <= idx->cur_depth)
            idx->cur_caller = NO_NAME; /* left the function */
        if (a.tag == DW_TAG_inlined_subroutine || a.tag == DW_TAG_subprogram)
            add_function(idx, &w, &a, depth, range_budget);
        else if (a.tag == DW_TAG_call_site || a.tag == DW_TAG_GNU_call_site)
            add_call_site(idx, &w, &a, depth);
        if (e->has_children)
            depth++;
    }
}

struct inline_index *inline_index_new(void)
{
    struct inline_index *idx = xcalloc(1, sizeof(struct inline_index));
    idx->cur_caller = NO_NAME;
    return idx;
}

void inline_index_add_unit(struct inline_index *idx, const struct dwarf_sections *secs, uint64_t offset,
                           uint64_t span_base)
{
    struct info_cu cu;
    if (!info_cu_read(secs, offset, &cu) || cu.tag == 0 || cu.unit_type == DW_UT_type ||
        cu.unit_type == DW_UT_split_type)
        return;
    /* Many DIEs may share one long range list: bound the work by the
     * unit's size (real units stay far below). */
    uint64_t range_budget = (cu.next_offset - cu.offset) + 4096;
    size_t site_first = idx->site_count, range_first = idx->count;
    index_unit(idx, secs, &cu, span_base, &range_budget);
    if (idx->site_count > site_first)
        call_sites_filter(idx, site_first, range_first);
    /* Calls of functions a later unit defines without jumps go too, now
     * and then, rather than all at the end: the array stays small. */
    if (idx->site_count >= 1024 && idx->site_count >= 2 * idx->sites_filtered) {
        call_sites_filter(idx, 0, 0);
        idx->sites_filtered = idx->site_count;
    }
}

void inline_index_finish(struct inline_index *idx)
{
    call_sites_finish(idx);
    abbrev_table_free(&idx->abbrevs);
    interner_seal(&idx->names);
    interner_seal(&idx->wheres);
    inline_ranges_sort(idx);
}

struct inline_index *inline_index_build(const struct dwarf_sections *secs)
{
    struct inline_index *idx = inline_index_new();
    uint64_t off = 0;
    while (off < secs->info.size) {
        struct info_cu cu;
        info_cu_read(secs, off, &cu);
        inline_index_add_unit(idx, secs, off, 0);
        if (cu.next_offset <= off)
            break;
        off = cu.next_offset;
    }
    inline_index_finish(idx);
    return idx;
}

void inline_index_free(struct inline_index *idx)
{
    if (!idx)
        return;
    free(idx->ranges);
    free(idx->sites);
    free(idx->calls);
    free(idx->jumps);
    interner_free(&idx->wheres);
    interner_free(&idx->names);
    abbrev_table_free(&idx->abbrevs);
    free(idx);
}

size_t inline_index_memory(const struct inline_index *idx)
{
    return sizeof(*idx) + idx->cap * sizeof(*idx->ranges) + interner_memory(&idx->names) +
           idx->site_cap * sizeof(*idx->sites) + idx->call_count * sizeof(*idx->calls) +
           idx->jump_count * sizeof(*idx->jumps) +
           interner_memory(&idx->wheres);
}

