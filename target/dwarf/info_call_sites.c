/* The call sites of the function index (info_inline.h): while building,
 * every DW_TAG_call_site of a function with code, filtered down to those
 * a tail-call search can use; then the calls, by return address, and the
 * jumps, by the function that makes them. */
#include "target/dwarf/info_inline_internal.h"

#include <stdlib.h>

#include "shared/xalloc.h"

void call_sites_add(struct inline_index *idx, struct call_site site)
{
    if (idx->site_count == idx->site_cap) {
        idx->site_cap = idx->site_cap ? idx->site_cap * 2 : 256;
        idx->sites = xreallocarray(idx->sites, idx->site_cap, sizeof(*idx->sites));
    }
    idx->sites[idx->site_count++] = site;
}

/* A set of names, as one bit per name number: a few KiB where a hash set
 * would take hundreds. */
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
void call_sites_filter(struct inline_index *idx, size_t site_first, size_t range_first)
{
    size_t bytes = interner_count(&idx->names) / 8 + 1;
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

void call_sites_finish(struct inline_index *idx)
{
    call_sites_filter(idx, 0, 0);
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
            targets[n] = name_of(idx, idx->calls[l].target);
    return n;
}

size_t inline_index_calls_at(const struct inline_index *idx, uint64_t return_pc, const char **targets,
                             size_t max)
{
    return calls_at(idx, return_pc, targets, max);
}

size_t inline_index_call_pcs(const struct inline_index *idx, uint64_t *out, size_t max)
{
    for (size_t i = 0; i < idx->call_count && i < max; i++)
        out[i] = idx->call_base + idx->calls[i].pc_offset;
    return idx->call_count;
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
        if (strcmp(name_of(idx, s->caller), caller) != 0)
            continue;
        out[n++] = (struct inline_tail_call){
            .target = s->target == NO_NAME ? NULL : name_of(idx, s->target), .return_pc = s->return_pc,
        };
    }
    return n;
}
