#include "target/heap/allocators.h"

#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"

unsigned allocators_note(struct allocators *a, const char *path, uint64_t start, bool heap)
{
    for (size_t i = 0; i < a->count; i++)
        if (a->v[i].module_start == start && strcmp(a->v[i].path, path) == 0)
            return (unsigned)i + 1;
    if (a->count == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 8;
        a->v = xreallocarray(a->v, a->cap, sizeof(*a->v));
    }
    struct allocator *n = &a->v[a->count++];
    memset(n, 0, sizeof(*n));
    n->path = xstrdup(path);
    n->module_start = start;
    n->heap = heap;
    /* A library unloaded and loaded again is the same heap (its blocks
     * from before may be released now); a second copy mapped at once
     * (dlmopen's namespaces) is another one. */
    for (size_t i = 0; heap && i + 1 < a->count; i++)
        if (a->v[i].heap && !a->v[i].module_start && strcmp(a->v[i].path, path) == 0)
            n->heap_id = a->v[i].heap_id;
    if (heap && !n->heap_id && a->heaps < ALLOCATORS_HEAP_MAX)
        n->heap_id = ++a->heaps;
    return (unsigned)a->count;
}

const char *allocators_heap_path(const struct allocators *a, unsigned h)
{
    for (size_t i = 0; h && i < a->count; i++)
        if (a->v[i].heap_id == h)
            return a->v[i].path;
    return NULL;
}

void allocators_gone(struct allocators *a, uint64_t start)
{
    for (size_t i = 0; i < a->count; i++)
        if (a->v[i].module_start == start)
            a->v[i].module_start = 0;
}

size_t allocators_ordered(const struct allocators *a, size_t **order)
{
    *order = NULL;
    if (!a->count)
        return 0;
    size_t *o = xreallocarray(NULL, a->count, sizeof(*o));
    for (size_t i = 0; i < a->count; i++) {
        size_t k = i;
        /* insertion: few allocators, stable */
        while (k > 0 && a->v[o[k - 1]].calls < a->v[i].calls) {
            o[k] = o[k - 1];
            k--;
        }
        o[k] = i;
    }
    *order = o;
    return a->count;
}

void allocators_copy(struct allocators *dst, const struct allocators *src)
{
    memset(dst, 0, sizeof(*dst));
    if (!src->count)
        return;
    dst->v = xreallocarray(NULL, src->count, sizeof(*dst->v));
    dst->count = dst->cap = src->count;
    dst->heaps = src->heaps;
    for (size_t i = 0; i < src->count; i++) {
        dst->v[i] = src->v[i];
        dst->v[i].path = xstrdup(src->v[i].path);
    }
}

void allocators_reset(struct allocators *a)
{
    for (size_t i = 0; i < a->count; i++)
        free(a->v[i].path);
    free(a->v);
    memset(a, 0, sizeof(*a));
}
