/* The MEMORY section's figures for a traced process: its RSS split now
 * (target/heap/rss_parts.h), against books brought up to date. */
#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"
#include "target/session/session.h"
#include "target/tracer/engine_ops.h"
#include "target/tracer/tracee.h"

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

struct rss_parts *session_memory_of(struct tracee *t)
{
    if (!t || t->exited || t->pid <= 0)
        return NULL;
    engine_drain(t, false); /* an engine that records apart: the books as of now */
    struct rss_parts *m = xmalloc(sizeof(*m));
    char why[256];
    struct rss_own own;
    own.n = engine_own_ranges(t, own.lo, own.len);
    if (rss_parts_read(t->pid, t->books, &own, m, why, sizeof(why)) < 0) {
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
