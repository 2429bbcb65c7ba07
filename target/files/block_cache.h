/* A small cache of 64 KiB blocks in front of a byte_source that fetches
 * from far away (memtrace-fs over the wire protocol, a debuginfod server
 * over HTTP): ELF and DWARF readers come back to the same headers and
 * tables again and again.  Bounded: at most `count` blocks per file, and
 * while the owner's shared budget (*used < max) allows; past it each file
 * keeps one block.  Reads of two blocks or more go around the cache in
 * requests of at most direct_max bytes, taking what the cache holds. */
#ifndef MT_FILES_BLOCK_CACHE_H
#define MT_FILES_BLOCK_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BLOCK_CACHE_BLOCK (64u * 1024u)
#define BLOCK_CACHE_MAX 16

/* Reads exactly len bytes at off from the far side; 0 or a negative errno. */
typedef int (*block_fetch_fn)(void *ctx, uint64_t off, void *buf, uint32_t len);

struct block_cache_slot {
    uint8_t *data; /* NULL until first used */
    uint64_t index;
    uint32_t len;
    uint64_t last_use;
    bool valid;
};

struct block_cache {
    struct block_cache_slot slots[BLOCK_CACHE_MAX];
    unsigned count;     /* slots used, <= BLOCK_CACHE_MAX */
    unsigned *used;     /* the owner's blocks, all files together */
    unsigned max;       /* the owner's budget */
    uint32_t direct_max;
    uint64_t tick;
    block_fetch_fn fetch;
    void *ctx;
};

void block_cache_init(struct block_cache *bc, unsigned count, unsigned *used, unsigned max,
                      uint32_t direct_max, block_fetch_fn fetch, void *ctx);
/* Reads [off, off+len) of a file of size bytes (the caller checked the range). */
int block_cache_read(struct block_cache *bc, uint64_t size, uint64_t off, void *buf, size_t len);
/* Keeps block index (len bytes at data) as if it had been fetched. */
void block_cache_put(struct block_cache *bc, uint64_t index, const void *data, uint32_t len);
void block_cache_free(struct block_cache *bc);

#endif
