/* Interning table of call stacks.
 *
 * Every allocation carries a stack of return addresses; the same call sites
 * repeat millions of times, so each distinct stack is stored once and named by
 * a small dense id (1, 2, 3, ...; 0 is never returned and means "no stack" to
 * the books).  PCs are opaque 64-bit values: a flag in a high bit (such as the
 * unwinder's "exact pc" bit 63) is simply part of the value, so two stacks that
 * differ only in that bit are different stacks. */
#ifndef MT_HEAP_STACKS_H
#define MT_HEAP_STACKS_H

#include <stddef.h>
#include <stdint.h>

struct stack_table;

struct stack_table *stack_table_new(void);
void stack_table_free(struct stack_table *t);

/* A copy with the same ids (a forked child's books refer to them). */
struct stack_table *stack_table_clone(const struct stack_table *t);

/* Same pcs (same order, same count) -> same id.  n may be 0 (an empty stack
 * is a stack like any other).  Never fails (out of memory exits). */
uint32_t stack_table_intern(struct stack_table *t, const uint64_t *pcs, unsigned n);

/* The pcs of stack id, or NULL with *n = 0 for an id never returned.  The
 * pointer stays valid until stack_table_free: the pcs live in an arena whose
 * chunks never move. */
const uint64_t *stack_table_pcs(const struct stack_table *t, uint32_t id, unsigned *n);

/* Number of distinct stacks; the valid ids are 1..count. */
size_t stack_table_count(const struct stack_table *t);

/* Bytes the table holds (arena, entries, index), for memory budgets. */
size_t stack_table_memory(const struct stack_table *t);

#endif
