/* A bounded history of freed heap blocks with the stacks of their allocation
 * and of their release, so that a second release of the same memory can be
 * named as valgrind names it ("... free'd at", "Block was alloc'd at").
 *
 * Filling it costs a stack capture per free, so the engine keeps one only
 * under --check.  It holds the most recent FREED_HISTORY_DEFAULT releases
 * (valgrind keeps a volume of freed memory instead); older ones fall out and
 * a second free of such a block reads as a free of unknown memory. */
#ifndef MT_HEAP_FREED_H
#define MT_HEAP_FREED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/heap/heap.h"

#define FREED_HISTORY_DEFAULT 65536u

struct freed_block {
    struct heap_block block;   /* as it was while live (stack_id: the allocation's) */
    uint32_t free_stack;       /* stack of the call that released it */
};

struct freed_history;

/* capacity: the number of releases remembered (at least 1). */
struct freed_history *freed_history_new(size_t capacity);
void freed_history_free(struct freed_history *h);
/* A copy (for a forked child, whose heap is a copy of its parent's). */
struct freed_history *freed_history_clone(const struct freed_history *h);

void freed_history_push(struct freed_history *h, const struct heap_block *block,
                        uint32_t free_stack);

/* The most recent release whose block contains addr ([addr, addr + size),
 * or addr itself for a block of size 0).  Linear in the history: called on
 * errors only. */
bool freed_history_find(const struct freed_history *h, uint64_t addr, struct freed_block *out);

size_t freed_history_count(const struct freed_history *h);

#endif
