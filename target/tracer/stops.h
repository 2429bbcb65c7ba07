/* The one place that waits for traced threads and says what each stop is,
 * as strace's next_event() does.  Every waitpid() of the tracer for a
 * traced thread is stop_next(); the session's one consumer of whatever
 * stops are waiting is family_drain() (family.c), which hands each to the
 * process owning its thread.
 *
 * waitpid() results belong to the whole tracer process, not to one traced
 * process: a wait for "any thread" (-1) may return a stop of a process the
 * caller is not handling.  Such a stop is never dropped: it is held here
 * (stop_hold) and given to the next consumer that asks for it. */
#ifndef MT_TRACER_STOPS_H
#define MT_TRACER_STOPS_H

#include <stdbool.h>
#include <sys/types.h>

enum stop_kind {
    STOP_GONE,        /* exited or killed: reaped, the thread is no more */
    STOP_SIGNAL,      /* signal-delivery-stop: the program's signal `sig` */
    STOP_TRAP,        /* SIGTRAP without an event: a breakpoint or return
                       * trampoline of ours, the end of an injected call,
                       * or the program's own trap */
    STOP_GROUP,       /* PTRACE_EVENT_STOP of job control (group-stop) */
    STOP_INTERRUPT,   /* PTRACE_EVENT_STOP otherwise: our PTRACE_INTERRUPT,
                       * or a new thread's first stop */
    STOP_CLONE,       /* PTRACE_EVENT_CLONE: a new thread (event message) */
    STOP_FORK,        /* PTRACE_EVENT_FORK: a new process (event message) */
    STOP_VFORK,       /* PTRACE_EVENT_VFORK: the same, sharing the memory */
    STOP_EXEC,        /* PTRACE_EVENT_EXEC: a new program image */
    STOP_EXIT,        /* PTRACE_EVENT_EXIT: about to exit, memory still there */
    STOP_OTHER_EVENT, /* any other PTRACE_EVENT_* (not asked for) */
};

struct stop {
    pid_t tid;
    int status;          /* as waitpid() gave it */
    enum stop_kind kind;
    int sig;             /* WSTOPSIG for a stop; 0 for STOP_GONE */
};

/* Decodes one waitpid() status.  Not a stop and not an end (WIFCONTINUED,
 * which __WALL without WCONTINUED never reports) is STOP_OTHER_EVENT. */
void stop_classify(struct stop *st, pid_t tid, int status);

/* A stop of job control (a group-stop), as opposed to one of ours. */
bool is_job_control_stop(int sig);
/* A stop is a ptrace event stop (clone, fork, vfork, exec, exit, stop). */
bool stop_is_event(const struct stop *st);

#define STOP_NOHANG 1u  /* return 0 at once when no stop is waiting */
#define STOP_FRESH 2u   /* only the kernel's: skip the stops held here */

/* The next stop of thread tid, or of any traced thread (tid -1).  A stop
 * held for tid (or, for -1, held for dispatch) comes first.  1 with *st
 * filled; 0 with STOP_NOHANG when none is waiting; -errno (-ECHILD: no
 * such thread is traced).  EINTR is retried. */
int stop_next(pid_t tid, unsigned flags, struct stop *st);

/* Holds a stop taken by a wait for -1 that its taker does not handle: the
 * next stop_next(-1) (the session's drain) or stop_next(st->tid) gets it. */
void stop_hold(const struct stop *st);
/* Parks the first stop of a thread nobody owns yet (a fork child whose
 * parent's fork event is still to come): only stop_next(st->tid), the
 * wait of whoever claims it, gets it. */
void stop_park(const struct stop *st);
/* Takes a stop held or parked for tid, without waiting.  true if any. */
bool stop_take_held(pid_t tid, struct stop *st);
/* A child of the tracer that is not traced (the report child of
 * session/apart.c).  A wait for any thread may reap it; its end is then kept
 * for stop_reap_own_child() instead of being handed out as a stop.  One at
 * a time. */
void stop_own_child(pid_t pid);
/* The wait status of that child: kept, or waited for now.  -errno if it
 * cannot be had.  The child is forgotten afterwards. */
int stop_reap_own_child(pid_t pid, int *status);
/* Forgets every held and parked stop (the end of the session). */
void stop_forget_all(void);

#endif
