#include "target/tracer/world.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "shared/xalloc.h"
#include "target/tracer/engine.h"
#include "target/tracer/vfork_kids.h"

static void note_stopped(struct world_stop *ws, pid_t tid)
{
    for (unsigned i = 0; i < ws->nstopped; i++)
        if (ws->stopped[i] == tid)
            return;
    ws->stopped = xreallocarray(ws->stopped, ws->nstopped + 1, sizeof(*ws->stopped));
    ws->stopped[ws->nstopped++] = tid;
}

/* Interrupts every thread that runs and is not interrupted yet (new threads
 * appear while we wait); true if any thread is still to be waited for. */
static bool interrupt_running(struct tracee *t, struct world_stop *ws)
{
    bool waiting = false;
    for (unsigned i = 0; i < t->threads_cap; i++) {
        struct thread *th = t->threads[i];
        if (!th)
            continue;
        if ((th->state == THREAD_RUNNING || th->state == THREAD_NEW) && !th->interrupt_requested &&
            ptrace(PTRACE_INTERRUPT, th->tid, NULL, NULL) == 0) {
            th->interrupt_requested = true;
            note_stopped(ws, th->tid);
        }
        waiting |= th->interrupt_requested;
    }
    return waiting;
}

/* A thread of t, known or not yet (its first stop before its creator's
 * clone event). */
static bool is_ours(struct tracee *t, const struct stop *st)
{
    if (thread_find(t, st->tid))
        return true;
    return st->kind != STOP_GONE && thread_group_of(st->tid) == t->pid;
}

/* The next stop for this world stop: one held back earlier for a thread
 * of t first (it may be the very stop we wait for), then the kernel's. */
static int next_stop(struct tracee *t, struct stop *st)
{
    for (unsigned i = 0; i < t->threads_cap; i++)
        if (t->threads[i] && stop_take_held(t->threads[i]->tid, st))
            return 1;
    return stop_next(-1, STOP_FRESH, st);
}

int tracer_stop_world(struct tracee *t, struct world_stop *ws)
{
    memset(ws, 0, sizeof(*ws));
    while (interrupt_running(t, ws)) {
        struct stop st;
        int rc = next_stop(t, &st);
        if (rc < 0)
            return rc;
        struct tracee *keeper = t->family ? vfork_kid_keeper(t->family, st.tid) : NULL;
        if (keeper) {
            /* An unfollowed vfork child, kept: t's vforking thread stops
             * only once it execs or exits, so it must run on now.  Its stop
             * touches no books. */
            vfork_kid_stop(keeper, &st);
            continue;
        }
        if (!is_ours(t, &st)) {
            /* Another traced process's stop (-f): it waits, stopped, for
             * the session's next drain; handling it here could start its
             * own exit hook in the middle of this one. */
            stop_hold(&st);
            continue;
        }
        struct thread *th = thread_find(t, st.tid);
        if (th && th->interrupt_requested &&
            (st.kind == STOP_INTERRUPT || st.kind == STOP_GROUP || st.kind == STOP_EXIT)) {
            th->state = THREAD_STOPPED;
            th->interrupt_requested = false;
            if (st.kind == STOP_EXIT) {
                /* Its exit hooks (the leak scan at exit, the agent's
                 * books) run when the world resumes: the one stop a thread
                 * reports at its end must not be lost to this one. */
                th->exit_held = true;
                ws->nexiting++;
            }
            else if (st.kind == STOP_GROUP)
                th->group_stopped = true;
            continue;
        }
        /* Anything else (a trap of ours, a clone, a signal, a death) is
         * the engine's business.  The kernel ends a pending interrupt at
         * any trap (ptrace_stop clears JOBCTL_TRAP_STOP): a thread the
         * engine lets run on is interrupted again. */
        tracer_handle_stop(t, &st);
        th = thread_find(t, st.tid);
        if (th && th->state != THREAD_STOPPED)
            th->interrupt_requested = false;
    }
    for (unsigned i = 0; i < ws->nstopped; i++) {
        struct thread *th = thread_find(t, ws->stopped[i]);
        if (th && th->state == THREAD_STOPPED)
            ws->nalive++;
    }
    ws->nalive -= ws->nexiting;
    return 0;
}

void tracer_resume_world(struct tracee *t, struct world_stop *ws)
{
    for (unsigned i = 0; i < ws->nstopped; i++) {
        struct thread *th = thread_find(t, ws->stopped[i]);
        if (!th) {
            continue;
        } else if (th->exit_held && th->state == THREAD_STOPPED) {
            th->exit_held = false;
            tracer_exit_stop(t, th); /* may stop the world again: ws is ours */
        } else {
            thread_resume_stopped(th);
        }
    }
    free(ws->stopped);
    memset(ws, 0, sizeof(*ws));
}
