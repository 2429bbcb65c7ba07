/* Allocator misuse: releases of memory that is not a live block, or of a
 * block of another family, found on the release path and reported with the
 * stack of the bad call and of the block's allocation (and first release,
 * under --check).  Nothing here runs for a correct release except the
 * tail-call test and, under --check, the history push. */
#ifndef MT_TRACER_MISUSE_H
#define MT_TRACER_MISUSE_H

#include "target/heap/heap.h"
#include "target/tracer/tracee.h"

/* Is this release entry the continuation of the thread's previous one
 * (sized operator delete jumping to operator delete jumping to free)?
 * Updates the thread's mark either way. */
bool misuse_release_continues(struct thread *th, uint64_t entry, uint64_t sp, uint64_t ret_addr,
                              uint64_t ptr);

/* th entered an allocation function: no release goes on after it. */
static inline void misuse_end_release_chain(struct thread *th) { th->last_release.head = 0; }

/* A correct release of blk (--check: remembered with the stack of regs). */
void misuse_released(struct tracee *t, const struct arch_regs *regs, const struct heap_block *blk);
/* A block released by realloc, whose call stack was captured already. */
void misuse_reallocated(struct tracee *t, const struct heap_block *blk, uint32_t call_stack);

/* heap_record_free said r (not HEAP_FREE_OK) for ptr released by fn (of
 * the heap released_by, heap.h) in th; freed is the block on
 * HEAP_FREE_MISMATCH and HEAP_FREE_OTHER_HEAP. */
void misuse_bad_release(struct tracee *t, struct thread *th, const struct arch_regs *regs,
                        const struct intercept_fn *fn, unsigned released_by, uint64_t ptr,
                        enum heap_free_result r, const struct heap_block *freed);

/* The same, for a release whose call stack was captured already (a
 * release booked at its function's return, by thread tid). */
void misuse_bad_release_at(struct tracee *t, int tid, const struct intercept_fn *fn,
                           unsigned released_by, uint64_t ptr, enum heap_free_result r,
                           const struct heap_block *freed, uint32_t call_stack);

/* realloc(ptr, ...) entered with a ptr that must be a live block. */
void misuse_check_realloc(struct tracee *t, struct thread *th, const struct intercept_fn *fn,
                          uint64_t ptr, uint32_t call_stack);

/* Frees the misuse state of t (errors, history). */
void misuse_reset(struct tracee *t);

#endif
