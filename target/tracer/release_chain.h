/* Release functions that hand over to one another by a tail call. */
#ifndef MT_TRACER_RELEASE_CHAIN_H
#define MT_TRACER_RELEASE_CHAIN_H

#include <stdbool.h>

#include "target/tracer/tracee.h"

/* th entered the intercepted function fn (sp: its stack pointer at the
 * first instruction, ret_addr its return address or 0 when not read, ptr
 * the pointer a release gives back); called at every entry.  True
 * when fn releases and this is the same release still going on:
 * libstdc++'s sized operator delete jumps to the plain one, which jumps to
 * free, so all three are entered with the same stack pointer, return
 * address and pointer, and only the first counts. */
bool release_continues(struct thread *th, const struct intercept_fn *fn, uint64_t sp,
                       uint64_t ret_addr, uint64_t ptr);

#endif
