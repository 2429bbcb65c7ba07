#include "target/tracer/family.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "shared/xalloc.h"
#include "target/tracer/engine.h"

void family_add(struct family *f, struct tracee *t)
{
    if (f->count == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 4;
        f->procs = xreallocarray(f->procs, f->cap, sizeof(*f->procs));
    }
    f->procs[f->count++] = t;
    t->family = f;
}

struct tracee *family_owner(const struct family *f, pid_t tid)
{
    for (size_t i = 0; i < f->count; i++)
        if (thread_find(f->procs[i], tid))
            return f->procs[i];
    return NULL;
}

static pid_t thread_group_of(pid_t tid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;
    pid_t tgid = 0;
    while (fgets(line, sizeof(line), fp))
        if (sscanf(line, "Tgid: %d", &tgid) == 1)
            break;
    fclose(fp);
    return tgid;
}

static struct tracee *process_of(const struct family *f, pid_t pid)
{
    for (size_t i = 0; i < f->count; i++) {
        struct tracee *t = f->procs[i];
        if (t && t->pid == pid && !tracer_finished(t))
            return t;
    }
    return NULL;
}

static void park(struct family *f, pid_t tid, int status)
{
    for (size_t i = 0; i < f->nparked; i++)
        if (f->parked[i].tid == tid) {
            f->parked[i].status = status;
            return;
        }
    if (f->nparked == f->parked_cap) {
        f->parked_cap = f->parked_cap ? f->parked_cap * 2 : 4;
        f->parked = xreallocarray(f->parked, f->parked_cap, sizeof(*f->parked));
    }
    f->parked[f->nparked++] = (struct parked_stop){tid, status};
}

bool family_take_parked(struct family *f, pid_t tid, int *status)
{
    for (size_t i = 0; i < f->nparked; i++)
        if (f->parked[i].tid == tid) {
            *status = f->parked[i].status;
            f->parked[i] = f->parked[--f->nparked];
            return true;
        }
    return false;
}

void family_handle_status(struct family *f, pid_t tid, int status)
{
    struct tracee *t = family_owner(f, tid);
    if (!t && WIFSTOPPED(status)) {
        /* A thread whose first stop came before its creator's clone event
         * belongs to a process we trace; anything else is a new process
         * whose fork event is still to come. */
        pid_t tgid = thread_group_of(tid);
        t = tgid ? process_of(f, tgid) : NULL;
        if (!t) {
            park(f, tid, status);
            return;
        }
    }
    if (!t) {
        /* The end of a thread we no longer list: the leader of a process
         * whose threads went first, or a process we never followed. */
        int ignored;
        family_take_parked(f, tid, &ignored);
        t = process_of(f, tid);
        if (!t)
            return;
    }
    tracer_handle_status(t, tid, status);
}

bool family_finished(const struct family *f)
{
    for (size_t i = 0; i < f->count; i++)
        if (!tracer_finished(f->procs[i]))
            return false;
    return true;
}

void family_detach(struct family *f)
{
    /* f->count may grow: a fork event met while a process settles adds
     * its child, which is detached in turn. */
    for (size_t i = 0; i < f->count; i++)
        if (!tracer_finished(f->procs[i]))
            tracer_detach(f->procs[i]);
}

void family_free(struct family *f)
{
    for (size_t i = 0; i < f->count; i++)
        tracer_free(f->procs[i]);
    free(f->procs);
    free(f->parked);
    f->procs = NULL;
    f->parked = NULL;
    f->count = f->cap = f->nparked = f->parked_cap = 0;
}
