/* The engine interface's dispatch (engine_ops.h) and the breakpoint
 * engine's table.  Breakpoints are the tracer's own work (placement.c,
 * calls.c): they have nothing to add at these moments. */
#include "target/tracer/engine_ops.h"

#include <string.h>

#include "target/tracer/tracee.h"

const struct engine_ops engine_breakpoints = {
    .name = "ptrace",
};

const struct engine_ops *engine_ops_of(enum tracer_engine e)
{
    return e == ENGINE_AGENT ? &engine_agent : &engine_breakpoints;
}

static const struct engine_ops *of(const struct tracee *t)
{
    return engine_ops_of(t->opts.engine);
}

bool engine_parse(const char *s, enum tracer_engine *out)
{
    for (int e = 0; e < ENGINE_COUNT; e++)
        if (strcmp(s, engine_ops_of((enum tracer_engine)e)->name) == 0) {
            *out = (enum tracer_engine)e;
            return true;
        }
    return false;
}

enum tracer_engine engine_default(void)
{
    for (int e = ENGINE_COUNT - 1; e > ENGINE_PTRACE; e--) {
        const struct engine_ops *o = engine_ops_of((enum tracer_engine)e);
        if (o->preferred && o->preferred())
            return (enum tracer_engine)e;
    }
    return ENGINE_PTRACE;
}

bool engine_built(enum tracer_engine e)
{
    const struct engine_ops *o = engine_ops_of(e);
    return !o->built || o->built();
}

const char *engine_name(const struct tracee *t)
{
    if (!t)
        return engine_breakpoints.name;
    const struct engine_ops *o = of(t);
    return o->name_of ? o->name_of(t) : o->name;
}

int engine_start(struct tracee *t, struct thread *th, char *why, size_t whylen)
{
    return of(t)->start ? of(t)->start(t, th, why, whylen) : 0;
}

unsigned engine_patch_module(struct tracee *t, struct thread *th, struct module *m,
                             const struct intercept_site *sites, size_t n, unsigned alloc_id,
                             unsigned *refused)
{
    *refused = 0;
    return of(t)->patch_module ? of(t)->patch_module(t, th, m, sites, n, alloc_id, refused) : 0;
}

void engine_module_gone(struct tracee *t, uint64_t module_start)
{
    if (of(t)->module_gone)
        of(t)->module_gone(t, module_start);
}

void engine_modules_reread(struct tracee *t)
{
    if (of(t)->modules_reread)
        of(t)->modules_reread(t);
}

unsigned engine_drain(struct tracee *t, bool force)
{
    return of(t)->drain ? of(t)->drain(t, force) : 0;
}

int engine_poll_fd(const struct tracee *t)
{
    return t && of(t)->poll_fd ? of(t)->poll_fd(t) : -1;
}

int engine_poll_timeout(const struct tracee *t)
{
    return t && of(t)->poll_timeout ? of(t)->poll_timeout(t) : -1;
}

void engine_doorbell(struct tracee *t)
{
    if (of(t)->doorbell)
        of(t)->doorbell(t);
}

void engine_thread_exit(struct tracee *t, int tid)
{
    if (of(t)->thread_exit)
        of(t)->thread_exit(t, tid);
}

void engine_stop(struct tracee *t)
{
    if (of(t)->stop)
        of(t)->stop(t);
}

void engine_forget(struct tracee *t)
{
    if (of(t)->forget)
        of(t)->forget(t);
}

void engine_free(struct tracee *t)
{
    if (of(t)->free)
        of(t)->free(t);
}

int engine_release_child(struct tracee *t, int child_pid)
{
    return of(t)->release_child ? of(t)->release_child(t, child_pid) : 0;
}

void engine_fork_settle(struct tracee *t)
{
    if (of(t)->fork_settle)
        of(t)->fork_settle(t);
}

int engine_fork_child(struct tracee *t, struct tracee *c, struct thread *th, char *why,
                      size_t whylen)
{
    return of(t)->fork_child ? of(t)->fork_child(t, c, th, why, whylen) : 0;
}

bool engine_get_stats(const struct tracee *t, struct engine_stats *out)
{
    return t && of(t)->get_stats && of(t)->get_stats(t, out);
}

unsigned engine_own_ranges(const struct tracee *t, uint64_t lo[2], uint64_t len[2])
{
    return of(t)->own_ranges ? of(t)->own_ranges(t, lo, len) : 0;
}
