/* Stopping every thread of the traced process for a moment and letting
 * them go again (the leak scan reads a frozen process).  Events that arrive
 * while the threads stop (breakpoint traps, clones, signals) are handled as
 * the event loop would; a thread that reports its exit stop meanwhile is
 * kept there (its registers and stack are still readable), and its exit
 * hooks run when tracer_resume_world lets it go (tracer_exit_stop).  A stop of
 * another traced process met meanwhile (-f) is held for the session's
 * next drain (stops.h), never dropped. */
#ifndef MT_TRACER_WORLD_H
#define MT_TRACER_WORLD_H

#include <sys/types.h>

#include "target/tracer/tracee.h"

struct world_stop {
    pid_t *stopped;        /* threads this stop put in a ptrace-stop */
    unsigned nstopped;
    unsigned nexiting;     /* of them, in their exit stop */
    unsigned nalive;       /* of them, stopped while alive (not exiting) */
};

/* Every thread not already in a ptrace-stop is interrupted and waited for.
 * Returns 0 (threads that vanished meanwhile are simply gone), or -errno
 * when waiting fails. */
int tracer_stop_world(struct tracee *t, struct world_stop *ws);
/* Resumes the threads tracer_stop_world stopped (job-control stops go back
 * to PTRACE_LISTEN) and frees ws. */
void tracer_resume_world(struct tracee *t, struct world_stop *ws);

#endif
