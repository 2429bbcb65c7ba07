#include "shared/intern.h"

#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"

static uint64_t fnv1a(const void *key, size_t len)
{
    const uint8_t *p = key;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* Chunks grow from 4 KiB to 64 KiB: a table of a few names stays small and
 * a big one takes few allocations.  A chunk's unused end is shorter than
 * the key that did not fit in it. */
#define CHUNK_MIN (4u * 1024)
#define CHUNK_MAX (64u * 1024)

const char *interner_key(const struct interner *t, uint32_t n, size_t *len)
{
    if (len)
        *len = t->lens[n];
    return t->keys[n];
}

static void rehash(struct interner *t, size_t cap)
{
    free(t->slots);
    t->slots = xcalloc(cap, sizeof(*t->slots));
    t->slots_cap = cap;
    for (uint32_t n = 0; n < t->count; n++) {
        size_t j = fnv1a(t->keys[n], t->lens[n]) & (cap - 1);
        while (t->slots[j])
            j = (j + 1) & (cap - 1);
        t->slots[j] = n + 1;
    }
}

/* Room for need bytes in the current chunk: a full chunk is kept (its keys
 * are pointed at) and a new one started, never moved. */
static void make_room(struct interner *t, size_t need)
{
    if (need <= t->pool_cap - t->pool_used)
        return;
    if (t->pool) {
        if (t->chunk_count == t->chunks_cap) {
            t->chunks_cap = t->chunks_cap ? t->chunks_cap * 2 : 8;
            t->chunks = xreallocarray(t->chunks, t->chunks_cap, sizeof(*t->chunks));
        }
        t->chunks[t->chunk_count++] = t->pool;
    }
    size_t cap = t->pool_cap ? t->pool_cap * 2 : CHUNK_MIN;
    if (cap > CHUNK_MAX)
        cap = CHUNK_MAX;
    if (cap < need)
        cap = need;     /* a long key gets a chunk of its own size */
    t->pool = xmalloc(cap);
    t->pool_cap = cap;
    t->pool_used = 0;
    t->chunk_bytes += cap;
}

uint32_t interner_add(struct interner *t, const void *key, size_t len, bool *added)
{
    /* At most half full, so probing always ends at an empty slot. */
    if ((size_t)t->count * 2 + 2 > t->slots_cap) {
        size_t cap = t->slots_cap ? t->slots_cap * 2 : 256;
        while (cap < (size_t)t->count * 2 + 2) /* after interner_seal */
            cap *= 2;
        rehash(t, cap);
    }
    size_t mask = t->slots_cap - 1;
    size_t j = fnv1a(key, len) & mask;
    for (; t->slots[j]; j = (j + 1) & mask) {
        uint32_t n = t->slots[j] - 1;
        if (t->lens[n] == len && memcmp(t->keys[n], key, len) == 0) {
            *added = false;
            return n;
        }
    }
    /* four billion keys, or one of 4 GiB: the numbers themselves would wrap */
    if (t->count == UINT32_MAX - 1 || len >= UINT32_MAX)
        abort();
    if (t->count == t->keys_cap) {
        t->keys_cap = t->keys_cap ? t->keys_cap * 2 : 64;
        t->keys = xreallocarray(t->keys, t->keys_cap, sizeof(*t->keys));
        t->lens = xreallocarray(t->lens, t->keys_cap, sizeof(*t->lens));
    }
    make_room(t, len + 1);
    char *copy = t->pool + t->pool_used;
    if (len)
        memcpy(copy, key, len);
    copy[len] = '\0';
    t->pool_used += len + 1;
    t->keys[t->count] = copy;
    t->lens[t->count] = (uint32_t)len;
    t->slots[j] = ++t->count;
    *added = true;
    return t->count - 1;
}

uint32_t interner_add_string(struct interner *t, const char *s, bool *added)
{
    return interner_add(t, s, strlen(s), added);
}

void interner_seal(struct interner *t)
{
    free(t->slots);
    t->slots = NULL;
    t->slots_cap = 0;
    if (t->count) {
        t->keys = xreallocarray(t->keys, t->count, sizeof(*t->keys));
        t->lens = xreallocarray(t->lens, t->count, sizeof(*t->lens));
        t->keys_cap = t->count;
    }
}

size_t interner_memory(const struct interner *t)
{
    return t->chunk_bytes + t->chunks_cap * sizeof(*t->chunks) +
           (size_t)t->keys_cap * (sizeof(*t->keys) + sizeof(*t->lens)) + t->slots_cap * sizeof(*t->slots);
}

void interner_free(struct interner *t)
{
    for (size_t i = 0; i < t->chunk_count; i++)
        free(t->chunks[i]);
    free(t->chunks);
    free(t->pool);
    free(t->keys);
    free(t->lens);
    free(t->slots);
    memset(t, 0, sizeof(*t));
}
