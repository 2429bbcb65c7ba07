#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "target/dwarf/info_inline.h"

#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"
#include "target/dwarf/info_abbrev.h"
#include "target/dwarf/info_constants.h"
#include "target/dwarf/info_cu.h"
#include "target/dwarf/info_ranges.h"

struct inline_range {
    uint64_t lo;
    uint32_t size;
    /* Name offset in the pool << 8 | DIE depth (capped at 255): an inlined
     * call that is all of its caller's body has the caller's range, and
     * then the deeper one is the innermost. */
    uint32_t name_depth;
    /* Of an inlined subroutine: the line it was called from, and where
     * (1 + index in wheres); 0 for a subprogram. */
    uint32_t call_line, where;
};

/* A call_file: file number in the line table at line_offset (UINT32_MAX
 * when unknown).  Few distinct ones, shared by many ranges. */
struct call_where {
    uint32_t line_offset, file;
};

#define NAME_POOL_MAX (UINT32_MAX >> 8)

/* A DW_TAG_call_site: the call returning to return_pc calls target (a
 * name in the pool, NO_NAME if unknown), made by the function named
 * caller; tail when it is a jump (DW_AT_call_tail_call). */
#define NO_NAME UINT32_MAX
struct call_site {
    uint64_t return_pc;
    uint32_t target, caller;
    bool tail;
};

struct call_entry {
    uint32_t pc_offset, target;
};

struct inline_index {
    struct inline_range *ranges;
    size_t count, cap;
    struct call_site *sites;      /* while building */
    size_t site_count, site_cap;
    size_t sites_filtered;        /* site_count after the last whole filter */
    /* Then the calls (8 bytes each, by return_pc - call_base) and the
     * jumps (by caller name). */
    struct call_entry *calls;
    size_t call_count;
    uint64_t call_base;
    struct call_site *jumps;
    size_t jump_count;
    struct call_where *wheres;
    size_t where_count, where_cap;
    uint32_t *where_hash;         /* while building: 1 + index, 0 = empty */
    size_t where_hash_cap;
    uint32_t cur_caller;          /* while building: the subprogram being walked */
    unsigned cur_depth;
    char *pool;
    size_t pool_used, pool_cap;
    uint32_t *hash;           /* pool offsets + 1 (0 = empty), for dedupe */
    size_t hash_cap, names;
    struct abbrev_table abbrevs;  /* of the last unit, while building */
};

/* ---- name pool ------------------------------------------------------ */

static uint64_t hash_string(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

static void rehash(struct inline_index *idx, size_t cap)
{
    uint32_t *old = idx->hash;
    size_t old_cap = idx->hash_cap;
    idx->hash = xcalloc(cap, sizeof(*idx->hash));
    idx->hash_cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (!old[i])
            continue;
        size_t j = hash_string(idx->pool + old[i] - 1) & (cap - 1);
        while (idx->hash[j])
            j = (j + 1) & (cap - 1);
        idx->hash[j] = old[i];
    }
    free(old);
}

static bool intern(struct inline_index *idx, const char *s, uint32_t *out)
{
    if (idx->hash_cap == 0)
        rehash(idx, 1024);
    size_t j = hash_string(s) & (idx->hash_cap - 1);
    while (idx->hash[j]) {
        if (strcmp(idx->pool + idx->hash[j] - 1, s) == 0) {
            *out = idx->hash[j] - 1;
            return true;
        }
        j = (j + 1) & (idx->hash_cap - 1);
    }
    size_t n = strlen(s) + 1;
    if (idx->pool_used + n >= NAME_POOL_MAX)
        return false;
    if (idx->pool_used + n > idx->pool_cap) {
        idx->pool_cap = (idx->pool_used + n) * 2;
        idx->pool = xrealloc(idx->pool, idx->pool_cap);
    }
    memcpy(idx->pool + idx->pool_used, s, n);
    *out = (uint32_t)idx->pool_used;
    idx->hash[j] = (uint32_t)idx->pool_used + 1;
    idx->pool_used += n;
    idx->names++;
    if (idx->names * 2 > idx->hash_cap)
        rehash(idx, idx->hash_cap * 2);
    return true;
}

/* ---- walking the DIEs ----------------------------------------------- */

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

struct emit_ctx {
    struct inline_index *idx;
    uint64_t *range_budget;
    uint32_t name;
    unsigned depth;
    uint32_t call_line, where;
};

static uint64_t hash_where(struct call_where w)
{
    return ((uint64_t)w.line_offset * 0x9e3779b97f4a7c15ull) ^ (w.file * 0xc2b2ae3d27d4eb4full);
}

static void where_rehash(struct inline_index *idx, size_t cap)
{
    free(idx->where_hash);
    idx->where_hash = xcalloc(cap, sizeof(*idx->where_hash));
    idx->where_hash_cap = cap;
    for (size_t i = 0; i < idx->where_count; i++) {
        size_t j = hash_where(idx->wheres[i]) & (cap - 1);
        while (idx->where_hash[j])
            j = (j + 1) & (cap - 1);
        idx->where_hash[j] = (uint32_t)i + 1;
    }
}

/* 1 + the index of w in wheres (added when new); 0 when full. */
static uint32_t intern_where(struct inline_index *idx, struct call_where w)
{
    if (idx->where_hash_cap == 0)
        where_rehash(idx, 256);
    size_t j = hash_where(w) & (idx->where_hash_cap - 1);
    for (; idx->where_hash[j]; j = (j + 1) & (idx->where_hash_cap - 1)) {
        const struct call_where *o = &idx->wheres[idx->where_hash[j] - 1];
        if (o->line_offset == w.line_offset && o->file == w.file)
            return idx->where_hash[j];
    }
    if (idx->where_count >= UINT32_MAX - 1)
        return 0;
    if (idx->where_count == idx->where_cap) {
        idx->where_cap = idx->where_cap ? idx->where_cap * 2 : 64;
        idx->wheres = xreallocarray(idx->wheres, idx->where_cap, sizeof(*idx->wheres));
    }
    idx->wheres[idx->where_count++] = w;
    idx->where_hash[j] = (uint32_t)idx->where_count;
    if (idx->where_count * 2 > idx->where_hash_cap)
        where_rehash(idx, idx->where_hash_cap * 2);
    return (uint32_t)idx->where_count;
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
    if (idx->site_count == idx->site_cap) {
        idx->site_cap = idx->site_cap ? idx->site_cap * 2 : 256;
        idx->sites = xreallocarray(idx->sites, idx->site_cap, sizeof(*idx->sites));
    }
    idx->sites[idx->site_count++] = (struct call_site){
        .return_pc = pc, .target = target, .caller = idx->cur_caller, .tail = a->tail_call,
    };
}

/* A set of names, as one bit per byte offset of the pool (names are
 * pool offsets): a few KiB where a hash set would take hundreds. */
struct name_set {
    uint8_t *bits;
};

static void name_set_add(struct name_set *set, uint32_t name) { set->bits[name >> 3] |= (uint8_t)(1u << (name & 7)); }

static bool name_set_has(const struct name_set *set, uint32_t name)
{
    return set->bits[name >> 3] & (1u << (name & 7));
}

/* Only call sites a tail-call search can use are kept: the jumps, and the
 * calls of a named function that either makes jumps itself or has no code
 * here (another module may define it).  A call of a function of this
 * object that makes no jump can never start a chain.  Run on the sites and
 * ranges from site_first and range_first on: after each unit (a function's
 * jumps are in its own unit) and once more over the whole object. */
static void filter_sites(struct inline_index *idx, size_t site_first, size_t range_first)
{
    size_t bytes = idx->pool_used / 8 + 1;
    struct name_set defined = { xcalloc(bytes, 1) };
    struct name_set jumpers = { xcalloc(bytes, 1) };
    for (size_t i = range_first; i < idx->count; i++)
        if (!idx->ranges[i].where)
            name_set_add(&defined, idx->ranges[i].name_depth >> 8);
    for (size_t i = site_first; i < idx->site_count; i++)
        if (idx->sites[i].tail)
            name_set_add(&jumpers, idx->sites[i].caller);
    size_t out = site_first;
    for (size_t i = site_first; i < idx->site_count; i++) {
        const struct call_site *c = &idx->sites[i];
        if (c->target == NO_NAME)
            continue;
        if (c->tail || !name_set_has(&defined, c->target) || name_set_has(&jumpers, c->target))
            idx->sites[out++] = *c;
    }
    idx->site_count = out;
    free(defined.bits);
    free(jumpers.bits);
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

/* Sorting keeps the DIE order among equal ranges: two subprograms of one
 * address (gas makes one for each alias of an assembly function) are told
 * apart as elfutils does, by which DIE comes first. */
static int cmp_range_index(const void *a, const void *b, void *ranges)
{
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    const struct inline_range *x = (const struct inline_range *)ranges + i;
    const struct inline_range *y = (const struct inline_range *)ranges + j;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1; /* outer first */
    return (i > j) - (i < j);
}

static void sift_order(uint32_t *order, size_t root, size_t n, const struct inline_range *ranges)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && cmp_range_index(&order[child], &order[child + 1], (void *)ranges) < 0)
            child++;
        if (cmp_range_index(&order[root], &order[child], (void *)ranges) >= 0)
            return;
        uint32_t t = order[root];
        order[root] = order[child];
        order[child] = t;
        root = child;
    }
}

/* Sorts without a second copy of the ranges (the index's largest array):
 * an in-place heapsort of their indexes (the order is total, so the result
 * is any sort's), then the permutation applied cycle by cycle. */
static void sort_ranges(struct inline_index *idx)
{
    size_t n = idx->count;
    if (n < 2 || n > UINT32_MAX)
        return;
    uint32_t *order = xreallocarray(NULL, n, sizeof(*order));
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    for (size_t i = n / 2; i > 0; i--)
        sift_order(order, i - 1, n, idx->ranges);
    for (size_t end = n; end > 1; end--) {
        uint32_t t = order[0];
        order[0] = order[end - 1];
        order[end - 1] = t;
        sift_order(order, 0, end - 1, idx->ranges);
    }
    /* Position j takes the range at order[j]; order[j] = j marks it done. */
    for (size_t i = 0; i < n; i++) {
        if (order[i] == i)
            continue;
        struct inline_range first = idx->ranges[i];
        size_t j = i;
        while (order[j] != i) {
            size_t from = order[j];
            idx->ranges[j] = idx->ranges[from];
            order[j] = (uint32_t)j;
            j = from;
        }
        idx->ranges[j] = first;
        order[j] = (uint32_t)j;
    }
    free(order);
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
        filter_sites(idx, site_first, range_first);
    /* Calls of functions a later unit defines without jumps go too, now
     * and then, rather than all at the end: the array stays small. */
    if (idx->site_count >= 1024 && idx->site_count >= 2 * idx->sites_filtered) {
        filter_sites(idx, 0, 0);
        idx->sites_filtered = idx->site_count;
    }
}

static int cmp_site(const void *a, const void *b)
{
    const struct call_site *x = a, *y = b;
    return x->return_pc < y->return_pc ? -1 : x->return_pc > y->return_pc;
}

static int cmp_jump(const void *a, const void *b)
{
    const struct call_site *x = a, *y = b;
    return x->caller < y->caller ? -1 : x->caller > y->caller;
}

static void finish_sites(struct inline_index *idx)
{
    filter_sites(idx, 0, 0);
    if (idx->site_count > 1)
        qsort(idx->sites, idx->site_count, sizeof(*idx->sites), cmp_site);
    size_t calls = 0, jumps = 0;
    for (size_t i = 0; i < idx->site_count; i++)
        idx->sites[i].tail ? jumps++ : calls++;
    if (calls) {
        idx->calls = xreallocarray(NULL, calls, sizeof(*idx->calls));
        idx->call_base = UINT64_MAX;
        for (size_t i = 0; i < idx->site_count; i++)
            if (!idx->sites[i].tail && idx->sites[i].return_pc < idx->call_base)
                idx->call_base = idx->sites[i].return_pc;
    }
    if (jumps)
        idx->jumps = xreallocarray(NULL, jumps, sizeof(*idx->jumps));
    for (size_t i = 0; i < idx->site_count; i++) {
        const struct call_site *c = &idx->sites[i];
        if (c->tail)
            idx->jumps[idx->jump_count++] = *c;
        else if (c->return_pc - idx->call_base <= UINT32_MAX) /* beyond: dropped */
            idx->calls[idx->call_count++] = (struct call_entry){ (uint32_t)(c->return_pc - idx->call_base),
                                                                  c->target };
    }
    if (idx->jump_count > 1)
        qsort(idx->jumps, idx->jump_count, sizeof(*idx->jumps), cmp_jump);
    free(idx->sites);
    idx->sites = NULL;
    idx->site_count = idx->site_cap = 0;
}

void inline_index_finish(struct inline_index *idx)
{
    finish_sites(idx);
    abbrev_table_free(&idx->abbrevs);
    free(idx->hash);
    idx->hash = NULL;
    idx->hash_cap = 0;
    free(idx->where_hash);
    idx->where_hash = NULL;
    idx->where_hash_cap = 0;
    if (idx->where_count) {
        idx->wheres = xreallocarray(idx->wheres, idx->where_count, sizeof(*idx->wheres));
        idx->where_cap = idx->where_count;
    }
    if (idx->count) {
        idx->ranges = xreallocarray(idx->ranges, idx->count, sizeof(*idx->ranges));
        idx->cap = idx->count;
    }
    sort_ranges(idx);
    if (idx->pool_used) {
        idx->pool = xrealloc(idx->pool, idx->pool_used);
        idx->pool_cap = idx->pool_used;
    }
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
    free(idx->wheres);
    free(idx->where_hash);
    free(idx->pool);
    free(idx->hash);
    abbrev_table_free(&idx->abbrevs);
    free(idx);
}

/* Inlined ranges nest inside their function; looking back this far past
 * the nearest start below the address is plenty for real code. */
#define INLINE_LOOKBACK 4096

/* How many ranges start at or below address (they come first). */
static size_t ranges_up_to(const struct inline_index *idx, uint64_t address)
{
    size_t l = 0, u = idx->count;
    while (l < u) {
        size_t m = l + (u - l) / 2;
        if (idx->ranges[m].lo <= address)
            l = m + 1;
        else
            u = m;
    }
    return l;
}

/* The ranges covering address that start at or above lowest, nearest
 * start first: *i starts at ranges_up_to(); NULL when done. */
static const struct inline_range *next_covering(const struct inline_index *idx, size_t *i, size_t *steps,
                                                uint64_t address, uint64_t lowest)
{
    for (; *i > 0 && *steps < INLINE_LOOKBACK; (*steps)++) {
        const struct inline_range *r = &idx->ranges[--*i];
        if (r->lo < lowest)
            return NULL;
        if (address - r->lo < r->size)
            return r;
    }
    return NULL;
}

size_t inline_index_covering(const struct inline_index *idx, uint64_t address, uint64_t lowest,
                             struct inline_hit *out, size_t max)
{
    size_t i = ranges_up_to(idx, address), steps = 0, n = 0;
    const struct inline_range *r;
    while (n < max && (r = next_covering(idx, &i, &steps, address, lowest))) {
        const struct call_where *w = r->where ? &idx->wheres[r->where - 1] : NULL;
        out[n++] = (struct inline_hit){
            .lo = r->lo, .size = r->size, .pos = (uint32_t)i, .depth = r->name_depth & 0xff,
            .name = idx->pool + (r->name_depth >> 8), .inlined = w != NULL, .call_line = r->call_line,
            .call_file = w ? w->file : 0, .line_offset = w ? w->line_offset : UINT32_MAX,
        };
    }
    return n;
}

const char *inline_hits_lookup(const struct inline_hit *hits, size_t n)
{
    const struct inline_hit *best = NULL;
    for (size_t i = 0; i < n; i++) {
        const struct inline_hit *r = &hits[i];
        /* Smallest wins, then deepest; scanning backwards, an equal one
         * met later is earlier in DIE order and wins too. */
        if (!best || r->size < best->size || (r->size == best->size && r->depth >= best->depth))
            best = r;
    }
    return best ? best->name : NULL;
}

size_t inline_hits_chain(const struct inline_hit *hits, size_t count, struct inline_frame *out, size_t max)
{
    if (max == 0 || count == 0)
        return 0;
    /* The best range at each DIE depth (as inline_hits_lookup chooses
     * among ranges of one depth): inlined calls nest by depth. */
    const struct inline_hit *at[256] = { 0 };
    unsigned deepest = 0;
    for (size_t i = 0; i < count; i++) {
        const struct inline_hit *r = &hits[i];
        if (!at[r->depth] || r->size <= at[r->depth]->size)
            at[r->depth] = r;
        if (r->depth > deepest)
            deepest = r->depth;
    }
    /* Innermost first, out to the first subprogram (an inlined
     * subroutine's caller is the function around it). */
    size_t n = 0;
    for (unsigned d = deepest + 1; d-- > 0 && n < max;) {
        const struct inline_hit *f = at[d];
        if (!f)
            continue;
        out[n++] = (struct inline_frame){
            .name = f->name, .inlined = f->inlined, .call_line = f->call_line, .call_file = f->call_file,
            .line_offset = f->line_offset,
        };
        if (!f->inlined)
            break;
    }
    return n;
}

const char *inline_index_lookup(const struct inline_index *idx, uint64_t address, uint64_t lowest)
{
    struct inline_hit hits[INLINE_HITS_MAX];
    return inline_hits_lookup(hits, inline_index_covering(idx, address, lowest, hits, INLINE_HITS_MAX));
}

size_t inline_index_chain(const struct inline_index *idx, uint64_t address, uint64_t lowest,
                          struct inline_frame *out, size_t max)
{
    struct inline_hit hits[INLINE_HITS_MAX];
    return inline_hits_chain(hits, inline_index_covering(idx, address, lowest, hits, INLINE_HITS_MAX), out, max);
}

size_t inline_index_range_count(const struct inline_index *idx) { return idx->count; }

size_t inline_index_memory(const struct inline_index *idx)
{
    return sizeof(*idx) + idx->cap * sizeof(*idx->ranges) + idx->pool_cap + idx->hash_cap * sizeof(uint32_t) +
           idx->site_cap * sizeof(*idx->sites) + idx->call_count * sizeof(*idx->calls) +
           idx->jump_count * sizeof(*idx->jumps) +
           idx->where_cap * sizeof(*idx->wheres) + idx->where_hash_cap * sizeof(uint32_t);
}

/* How many calls return to return_pc; their targets (up to max). */
static size_t calls_at(const struct inline_index *idx, uint64_t return_pc, const char **targets, size_t max)
{
    if (!idx->call_count || return_pc < idx->call_base || return_pc - idx->call_base > UINT32_MAX)
        return 0;
    uint32_t off = (uint32_t)(return_pc - idx->call_base);
    size_t l = 0, u = idx->call_count;
    while (l < u) {
        size_t m = l + (u - l) / 2;
        if (idx->calls[m].pc_offset < off)
            l = m + 1;
        else
            u = m;
    }
    size_t n = 0;
    for (; l < idx->call_count && idx->calls[l].pc_offset == off; l++, n++)
        if (n < max)
            targets[n] = idx->pool + idx->calls[l].target;
    return n;
}

const char *inline_index_call_target(const struct inline_index *idx, uint64_t return_pc, bool *tail)
{
    if (tail)
        *tail = false; /* jumps return nowhere: only calls are looked up */
    /* Two call sites returning to one address: ambiguous, no answer. */
    const char *target;
    return calls_at(idx, return_pc, &target, 1) == 1 ? target : NULL;
}

size_t inline_index_tail_calls(const struct inline_index *idx, const char *caller, struct inline_tail_call *out,
                               size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < idx->jump_count && n < max; i++) {
        const struct call_site *s = &idx->jumps[i];
        if (strcmp(idx->pool + s->caller, caller) != 0)
            continue;
        out[n++] = (struct inline_tail_call){
            .target = s->target == NO_NAME ? NULL : idx->pool + s->target, .return_pc = s->return_pc,
        };
    }
    return n;
}
