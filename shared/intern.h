/* The one string interner: a key (a byte string) gets a dense number, 0,
 * 1, 2... in the order keys are first seen, so that a writer names a
 * string, a frame or a pair of addresses once and then by number.  Each
 * user keeps its own table, as elfutils instantiates its one hash table
 * (lib/dynamicsizehash.h) per user: the DWARF name pool (info_inline.c),
 * the --record writer, the HTML page's frame names, the heaptrack and
 * pprof exports, and the symbolizer's function names.
 *
 * The keys are copied into pool chunks that never move, each key followed
 * by a NUL: a string key reads back as a C string, and the pointer
 * interner_key gives stays valid until interner_free (the symbolizer hands
 * such names out to every frame it names).  Open addressing on FNV-1a, at
 * most half full.  Growth cannot fail silently (xalloc.h).  Zero a table
 * to start. */
#ifndef MT_SHARED_INTERN_H
#define MT_SHARED_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct interner {
    char *pool;                 /* the chunk keys are copied into now */
    size_t pool_used, pool_cap;
    char **chunks;              /* the chunks filled before it */
    size_t chunk_count, chunks_cap, chunk_bytes;
    const char **keys;          /* key n */
    uint32_t *lens;             /* its length, without the NUL */
    uint32_t count, keys_cap;
    uint32_t *slots;            /* 1 + key number; 0: empty */
    size_t slots_cap;           /* 0 or a power of two */
};

/* The number of the len bytes at key; *added set when it is new (it is
 * then interner_count() - 1). */
uint32_t interner_add(struct interner *t, const void *key, size_t len, bool *added);
/* The same for a NUL-terminated string (the NUL is not part of the key). */
uint32_t interner_add_string(struct interner *t, const char *s, bool *added);

/* A pair of numbers as a key (an address and its parent's node...). */
static inline uint32_t interner_add_pair(struct interner *t, uint64_t a, uint64_t b, bool *added)
{
    const uint64_t key[2] = { a, b };
    return interner_add(t, key, sizeof(key), added);
}

/* Key n (n < count), NUL-terminated; its length in *len unless NULL.  The
 * pointer stays valid until interner_free. */
const char *interner_key(const struct interner *t, uint32_t n, size_t *len);
static inline uint32_t interner_count(const struct interner *t) { return t->count; }

/* No more keys will come: the lookup table goes and the arrays shrink to
 * fit (the keys stay where they are); interner_key still answers. */
void interner_seal(struct interner *t);
/* The bytes the table holds. */
size_t interner_memory(const struct interner *t);
void interner_free(struct interner *t);

#endif
