/* What happens at an intercepted function's entry and at its return. */
#ifndef MT_TRACER_CALLS_H
#define MT_TRACER_CALLS_H

#include "target/tracer/tracee.h"

/* th stopped on bp (a function entry); regs are its registers with the PC
 * already moved back onto the breakpoint.  Records what must be recorded,
 * arranges the return catch and moves the thread past the displaced
 * instruction.  The caller writes regs back and resumes. */
void call_on_entry(struct tracee *t, struct thread *th, struct breakpoint *bp, struct arch_regs *regs);
/* regs at bp (the PC on it): the PC moves past the displaced instruction,
 * nothing recorded (an unfollowed vfork child's other traps, vfork_kids.c). */
void call_skip_breakpoint(const struct breakpoint *bp, struct arch_regs *regs);
/* th stopped on a return trampoline. */
void call_on_return(struct tracee *t, struct thread *th, struct arch_regs *regs);
/* Undoes the return catches of th (detach): every displaced return address
 * goes back where it was. */
void call_restore_returns(struct tracee *t, struct thread *th);
/* Every open call of th (stopped, its stack pointer sp; 0: unknown) gets
 * its return address back and is forgotten (detach). */
void call_abandon_returns(struct tracee *t, struct thread *th, uint64_t sp);
/* The register-held returns of th (ret_slot 0) whose trampoline address a
 * callee saved on the stack between sp and each call's entry sp, put back
 * in mem (the thread's or a forked child's copy).  Returns how many copies
 * could not be written. */
unsigned call_restore_saved_returns(struct tracee *t, struct target_mem *mem, const struct thread *th,
                                    uint64_t sp);

/* The books' side of a release the program made, and of a call's result:
 * the agent engine (target/agent) replays its recorded calls through them. */
void call_record_release(struct tracee *t, struct thread *th, const struct intercept_fn *fn,
                         uint64_t entry, unsigned alloc_id, const struct arch_regs *regs,
                         uint64_t addr, uint64_t ret_addr);
/* The book entries of a finished call c with result r (c->stack_id its
 * stack; c->args[0] of strdup the copy's size, c->out of posix_memalign
 * the pointer it stored).  parts: CALL_BOOK_ALL, or realloc's release and
 * new block one at a time (intercept_is_realloc_op). */
enum call_book { CALL_BOOK_RELEASE = 1, CALL_BOOK_ALLOC = 2, CALL_BOOK_ALL = 3 };
void call_record_result(struct tracee *t, const struct pending_call *c, uint64_t r,
                        enum call_book parts);

/* capture.c: the stack of the thread at a function's entry, interned. */
uint32_t capture_stack(struct tracee *t, const struct arch_regs *regs);

/* The stack of one stopped thread, read at most once per stop: the first
 * read fetches a window above sp in one system call, later reads inside it
 * cost none.  Valid for one stop only (the thread changes its stack when it
 * runs). */
struct stack_window {
    struct tracee *t;
    uint64_t base;
    size_t have;
    bool loaded;
};
void stack_window_init(struct stack_window *w, struct tracee *t, uint64_t sp);
int stack_window_read(struct stack_window *w, uint64_t addr, void *buf, size_t len);
/* capture_stack through a window the caller already uses this stop. */
uint32_t capture_stack_in(struct stack_window *w, const struct arch_regs *regs);

/* The return address of a thread stopped at a function's first
 * instruction, and where it is kept (read through w when in memory). */
uint64_t call_return_address(struct stack_window *w, const struct arch_regs *regs,
                             struct arch_return_slot *slot);

#endif
