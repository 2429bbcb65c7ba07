/* Return stubs, one per call site of an intercepted function: "trap, then
 * jump to the call site's return address".  A call whose return address is
 * replaced by its site's stub stops on return like with the shared
 * trampoline, but the thread then resumes where it stopped: the return stop
 * writes no register (the shared trampoline needs the PC set to the real
 * return address).  Stubs live in pages of their own in the target, made on
 * first use of a site and never freed while the address space lasts. */
#ifndef MT_TRACER_RETURN_SITES_H
#define MT_TRACER_RETURN_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tracee;
struct thread;

/* The stub that returns to ret_addr; 0 when there is none and none can be
 * made (no stubs on this CPU, no page, the budget is spent): the caller
 * then uses the shared trampoline.  th is stopped (a page may be mapped
 * by a system call injected into it). */
uint64_t return_stub_for(struct tracee *t, struct thread *th, uint64_t ret_addr);

/* Is pc the start of a stub?  *ret_addr (when not NULL) receives where the
 * stub jumps to. */
bool return_stub_at(const struct tracee *t, uint64_t pc, uint64_t *ret_addr);

/* The stubs of a forked child: its memory holds copies of parent's pages,
 * so it gets the same table (child has none yet). */
void return_sites_clone(struct tracee *child, const struct tracee *parent);

/* Forgets every stub (exec: the address space is new; or the end). */
void return_sites_free(struct tracee *t);

/* Bytes the tracer holds for stubs. */
size_t return_sites_memory(const struct tracee *t);

#endif
