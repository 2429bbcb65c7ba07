#include "target/heap/freed.h"

#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"

/* A ring: the newest entry is at (next - 1), the oldest at next once full. */
struct freed_history {
    struct freed_block *ring;
    size_t cap, count, next;
};

struct freed_history *freed_history_new(size_t capacity)
{
    struct freed_history *h = xcalloc(1, sizeof(*h));
    h->cap = capacity ? capacity : 1;
    h->ring = xcalloc(h->cap, sizeof(*h->ring));
    return h;
}

void freed_history_free(struct freed_history *h)
{
    if (!h)
        return;
    free(h->ring);
    free(h);
}

struct freed_history *freed_history_clone(const struct freed_history *h)
{
    if (!h)
        return NULL;
    struct freed_history *c = freed_history_new(h->cap);
    memcpy(c->ring, h->ring, h->cap * sizeof(*h->ring));
    c->count = h->count;
    c->next = h->next;
    return c;
}

void freed_history_push(struct freed_history *h, const struct heap_block *block,
                        uint32_t free_stack)
{
    h->ring[h->next] = (struct freed_block){*block, free_stack};
    h->next = (h->next + 1) % h->cap;
    if (h->count < h->cap)
        h->count++;
}

static bool contains(const struct heap_block *b, uint64_t addr)
{
    if (addr < b->addr)
        return false;
    return b->size ? addr - b->addr < b->size : addr == b->addr;
}

bool freed_history_find(const struct freed_history *h, uint64_t addr, struct freed_block *out)
{
    for (size_t k = 1; k <= h->count; k++) {
        const struct freed_block *f = &h->ring[(h->next + h->cap - k) % h->cap];
        if (contains(&f->block, addr)) {
            *out = *f;
            return true;
        }
    }
    return false;
}

size_t freed_history_count(const struct freed_history *h) { return h->count; }
