#include "target/leak/leak_alloc.h"

#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"
#include "target/tracer/maps.h"

void leak_ranges_push(struct leak_ranges *l, uint64_t lo, uint64_t hi)
{
    if (hi <= lo)
        return;
    if (l->n && l->r[l->n - 1].addr + l->r[l->n - 1].len == lo) {
        l->r[l->n - 1].len += hi - lo;
        return;
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->r = xreallocarray(l->r, l->cap, sizeof(*l->r));
    }
    l->r[l->n++] = (struct leak_range){lo, hi - lo};
}

size_t leak_first_block_from(const struct heap_block *b, size_t n, uint64_t a)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b[mid].addr < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool has_block(const struct heap_block *b, size_t n, uint64_t lo, uint64_t hi)
{
    size_t i = leak_first_block_from(b, n, lo);
    return i < n && b[i].addr < hi;
}

struct leak_range *leak_allocator_ranges(const char *maps_text, size_t len,
                                         const char *const *alloc_paths, size_t npaths,
                                         const struct heap_block *blocks, size_t nblocks,
                                         size_t *count)
{
    struct proc_maps maps;
    struct leak_ranges out = {0};
    *count = 0;
    if (proc_maps_parse(maps_text, len, &maps) < 0)
        return NULL;
    uint64_t file_end = 0;   /* end of the allocator file's last mapping */
    for (size_t m = 0; m < maps.count; m++) {
        const struct map_entry *e = &maps.entries[m];
        bool mine = false;
        if (e->path) {
            for (size_t k = 0; k < npaths && !mine; k++)
                mine = strcmp(e->path, alloc_paths[k]) == 0;
            file_end = mine ? e->end : 0;
        } else if (file_end && e->start == file_end) {
            mine = true;   /* the .bss after the file's data */
            file_end = 0;
        }
        if (mine || has_block(blocks, nblocks, e->start, e->end))
            leak_ranges_push(&out, e->start, e->end);
    }
    proc_maps_free(&maps);
    *count = out.n;
    return out.r;
}

struct leak_range *leak_split_roots(struct leak_range **roots, size_t *nroots,
                                    const struct leak_range *alloc, size_t nalloc, size_t *nout)
{
    struct leak_ranges keep = {0}, moved = {0};
    size_t a = 0;
    for (size_t i = 0; i < *nroots; i++) {
        uint64_t lo = (*roots)[i].addr, hi = lo + (*roots)[i].len;
        while (a < nalloc && alloc[a].addr + alloc[a].len <= lo)
            a++;
        /* Roots come sorted too; the allocator ranges that overlap
         * [lo, hi) start at a. */
        for (size_t k = a; k < nalloc && lo < hi && alloc[k].addr < hi; k++) {
            uint64_t s = alloc[k].addr, e = alloc[k].addr + alloc[k].len;
            if (e <= lo)
                continue;
            if (s > lo)
                leak_ranges_push(&keep, lo, s);
            leak_ranges_push(&moved, s > lo ? s : lo, e < hi ? e : hi);
            lo = e < hi ? e : hi;
        }
        leak_ranges_push(&keep, lo, hi);
    }
    free(*roots);
    *roots = keep.r;
    *nroots = keep.n;
    *nout = moved.n;
    return moved.r;
}

static uint64_t word_at(const uint8_t *mem, uint64_t lo, uint64_t at, unsigned ws)
{
    if (ws == 8) {
        uint64_t w;
        memcpy(&w, mem + (at - lo), 8);
        return w;
    }
    uint32_t w;
    memcpy(&w, mem + (at - lo), 4);
    return w;
}

/* glibc: chunk = {prev_size, size | flags} then the memory; memory is
 * aligned to 16 on every CPU memtrace supports; tcache_perthread_struct is
 * the heap's first chunk: uint16_t counts[64], then entries[64]. */
#define GLIBC_ALIGN 16u
#define TCACHE_BINS 64u

struct leak_range *leak_glibc_heap_roots(const uint8_t *mem, uint64_t lo, uint64_t hi,
                                         unsigned ws, const struct heap_block *blocks,
                                         size_t nblocks, size_t *count)
{
    struct leak_ranges out = {0};
    *count = 0;
    uint64_t hdr = 2ull * ws;
    uint64_t c = lo;
    if ((c + hdr) % GLIBC_ALIGN)
        c += GLIBC_ALIGN - (c + hdr) % GLIBC_ALIGN;
    if (c + hdr > hi)
        return NULL;
    /* The tcache key, from any entry of the first chunk's tcache. */
    uint64_t first_size = word_at(mem, lo, c + ws, ws) & ~7ull;
    uint64_t tc_len = TCACHE_BINS * 2 + TCACHE_BINS * ws;
    uint64_t key = 0;
    if (first_size >= hdr + tc_len && c + first_size <= hi) {
        uint64_t counts = c + hdr, entries = counts + TCACHE_BINS * 2;
        for (unsigned i = 0; i < TCACHE_BINS && !key; i++) {
            uint16_t n;
            memcpy(&n, mem + (counts + 2 * i - lo), 2);
            uint64_t e = word_at(mem, lo, entries + (uint64_t)i * ws, ws);
            if (n && e >= lo + hdr && e + 2ull * ws <= hi)
                key = word_at(mem, lo, e + ws, ws);
        }
    }
    bool walked_one = false;
    while (c + hdr <= hi) {
        uint64_t size = word_at(mem, lo, c + ws, ws) & ~7ull;
        if (size < 2 * hdr || size % GLIBC_ALIGN || size > hi - c)
            break;   /* not a chunk: the rest stays roots, as it was */
        uint64_t next = c + size;
        if (next + hdr > hi)
            break;   /* the top chunk, up to the end: free */
        bool in_use = word_at(mem, lo, next + ws, ws) & 1;
        if (in_use && key && word_at(mem, lo, c + hdr + ws, ws) == key)
            in_use = false;   /* in a tcache */
        if (in_use && !has_block(blocks, nblocks, c + hdr, next + ws))
            leak_ranges_push(&out, c + hdr, next + ws);
        walked_one = true;
        c = next;
    }
    if (!walked_one) {
        free(out.r);
        return NULL;
    }
    if (c + hdr <= hi && c < hi && (word_at(mem, lo, c + ws, ws) & ~7ull) != hi - c)
        leak_ranges_push(&out, c, hi);   /* stopped early: keep the unknown rest */
    *count = out.n;
    return out.r;
}
