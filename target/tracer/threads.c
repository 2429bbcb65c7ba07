#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "shared/xalloc.h"
#include "target/tracer/tracee.h"

/* Open addressing with linear probing; tombstones are avoided by
 * re-inserting the run after a removal. */

static unsigned thread_hash(pid_t tid, unsigned cap) { return ((unsigned)tid * 2654435761u) & (cap - 1); }

struct thread *thread_find(struct tracee *t, pid_t tid)
{
    if (!t->threads_cap)
        return NULL;
    for (unsigned i = thread_hash(tid, t->threads_cap);; i = (i + 1) & (t->threads_cap - 1)) {
        struct thread *th = t->threads[i];
        if (!th)
            return NULL;
        if (th->tid == tid)
            return th;
    }
}

static void thread_slot_put(struct thread **tab, unsigned cap, struct thread *th)
{
    unsigned i = thread_hash(th->tid, cap);
    while (tab[i])
        i = (i + 1) & (cap - 1);
    tab[i] = th;
}

struct thread *thread_add(struct tracee *t, pid_t tid, enum thread_state state)
{
    struct thread *th = thread_find(t, tid);
    if (th)
        return th;
    if ((t->threads_count + 1) * 2 > t->threads_cap) {
        unsigned cap = t->threads_cap ? t->threads_cap * 2 : 64;
        struct thread **tab = xcalloc(cap, sizeof(*tab));
        for (unsigned i = 0; i < t->threads_cap; i++)
            if (t->threads[i])
                thread_slot_put(tab, cap, t->threads[i]);
        free(t->threads);
        t->threads = tab;
        t->threads_cap = cap;
    }
    th = xcalloc(1, sizeof(*th));
    th->tid = tid;
    th->state = state;
    thread_slot_put(t->threads, t->threads_cap, th);
    t->threads_count++;
    return th;
}

void thread_remove(struct tracee *t, pid_t tid)
{
    if (!t->threads_cap)
        return;
    unsigned mask = t->threads_cap - 1;
    unsigned i = thread_hash(tid, t->threads_cap);
    while (t->threads[i] && t->threads[i]->tid != tid)
        i = (i + 1) & mask;
    struct thread *th = t->threads[i];
    if (!th)
        return;
    t->threads[i] = NULL;
    t->threads_count--;
    free(th->calls);
    free(th);
    for (unsigned j = (i + 1) & mask; t->threads[j]; j = (j + 1) & mask) {
        struct thread *move = t->threads[j];
        t->threads[j] = NULL;
        thread_slot_put(t->threads, t->threads_cap, move);
    }
}

struct pending_call *thread_push_call(struct thread *th)
{
    if (th->ncalls == th->calls_cap) {
        th->calls_cap = th->calls_cap ? th->calls_cap * 2 : 8;
        th->calls = xreallocarray(th->calls, th->calls_cap, sizeof(*th->calls));
    }
    struct pending_call *c = &th->calls[th->ncalls++];
    memset(c, 0, sizeof(*c));
    return c;
}

void thread_foreach(struct tracee *t, void (*fn)(struct tracee *, struct thread *, void *), void *ctx)
{
    /* Collect first: fn may remove threads. */
    unsigned n = 0;
    pid_t *tids = xcalloc(t->threads_count + 1, sizeof(*tids));
    for (unsigned i = 0; i < t->threads_cap; i++)
        if (t->threads[i])
            tids[n++] = t->threads[i]->tid;
    for (unsigned i = 0; i < n; i++) {
        struct thread *th = thread_find(t, tids[i]);
        if (th)
            fn(t, th, ctx);
    }
    free(tids);
}

void thread_resume_stopped(struct thread *th)
{
    if (th->state != THREAD_STOPPED)
        return;
    if (th->group_stopped) {
        if (ptrace(PTRACE_LISTEN, th->tid, NULL, NULL) == 0)
            th->state = THREAD_RUNNING;
        return;
    }
    int sig = th->resume_signal;
    th->resume_signal = 0;
    if (ptrace(PTRACE_CONT, th->tid, NULL, (void *)(long)sig) == 0)
        th->state = THREAD_RUNNING;
}

pid_t thread_group_of(pid_t tid)
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
