/* Valgrind's client requests honoured without valgrind (docs/custom-heaps.md):
 * the request sites (arch_client_request) of every module get a breakpoint
 * on their request instruction, under either engine; a thread that reaches
 * one stops, its request is read (client_request_decode.h) and booked as
 * memcheck books it, and it goes on past the instruction with the default
 * result (RUNNING_ON_VALGRIND stays 0: the program takes its own path). */
#ifndef MT_TRACER_CLIENT_REQUESTS_H
#define MT_TRACER_CLIENT_REQUESTS_H

#include "target/tracer/tracee.h"

struct module;

/* The request sites in m's executable code get their breakpoints (th, a
 * stopped thread of t).  Once per module. */
void client_requests_place(struct tracee *t, struct module *m);
/* th stopped on bp (bp->client_request), regs with the PC on it: the
 * request is booked and the PC moved past the request instruction.  The
 * caller writes regs back and resumes. */
void client_request_trap(struct tracee *t, struct thread *th, const struct breakpoint *bp,
                         struct arch_regs *regs);

#endif
