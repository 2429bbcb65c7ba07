/* The guardian: what undoes memtrace's changes to the target when the
 * tracer dies without detaching (SIGKILL, a crash).
 *
 * memtrace splits in two at start: the process the user started (its pid is
 * what shells, systemd and timeout(1) hold) becomes a small supervisor, and
 * the tracer runs in its child.  The supervisor forwards SIGINT/SIGTERM/
 * SIGHUP sent to it, mirrors the tracer's exit status, and:
 *  - if the supervisor itself is killed, the tracer gets SIGTERM
 *    (PR_SET_PDEATHSIG) and detaches cleanly;
 *  - if the tracer dies first, the supervisor writes back every breakpoint's
 *    original bytes and every displaced return address, from a shared-memory
 *    copy the tracer keeps current, through the tracer's /proc/PID/mem
 *    descriptor (passed over a socket; bound to the target's address space,
 *    so a reused pid can never receive the writes).
 * Without guardian_start() (unit tests, --addr2line) every hook is a no-op.
 * See docs/reliability.md for what this cannot save. */
#ifndef MT_TRACER_GUARDIAN_H
#define MT_TRACER_GUARDIAN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Forks; returns in the child (the tracer).  The parent supervises and
 * exits with the child's status, never returning.  If the split cannot be
 * made, returns -1 and tracing runs unguarded. */
int guardian_start(void);

/* The target's memory descriptor, after attach and after every exec.  The
 * first pid watched is the one guarded: the note/forget calls below name
 * the process they concern and are ignored for any other (the children
 * followed with -f are not guarded). */
void guardian_watch(pid_t pid, int mem_fd);

/* The tracer has finished cleanly (detached, or the target is gone):
 * nothing is left to undo.  Returns once the supervisor has passed on
 * every ending signal sent to it so far (or after a bound, if it does not
 * answer), so that session_end_signals() drops them all. */
void guardian_release(void);

/* Call before writing the breakpoint / trampoline into the target, and
 * forget once the original is back, so a death in between finds the
 * target's memory and the table in agreement. */
void guardian_note_breakpoint(pid_t pid, uint64_t addr, const uint8_t *orig, const uint8_t *insn, size_t len);
void guardian_forget_breakpoint(pid_t pid, uint64_t addr);
void guardian_note_return(pid_t pid, uint64_t slot, uint64_t orig, uint64_t tramp, unsigned size);
void guardian_forget_return(pid_t pid, uint64_t slot);
/* exec: a new address space, nothing of the old one to restore. */
void guardian_forget_all(pid_t pid);

#endif
