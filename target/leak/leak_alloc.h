/* The allocator's own memory in a traced process: the leak scan reads it as
 * roots with the allocator's rule (leak_scan.h, alloc_roots). */
#ifndef MT_LEAK_LEAK_ALLOC_H
#define MT_LEAK_LEAK_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

#include "target/leak/leak_scan.h"

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

#endif
