/* The ranges of the function index (info_inline.h): sorted once when
 * built, then searched by address, nearest start first. */
#include "target/dwarf/info_inline_internal.h"

#include <stdlib.h>

#include "shared/xalloc.h"

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

void inline_ranges_sort(struct inline_index *idx)
{
    if (idx->count) {
        idx->ranges = xreallocarray(idx->ranges, idx->count, sizeof(*idx->ranges));
        idx->cap = idx->count;
    }
    sort_ranges(idx);
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
        struct call_where w = r->where ? where_of(idx, r->where) : (struct call_where){ UINT32_MAX, 0 };
        out[n++] = (struct inline_hit){
            .lo = r->lo, .size = r->size, .pos = (uint32_t)i, .depth = r->name_depth & 0xff,
            .name = name_of(idx, r->name_depth >> 8), .inlined = r->where != 0, .call_line = r->call_line,
            .call_file = w.file, .line_offset = w.line_offset,
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

