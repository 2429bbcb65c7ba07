/* The allocators of one process: the modules whose allocation functions
 * are intercepted (libc, libjemalloc.so.2, the executable of a static
 * link...), with the calls of the program each one took, for the reports
 * ("allocators").  A module that defines both a malloc and a free of its
 * own is a heap: the books tag its blocks with its heap id, so that a
 * block released by another heap's function is an error naming both. */
#ifndef MT_TRACER_ALLOCATORS_H
#define MT_TRACER_ALLOCATORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Heap ids the books can hold (heap.h): 1..ALLOCATORS_HEAP_MAX. */
#define ALLOCATORS_HEAP_MAX 15

struct allocator {
    char *path;
    uint64_t module_start;  /* 0 once unmapped */
    bool heap;
    unsigned heap_id;       /* 0: not a heap, or past ALLOCATORS_HEAP_MAX */
    uint64_t calls;         /* the program's heap calls recorded through it (not mmap's) */
};

struct allocators {
    struct allocator *v;
    size_t count, cap;
    unsigned heaps;         /* heap ids given */
};

/* The id (1-based, 0 never) of the module mapped at start with path,
 * added when new. */
unsigned allocators_note(struct allocators *a, const char *path, uint64_t start, bool heap);
/* The heap id blocks of allocator id carry (0: none).  Inline: asked
 * twice per call replayed. */
static inline unsigned allocators_heap_of(const struct allocators *a, unsigned id)
{
    return id && id <= a->count ? a->v[id - 1].heap_id : 0;
}
/* The path of the allocator with heap id h, or NULL. */
const char *allocators_heap_path(const struct allocators *a, unsigned h);
static inline void allocators_count(struct allocators *a, unsigned id)
{
    if (id && id <= a->count)
        a->v[id - 1].calls++;
}
/* The module at start is gone: a module mapped there later is another. */
void allocators_gone(struct allocators *a, uint64_t start);
/* The allocators by calls taken, most first (ties: first noted first):
 * *order gets a new array of indexes into a->v.  Returns its length. */
size_t allocators_ordered(const struct allocators *a, size_t **order);
void allocators_copy(struct allocators *dst, const struct allocators *src);
void allocators_reset(struct allocators *a);

#endif
