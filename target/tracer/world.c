#include "target/tracer/world.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "shared/xalloc.h"
#include "target/tracer/engine.h"

static void note_stopped(struct world_stop *ws, pid_t tid)
{
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

int tracer_stop_world(struct tracee *t, struct world_stop *ws)
{
    memset(ws, 0, sizeof(*ws));
    while (interrupt_running(t, ws)) {
        int status;
        pid_t tid = waitpid(-1, &status, __WALL);
        if (tid < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        struct thread *th = thread_find(t, tid);
        int event = (status >> 16) & 0xff;
        if (th && th->interrupt_requested && WIFSTOPPED(status) &&
            (event == PTRACE_EVENT_STOP || event == PTRACE_EVENT_EXIT)) {
            th->state = THREAD_STOPPED;
            th->interrupt_requested = false;
            if (event == PTRACE_EVENT_EXIT)
                ws->nexiting++;
            else if (is_job_control_stop(WSTOPSIG(status)))
                th->group_stopped = true;
            continue;
        }
        /* Anything else (a trap of ours, a clone, a signal, a death) is
         * the engine's business; the interrupt stays pending. */
        tracer_handle_status(t, tid, status);
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
        if (th)
            thread_resume_stopped(th);
    }
    free(ws->stopped);
    memset(ws, 0, sizeof(*ws));
}
