/* See block_cache.h. */
#include "target/files/block_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"

#define BLOCK BLOCK_CACHE_BLOCK

void block_cache_init(struct block_cache *bc, unsigned count, unsigned *used, unsigned max,
                      uint32_t direct_max, block_fetch_fn fetch, void *ctx)
{
    memset(bc, 0, sizeof(*bc));
    bc->count = count < BLOCK_CACHE_MAX ? count : BLOCK_CACHE_MAX;
    bc->used = used;
    bc->max = max;
    bc->direct_max = direct_max;
    bc->fetch = fetch;
    bc->ctx = ctx;
}

static struct block_cache_slot *find(struct block_cache *bc, uint64_t index)
{
    for (unsigned i = 0; i < bc->count; i++)
        if (bc->slots[i].valid && bc->slots[i].index == index)
            return &bc->slots[i];
    return NULL;
}

/* Copies what slot b holds of [off, off+len); returns the byte count. */
static size_t copy_out(const struct block_cache_slot *b, uint64_t off, uint8_t *out, size_t len)
{
    uint64_t in_block = off - b->index * BLOCK;
    if (in_block >= b->len)
        return 0;
    size_t n = b->len - in_block;
    if (n > len)
        n = len;
    memcpy(out, b->data + in_block, n);
    return n;
}

/* The slot to fill next: an empty allocated one, else a new one while the
 * budget allows, else this file's least recently used one. */
static struct block_cache_slot *victim(struct block_cache *bc)
{
    struct block_cache_slot *unallocated = NULL, *lru = NULL;
    for (unsigned i = 0; i < bc->count; i++) {
        struct block_cache_slot *b = &bc->slots[i];
        if (!b->data) {
            if (!unallocated)
                unallocated = b;
            continue;
        }
        if (!b->valid)
            return b;
        if (!lru || b->last_use < lru->last_use)
            lru = b;
    }
    if (unallocated && (!lru || *bc->used < bc->max)) {
        unallocated->data = xmalloc(BLOCK);
        (*bc->used)++;
        return unallocated;
    }
    return lru;
}

static struct block_cache_slot *load(struct block_cache *bc, uint64_t size, uint64_t index,
                                     int *err)
{
    struct block_cache_slot *hit = find(bc, index);
    if (hit) {
        hit->last_use = ++bc->tick;
        return hit;
    }
    struct block_cache_slot *b = victim(bc);
    uint64_t off = index * BLOCK;
    uint64_t left = size - off;
    uint32_t len = left < BLOCK ? (uint32_t)left : BLOCK;
    b->valid = false;
    *err = bc->fetch(bc->ctx, off, b->data, len);
    if (*err < 0)
        return NULL;
    b->valid = true;
    b->index = index;
    b->len = len;
    b->last_use = ++bc->tick;
    return b;
}

void block_cache_put(struct block_cache *bc, uint64_t index, const void *data, uint32_t len)
{
    struct block_cache_slot *b = find(bc, index);
    if (!b)
        b = victim(bc);
    if (!b || len > BLOCK)
        return;
    memcpy(b->data, data, len);
    b->valid = true;
    b->index = index;
    b->len = len;
    b->last_use = ++bc->tick;
}

/* Big reads (a whole .debug_line, two blocks or more) go around the cache
 * in big requests, but take what the cache already holds rather than fetch
 * it twice; small ones go through it. */
int block_cache_read(struct block_cache *bc, uint64_t size, uint64_t off, void *buf, size_t len)
{
    uint8_t *out = buf;
    bool around = len >= 2 * BLOCK;
    while (len > 0) {
        uint64_t index = off / BLOCK;
        struct block_cache_slot *b = around ? find(bc, index) : NULL;
        if (around && !b) {
            uint64_t n = len < bc->direct_max ? len : bc->direct_max;
            for (uint64_t k = index + 1; k <= (off + n - 1) / BLOCK; k++) {
                if (find(bc, k)) {
                    n = k * BLOCK - off;
                    break;
                }
            }
            int r = bc->fetch(bc->ctx, off, out, (uint32_t)n);
            if (r < 0)
                return r;
            off += n;
            out += n;
            len -= (size_t)n;
            continue;
        }
        int err = 0;
        if (!b && !(b = load(bc, size, index, &err)))
            return err;
        size_t n = copy_out(b, off, out, len);
        if (n == 0)
            return -EIO;
        off += n;
        out += n;
        len -= n;
    }
    return 0;
}

void block_cache_free(struct block_cache *bc)
{
    for (unsigned i = 0; i < bc->count; i++) {
        if (bc->slots[i].data)
            (*bc->used)--;
        free(bc->slots[i].data);
        bc->slots[i].data = NULL;
        bc->slots[i].valid = false;
    }
}
