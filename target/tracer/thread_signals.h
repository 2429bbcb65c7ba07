/* What the kernel holds for one thread that ptrace does not report. */
#ifndef MT_TRACER_THREAD_SIGNALS_H
#define MT_TRACER_THREAD_SIGNALS_H

#include <stdbool.h>
#include <sys/types.h>

/* Is signal sig queued for thread tid alone (its private pending set, where
 * the kernel puts the SIGTRAP of an int3/brk it just executed)? */
bool thread_signal_pending(pid_t tid, int sig);

#endif
