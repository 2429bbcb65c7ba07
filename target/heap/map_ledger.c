#include "target/heap/map_ledger.h"

#include "shared/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint64_t heap_page_size(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    return ps > 0 ? (uint64_t)ps : 4096;
}

bool map_ledger_pages(uint64_t addr, uint64_t len, uint64_t *start, uint64_t *end)
{
    uint64_t ps = heap_page_size();
    if (len == 0)
        return false;
    uint64_t rounded = len > UINT64_MAX - (ps - 1) ? UINT64_MAX & ~(ps - 1)
                                                   : (len + ps - 1) & ~(ps - 1);
    *start = addr;
    *end = rounded > UINT64_MAX - addr ? UINT64_MAX : addr + rounded;
    return *end > *start;
}

/* First region whose end lies above addr. */
static size_t region_search(const struct map_ledger *l, uint64_t addr)
{
    size_t lo = 0, hi = l->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->regions[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void region_insert_at(struct map_ledger *l, size_t i, struct heap_region r)
{
    if (l->count == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->regions = xreallocarray(l->regions, l->cap, sizeof(*l->regions));
    }
    memmove(&l->regions[i + 1], &l->regions[i], (l->count - i) * sizeof(*l->regions));
    l->regions[i] = r;
    l->count++;
}

uint64_t map_ledger_cut(struct map_ledger *l, uint64_t s, uint64_t e)
{
    uint64_t removed = 0;
    size_t i = region_search(l, s);
    while (i < l->count && l->regions[i].start < e) {
        struct heap_region *r = &l->regions[i];
        if (r->start < s && r->end > e) {
            struct heap_region tail = { e, r->end, r->stack_id };
            removed += e - s;
            r->end = s;
            region_insert_at(l, i + 1, tail);
            break;
        }
        if (r->start < s) {
            removed += r->end - s;
            r->end = s;
            i++;
        } else if (r->end > e) {
            removed += e - r->start;
            r->start = e;
            break;
        } else {
            removed += r->end - r->start;
            memmove(r, r + 1, (l->count - i - 1) * sizeof(*r));
            l->count--;
        }
    }
    return removed;
}

void map_ledger_add(struct map_ledger *l, uint64_t s, uint64_t e, uint32_t stack_id, uint64_t *removed)
{
    *removed = map_ledger_cut(l, s, e);
    region_insert_at(l, region_search(l, s), (struct heap_region){ s, e, stack_id });
}

void map_ledger_clone(struct map_ledger *to, const struct map_ledger *from)
{
    *to = *from;
    to->regions = NULL;
    if (from->cap) {
        to->regions = xreallocarray(NULL, from->cap, sizeof(*to->regions));
        memcpy(to->regions, from->regions, from->count * sizeof(*to->regions));
    }
}

size_t map_ledger_memory(const struct map_ledger *l)
{
    return l->cap * sizeof(*l->regions);
}

void map_ledger_free(struct map_ledger *l)
{
    free(l->regions);
    memset(l, 0, sizeof(*l));
}
