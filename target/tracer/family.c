#include "target/tracer/family.h"

#include <limits.h>
#include <stdlib.h>

#include "shared/xalloc.h"
#include "target/tracer/engine.h"
#include "target/tracer/vfork_kids.h"

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

static struct tracee *process_of(const struct family *f, pid_t pid)
{
    for (size_t i = 0; i < f->count; i++) {
        struct tracee *t = f->procs[i];
        if (t && t->pid == pid && !tracer_finished(t))
            return t;
    }
    return NULL;
}

void family_dispatch(struct family *f, const struct stop *st)
{
    struct tracee *t = family_owner(f, st->tid);
    struct tracee *keeper = t ? NULL : vfork_kid_keeper(f, st->tid);
    if (keeper) { /* an unfollowed vfork child, kept until it execs or exits */
        vfork_kid_stop(keeper, st);
        return;
    }
    if (!t && st->kind != STOP_GONE) {
        /* A thread whose first stop came before its creator's clone event
         * belongs to a process we trace; anything else is a new process
         * whose fork event is still to come. */
        pid_t tgid = thread_group_of(st->tid);
        t = tgid ? process_of(f, tgid) : NULL;
        if (!t) {
            stop_park(st);
            return;
        }
    }
    if (!t) {
        /* The end of a thread we no longer list: the leader of a process
         * whose threads went first, or a process we never followed. */
        struct stop parked;
        while (stop_take_held(st->tid, &parked))
            ;
        t = process_of(f, st->tid);
        if (!t)
            return;
    }
    tracer_handle_stop(t, st);
}

void family_drain(struct family *f)
{
    family_drain_batch(f, UINT_MAX);
}

bool family_drain_batch(struct family *f, unsigned max)
{
    struct stop st;
    for (unsigned n = 0; n < max; n++) {
        if (stop_next(-1, STOP_NOHANG, &st) <= 0)
            return false;
        family_dispatch(f, &st);
    }
    return true;
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
    f->procs = NULL;
    f->count = f->cap = 0;
    stop_forget_all();
}
