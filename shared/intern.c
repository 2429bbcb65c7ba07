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

static size_t key_len(const struct interner *t, uint32_t n)
{
    size_t end = n + 1 < t->count ? t->starts[n + 1] : t->pool_used;
    return end - t->starts[n] - 1;
}

const char *interner_key(const struct interner *t, uint32_t n, size_t *len)
{
    if (len)
        *len = key_len(t, n);
    return t->pool + t->starts[n];
}

static void rehash(struct interner *t, size_t cap)
{
    free(t->slots);
    t->slots = xcalloc(cap, sizeof(*t->slots));
    t->slots_cap = cap;
    for (uint32_t n = 0; n < t->count; n++) {
        size_t j = fnv1a(t->pool + t->starts[n], key_len(t, n)) & (cap - 1);
        while (t->slots[j])
            j = (j + 1) & (cap - 1);
        t->slots[j] = n + 1;
    }
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
        if (key_len(t, n) == len && memcmp(t->pool + t->starts[n], key, len) == 0) {
            *added = false;
            return n;
        }
    }
    if (t->count == UINT32_MAX - 1)
        abort(); /* four billion keys: the numbers themselves would wrap */
    if (t->count == t->starts_cap) {
        t->starts_cap = t->starts_cap ? t->starts_cap * 2 : 64;
        t->starts = xreallocarray(t->starts, t->starts_cap, sizeof(*t->starts));
    }
    if (len + 1 > t->pool_cap - t->pool_used) {
        t->pool_cap = (t->pool_used + len + 1) * 2;
        t->pool = xrealloc(t->pool, t->pool_cap);
    }
    if (len)
        memcpy(t->pool + t->pool_used, key, len);
    t->pool[t->pool_used + len] = '\0';
    t->starts[t->count] = t->pool_used;
    t->pool_used += len + 1;
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
        t->starts = xreallocarray(t->starts, t->count, sizeof(*t->starts));
        t->starts_cap = t->count;
        t->pool = xrealloc(t->pool, t->pool_used);
        t->pool_cap = t->pool_used;
    }
}

size_t interner_memory(const struct interner *t)
{
    return t->pool_cap + (size_t)t->starts_cap * sizeof(*t->starts) + t->slots_cap * sizeof(*t->slots);
}

void interner_free(struct interner *t)
{
    free(t->pool);
    free(t->starts);
    free(t->slots);
    memset(t, 0, sizeof(*t));
}
