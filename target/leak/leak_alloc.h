/* The allocator's own memory in a traced process: the leak scan reads it as
 * roots with the allocator's rule (leak_scan.h, alloc_roots). */
#ifndef MT_LEAK_LEAK_ALLOC_H
#define MT_LEAK_LEAK_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

#include "target/leak/leak_scan.h"

/* A growing list of ranges; leak_ranges_push merges a range that starts
 * where the last one ends.  Shared by the root-set code. */
struct leak_ranges {
    struct leak_range *r;
    size_t n, cap;
};
void leak_ranges_push(struct leak_ranges *l, uint64_t lo, uint64_t hi);

/* The first of blocks[0..n) (sorted by address) with addr >= a. */
size_t leak_first_block_from(const struct heap_block *b, size_t n, uint64_t a);

/* Ranges of maps_text (as in /proc/PID/maps) that belong to the allocator:
 * the mappings of the files in alloc_paths[0..npaths) (the modules whose
 * malloc is intercepted: libc.so.6, ld-musl, a static executable) with the
 * anonymous mapping right after each (its .bss), and every mapping that
 * holds heap blocks (chunk headers, free chunks; when attached, also the
 * blocks made before memtrace came).  Sorted by address. */
struct leak_range *leak_allocator_ranges(const char *maps_text, size_t len,
                                         const char *const *alloc_paths, size_t npaths,
                                         const struct heap_block *blocks, size_t nblocks,
                                         size_t *count);

/* Moves the parts of roots[0..*nroots) inside alloc[0..nalloc) (sorted) to
 * a new array (returned, *nout ranges); roots keeps the rest, in order. */
struct leak_range *leak_split_roots(struct leak_range **roots, size_t *nroots,
                                    const struct leak_range *alloc, size_t nalloc, size_t *nout);


/* glibc's main heap, [lo, hi) (the [heap] mapping) whose bytes are mem,
 * walked chunk by chunk: the memory of its chunks that are in use but
 * hold no known block (blocks made before memtrace attached), as roots.
 * Free chunks (the next chunk's PREV_INUSE bit clear, or tcache entries:
 * the tcache key, learnt from the tcache of the heap's first chunk, in
 * their second word), the top chunk and the chunk headers are left out:
 * their stale pointers keep nothing alive.  Fastbin chunks look in use and
 * stay roots.  Returns NULL with *count 0 when the memory does not walk as
 * glibc's heap (then the caller keeps the whole of it). */
struct leak_range *leak_glibc_heap_roots(const uint8_t *mem, uint64_t lo, uint64_t hi,
                                         unsigned word_size, const struct heap_block *blocks,
                                         size_t nblocks, size_t *count);

#endif
