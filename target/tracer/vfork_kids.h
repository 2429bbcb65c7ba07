/* Unfollowed vfork children (no -f), kept attached until they exec or
 * exit, as the kernel keeps a forked task's uprobes: such a child runs in
 * its parent's memory, so the parent's breakpoints are in its way (exit()
 * under -a, any intercepted call under the breakpoint engine).  Detached,
 * it died of SIGTRAP at the first one.  Kept, its heap calls are booked in
 * its parent's books (the heap is the parent's: what it mallocs the parent
 * may free), each with a struct thread of its own outside the parent's
 * table; its other breakpoint stops move it past the displaced instruction,
 * as its parent's would, recording nothing.  Its exec (a new image: none
 * of our traps) or its exit lets it go.  A process it makes meanwhile is
 * kept the same way. */
#ifndef MT_TRACER_VFORK_KIDS_H
#define MT_TRACER_VFORK_KIDS_H

#include <stdbool.h>
#include <sys/types.h>

struct tracee;
struct family;
struct stop;

/* t's vfork child `child`, not followed: its first stop is taken (parked
 * or waited for) and it runs on, kept. */
void vfork_kid_keep(struct tracee *t, pid_t child);
/* The process keeping tid, or NULL. */
struct tracee *vfork_kid_keeper(const struct family *f, pid_t tid);
/* One stop of a kept child of t (handled: it runs on, or is let go). */
void vfork_kid_stop(struct tracee *t, const struct stop *st);
/* Before t's detach: each kept child runs until it execs or exits (t's
 * vforking thread cannot stop before that, nor can its breakpoints go
 * while the child may still meet them). */
void vfork_kids_finish(struct tracee *t);

#endif
