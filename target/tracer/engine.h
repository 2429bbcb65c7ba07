/* The tracer's public face: start or attach, feed it wait statuses, detach. */
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
/* Handles one waitpid() result. */
void tracer_handle_status(struct tracee *t, pid_t tid, int status);
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
