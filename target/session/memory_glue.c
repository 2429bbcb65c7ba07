/* The MEMORY section's figures for a traced process: its RSS split now
 * (target/heap/rss_parts.h), against books brought up to date. */
#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"
#include "target/session/session.h"
#include "target/tracer/engine_ops.h"
#include "target/tracer/tracee.h"
#include "target/tracer/world.h"

/* glibc's malloc is among the allocators: malloc_trim's estimate applies. */
static bool uses_glibc(const struct allocators *a)
{
    for (size_t i = 0; i < a->count; i++) {
        const char *path = a->v[i].path;
        const char *base = path ? strrchr(path, '/') : NULL;
        base = base ? base + 1 : path;
        if (base && (!strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5)))
            return true;
    }
    return false;
}

/* A drain takes at most a ring's worth of each ring: with every thread
 * stopped, a few more take the rest.  (Bounded: a process that shares the
 * region could write as fast as we read.) */
#define DRAIN_ROUNDS_MAX 64

/* The RSS and the books at one instant: reading smaps takes milliseconds,
 * and a program that frees its blocks meanwhile would have its RSS fall
 * under a heap the books still count (the frees in the agent's ring), or
 * rise over blocks they do not count yet.  So the threads stop for the
 * read, and the ring is drained with them stopped. */
struct rss_parts *session_memory_of(struct tracee *t)
{
    if (!t || t->exited || t->pid <= 0)
        return NULL;
    struct world_stop ws;
    bool stopped = tracer_stop_world(t, &ws) == 0;
    for (unsigned round = 0; round < DRAIN_ROUNDS_MAX && engine_drain(t, false) > 0; round++)
        continue;
    struct rss_parts *m = xmalloc(sizeof(*m));
    char why[256];
    struct rss_own own;
    own.n = engine_own_ranges(t, own.lo, own.len);
    int rc = rss_parts_read(t->pid, t->books, &own, m, why, sizeof(why));
    if (stopped)
        tracer_resume_world(t, &ws);
    if (rc < 0) {
        /* not shown: a report simply has no MEMORY section then */
        free(m);
        return NULL;
    }
    m->glibc = uses_glibc(&t->allocators);
    return m;
}

void session_memory_free(struct rss_parts *m)
{
    if (!m)
        return;
    rss_parts_free(m);
    free(m);
}
