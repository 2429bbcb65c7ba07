/* The mapping ledger of the heap books (heap.h, "Mapping ledger"): the
 * regions the mmap family made, sorted and disjoint, each with the stack
 * that mapped it.  The books keep their totals from what these calls
 * return, so that loaded books (a replay) keep their loaded figures. */
#ifndef MT_HEAP_MAP_LEDGER_H
#define MT_HEAP_MAP_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/heap/heap.h"

struct map_ledger {
    struct heap_region *regions;      /* sorted, disjoint */
    size_t count, cap;
};

/* [addr, addr + len rounded up to pages), clamped at the top of the
 * space; false when that is empty. */
bool map_ledger_pages(uint64_t addr, uint64_t len, uint64_t *start, uint64_t *end);
/* Removes [s, e), trimming or splitting the regions it overlaps; returns
 * the bytes removed. */
uint64_t map_ledger_cut(struct map_ledger *l, uint64_t s, uint64_t e);
/* Adds [s, e) for stack_id, replacing what it overlaps (MAP_FIXED);
 * *removed is what went. */
void map_ledger_add(struct map_ledger *l, uint64_t s, uint64_t e, uint32_t stack_id, uint64_t *removed);
void map_ledger_clone(struct map_ledger *to, const struct map_ledger *from);
size_t map_ledger_memory(const struct map_ledger *l);
void map_ledger_free(struct map_ledger *l);

#endif
