/* Every process a session traces: the first one (started or attached) and,
 * under -f/--follow-fork, the processes it forks (and theirs), each with
 * its own threads, breakpoints, books and report.  family_drain() is the
 * session's one consumer of stops (stops.h): each goes to the process
 * owning its tid; a stop of a tid nobody owns yet (a fork child whose
 * parent's fork event is still to come) is parked until that event claims
 * it. */
#ifndef MT_TRACER_FAMILY_H
#define MT_TRACER_FAMILY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct tracee;
struct stop;

struct family {
    struct tracee **procs;     /* procs[0] is the first process; then by birth */
    size_t count, cap;
};

/* Adds t (procs[0] first) and points t->family at f. */
void family_add(struct family *f, struct tracee *t);
/* The process whose thread tid is, or NULL. */
struct tracee *family_owner(const struct family *f, pid_t tid);
/* Hands one stop to the process owning its thread (or parks it). */
void family_dispatch(struct family *f, const struct stop *st);
/* Dispatches every stop waiting: those held back while one process was
 * being stopped (world.c), then the kernel's, without blocking. */
void family_drain(struct family *f);
/* The same for at most max stops; true when more may be waiting. */
bool family_drain_batch(struct family *f, unsigned max);
/* Every process is gone. */
bool family_finished(const struct family *f);
/* Detaches from every process still there (children born meanwhile too). */
void family_detach(struct family *f);
/* Frees every process and the family's own memory. */
void family_free(struct family *f);

#endif
