/* The tracer's public face: start or attach, feed it stops, detach. */
#ifndef MT_TRACER_ENGINE_H
#define MT_TRACER_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "target/tracer/tracee.h"

/* Starts argv[0] (searched in PATH) under the tracer.  NULL with a one-line
 * reason in err. */
struct tracee *tracer_launch(char *const argv[], const struct tracer_options *opts,
                             struct file_locator *loc, char *err, size_t errlen);
/* Attaches to every thread of a running process. */
struct tracee *tracer_attach(pid_t pid, const struct tracer_options *opts, struct file_locator *loc,
                             char *err, size_t errlen);
/* A new tracee for process pid, with empty books (engine.c). */
struct tracee *tracee_create(pid_t pid, const struct tracer_options *opts, struct file_locator *loc);
/* The stopped thread `parent` of t made process child (fork.c): followed
 * under -f, else let go with our traps undone in its memory.  shares_vm:
 * a vfork child, running in t's memory until it execs. */
void tracer_new_process(struct tracee *t, struct thread *parent, pid_t child, bool shares_vm);
/* Handles one stop of one of t's threads (stops.h); a stop of another
 * process's thread that t cannot own is parked for its claimer. */
void tracer_handle_stop(struct tracee *t, const struct stop *st);
/* The engine's work at a thread's exit stop (the agent's books, the exit
 * hook), then the thread goes on to its end. */
void tracer_exit_stop(struct tracee *t, struct thread *th);
/* Stops every thread, restores every breakpoint and return address, and
 * lets the process go. */
void tracer_detach(struct tracee *t);
void tracer_free(struct tracee *t);
/* The process is gone (all threads reaped). */
bool tracer_finished(const struct tracee *t);
/* The process exec'ed a program this memtrace cannot trace (another word
 * size): the session should detach and report. */
bool tracer_cannot_follow(const struct tracee *t);

#endif
