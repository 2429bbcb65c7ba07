#include "target/heap/stacks.h"

#include "shared/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* PCs are copied into chunks that are never reallocated, so the pointers
 * handed out by stack_table_pcs stay valid while the table grows.  Chunks
 * double from 8 KiB to 512 KiB: a short trace holds little. */
#define ARENA_FIRST_CHUNK_PCS 1024u
#define ARENA_CHUNK_PCS 65536u

struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    uint64_t pcs[];
};

struct stack_entry {
    const uint64_t *pcs;
    uint32_t n;
    uint32_t hash;
};

struct stack_table {
    struct stack_entry *entries; /* entries[id - 1] */
    size_t count, entries_cap;
    uint32_t *index;             /* open addressing, linear probing; 0 = empty */
    size_t index_mask;           /* capacity - 1, capacity a power of two */
    struct arena_chunk *chunks;  /* newest first */
    size_t arena_bytes;
};

static uint64_t hash_pcs(const uint64_t *pcs, unsigned n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (unsigned i = 0; i < n; i++) {
        h ^= pcs[i];
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
    return h;
}

struct stack_table *stack_table_new(void)
{
    struct stack_table *t = xcalloc(1, sizeof(*t));
    size_t cap = 256;
    t->index = xcalloc(cap, sizeof(*t->index));
    t->index_mask = cap - 1;
    return t;
}

void stack_table_free(struct stack_table *t)
{
    if (!t)
        return;
    struct arena_chunk *c = t->chunks;
    while (c) {
        struct arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    free(t->entries);
    free(t->index);
    free(t);
}

static const uint64_t *arena_copy(struct stack_table *t, const uint64_t *pcs, unsigned n)
{
    struct arena_chunk *c = t->chunks;
    if (!c || c->cap - c->used < n) {
        size_t cap = c ? (c->cap < ARENA_CHUNK_PCS ? c->cap * 2 : ARENA_CHUNK_PCS)
                       : ARENA_FIRST_CHUNK_PCS;
        if (cap < n)
            cap = n;
        c = xmalloc(sizeof(*c) + cap * sizeof(uint64_t));
        c->next = t->chunks;
        c->used = 0;
        c->cap = cap;
        t->chunks = c;
        t->arena_bytes += sizeof(*c) + cap * sizeof(uint64_t);
    }
    uint64_t *dst = c->pcs + c->used;
    if (n)
        memcpy(dst, pcs, n * sizeof(uint64_t));
    c->used += n;
    return dst;
}

static void index_insert(uint32_t *index, size_t mask, uint32_t hash, uint32_t id)
{
    size_t i = hash & mask;
    while (index[i])
        i = (i + 1) & mask;
    index[i] = id;
}

static void index_grow(struct stack_table *t)
{
    size_t cap = (t->index_mask + 1) * 2;
    uint32_t *index = xcalloc(cap, sizeof(*index));
    for (size_t id = 1; id <= t->count; id++)
        index_insert(index, cap - 1, t->entries[id - 1].hash, (uint32_t)id);
    free(t->index);
    t->index = index;
    t->index_mask = cap - 1;
}

uint32_t stack_table_intern(struct stack_table *t, const uint64_t *pcs, unsigned n)
{
    uint64_t h64 = hash_pcs(pcs, n);
    uint32_t hash = (uint32_t)(h64 >> 32);
    size_t i = hash & t->index_mask;
    for (;;) {
        uint32_t id = t->index[i];
        if (!id)
            break;
        const struct stack_entry *e = &t->entries[id - 1];
        if (e->hash == hash && e->n == n &&
            (n == 0 || memcmp(e->pcs, pcs, n * sizeof(uint64_t)) == 0))
            return id;
        i = (i + 1) & t->index_mask;
    }

    if (t->count == t->entries_cap) {
        t->entries_cap = t->entries_cap ? t->entries_cap * 2 : 256;
        t->entries = xreallocarray(t->entries, t->entries_cap, sizeof(*t->entries));
    }
    uint32_t id = (uint32_t)++t->count;
    t->entries[id - 1] = (struct stack_entry){ arena_copy(t, pcs, n), n, hash };
    t->index[i] = id;
    /* Keep the index at most half full: lookups stay one or two probes. */
    if (t->count * 2 > t->index_mask + 1)
        index_grow(t);
    return id;
}

const uint64_t *stack_table_pcs(const struct stack_table *t, uint32_t id, unsigned *n)
{
    if (id == 0 || id > t->count) {
        *n = 0;
        return NULL;
    }
    *n = t->entries[id - 1].n;
    return t->entries[id - 1].pcs;
}

size_t stack_table_count(const struct stack_table *t)
{
    return t->count;
}

size_t stack_table_memory(const struct stack_table *t)
{
    return sizeof(*t) + t->arena_bytes + t->entries_cap * sizeof(*t->entries) +
           (t->index_mask + 1) * sizeof(*t->index);
}

struct stack_table *stack_table_clone(const struct stack_table *t)
{
    struct stack_table *c = stack_table_new();
    /* Ids are handed out densely in interning order: interning the stacks
     * again in id order gives each the same id. */
    for (size_t id = 1; id <= t->count; id++) {
        unsigned n;
        const uint64_t *pcs = stack_table_pcs(t, (uint32_t)id, &n);
        stack_table_intern(c, pcs, n);
    }
    return c;
}
