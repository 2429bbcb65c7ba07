/* Custom blocks in the leak scan, by memcheck's rules (mc_leakcheck.c):
 * the pieces of valgrind mempools are blocks of the scan, and a block
 * that holds custom blocks (an arena's malloc'ed superblock, with
 * MALLOCLIKE blocks or mempool pieces in it) is not one: its memory is
 * neither a block nor a root. */
#ifndef MT_LEAK_LEAK_CUSTOM_H
#define MT_LEAK_LEAK_CUSTOM_H

#include <stdbool.h>
#include <stddef.h>

#include "target/heap/custom_pools.h"
#include "target/heap/heap.h"
#include "target/leak/leak_scan.h"

/* blocks[0..*n) (sorted by address, with *forgotten beside them) get the
 * pools' pieces and lose the blocks that hold custom blocks; those blocks'
 * ranges are added to *hidden (*nhidden of them, a new array).  Nothing
 * changes when there is no custom block. */
void leak_custom_blocks(const struct custom_pools *pools, struct heap_block **blocks, size_t *n,
                        bool **forgotten, struct leak_range **hidden, size_t *nhidden);

#endif
