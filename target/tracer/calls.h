/* What happens at an intercepted function's entry and at its return. */
#ifndef MT_TRACER_CALLS_H
#define MT_TRACER_CALLS_H

#include "target/tracer/tracee.h"

/* th stopped on bp (a function entry); regs are its registers with the PC
 * already moved back onto the breakpoint.  Records what must be recorded,
 * arranges the return catch and moves the thread past the displaced
 * instruction.  The caller writes regs back and resumes. */
void call_on_entry(struct tracee *t, struct thread *th, struct breakpoint *bp, struct arch_regs *regs);
/* th stopped on a return trampoline. */
void call_on_return(struct tracee *t, struct thread *th, struct arch_regs *regs);
/* Undoes the return catches of th (detach): every displaced return address
 * goes back where it was. */
void call_restore_returns(struct tracee *t, struct thread *th);

/* The return address of a thread stopped at a function's first
 * instruction, and where it is kept. */
uint64_t call_return_address(struct tracee *t, const struct arch_regs *regs,
                             struct arch_return_slot *slot);

/* capture.c: the stack of the thread at a function's entry, interned. */
uint32_t capture_stack(struct tracee *t, const struct arch_regs *regs);

#endif
