/* The engines that intercept a tracee's calls, and the one interface
 * through which the tracer (and everything above it) drives them:
 * breakpoints, the tracer's own (placement.c, calls.c), or an agent
 * injected into the process (target/agent, which fills in engine_agent).
 * As libunwind's core calls through unw_accessors_t, the tracer calls
 * these hooks at its moments and knows nothing else of an engine; an
 * engine replays what it recorded through calls.h, as breakpoints do.
 *
 * A tracee's engine is the one its options name (tracer_options.engine):
 * every hook of an engine that has not started in the process (or gave it
 * up for breakpoints) does nothing. */
#ifndef MT_TRACER_ENGINE_OPS_H
#define MT_TRACER_ENGINE_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum tracer_engine { ENGINE_PTRACE = 0, ENGINE_AGENT = 1, ENGINE_COUNT };

struct tracee;
struct thread;
struct module;
struct intercept_site;

/* For status: ring waits, calls replayed, calls not recorded. */
struct engine_stats {
    uint64_t waits, calls, lost, patched;
    uint64_t unwound_in_target, raw_stacks;  /* calls whose stack came each way */
};

/* Every hook may be NULL: nothing to do at that moment. */
struct engine_ops {
    const char *name;  /* --engine's word */
    /* This memtrace carries the engine for its CPU (what --version lists);
     * preferred: and the CPU makes it the default. */
    bool (*built)(void);
    bool (*preferred)(void);
    /* Who recorded t: name, or another engine's after a fallback. */
    const char *(*name_of)(const struct tracee *t);

    /* Takes over t's interception (th stopped, and every other thread
     * too, or none exists).  0, or -1 with a one-line reason. */
    int (*start)(struct tracee *t, struct thread *th, char *why, size_t whylen);
    /* Intercepts the n sites of module m (modules.h; alloc_id: m in
     * t->allocators), th stopped; a module already in use only with every
     * thread stopped.  Returns how many were placed; *refused gets how many
     * could not be. */
    unsigned (*patch_module)(struct tracee *t, struct thread *th, struct module *m,
                             const struct intercept_site *sites, size_t n, unsigned alloc_id,
                             unsigned *refused);
    /* The module at module_start was unmapped. */
    void (*module_gone)(struct tracee *t, uint64_t module_start);
    /* The module map was read again (a rendezvous). */
    void (*modules_reread)(struct tracee *t);

    /* Replays what was recorded into t's books.  force: everything, even
     * what a thread still inside a call could precede (the process is gone
     * or every thread is stopped for good).  Returns the calls replayed. */
    unsigned (*drain)(struct tracee *t, bool force);
    /* The fd the event loop polls for "drain now" (-1: none), how long it
     * may sleep before draining again (ms; -1: no limit), and what it does
     * when the fd is readable. */
    int (*poll_fd)(const struct tracee *t);
    int (*poll_timeout)(const struct tracee *t);
    void (*doorbell)(struct tracee *t);

    /* Thread tid of t is at its exit stop. */
    void (*thread_exit)(struct tracee *t, int tid);
    /* Every thread stopped (detach, a fallback to breakpoints): the engine
     * leaves the process.  Drains first. */
    void (*stop)(struct tracee *t);
    /* exec, or a followed child gone: forget the image (drains first). */
    void (*forget)(struct tracee *t);
    void (*free)(struct tracee *t);

    /* A forked child (its memory a copy of t's) that is not followed, or
     * not served: the engine switched off in the child's memory.  0, or
     * the first write's -errno. */
    int (*release_child)(struct tracee *t, int child_pid);
    /* -f, a fork event of t (the forking thread stopped): the calls made
     * before it go into t's books, none made after. */
    void (*fork_settle)(struct tracee *t);
    /* -f, the followed child c of t at its first stop (th, its one
     * thread) gets its own recording.  0, or -1 with a one-line reason. */
    int (*fork_child)(struct tracee *t, struct tracee *c, struct thread *th, char *why,
                      size_t whylen);

    bool (*get_stats)(const struct tracee *t, struct engine_stats *out);
    /* The engine's own memory in t: up to 2 ranges, which the leak scan
     * does not take for roots. */
    unsigned (*own_ranges)(const struct tracee *t, uint64_t lo[2], uint64_t len[2]);
};

/* The two engines: engine_ops.c, target/agent/agent_ops.c. */
extern const struct engine_ops engine_breakpoints;
extern const struct engine_ops engine_agent;

const struct engine_ops *engine_ops_of(enum tracer_engine e);
/* --engine's word -> engine; false when unknown. */
bool engine_parse(const char *s, enum tracer_engine *out);
/* The engine used when none is asked for. */
enum tracer_engine engine_default(void);
bool engine_built(enum tracer_engine e);
/* "agent" / "ptrace": what recorded t ("ptrace" for NULL). */
const char *engine_name(const struct tracee *t);

/* The hooks of t's engine (engine_ops above; 0, -1 or nothing where the
 * engine has none). */
int engine_start(struct tracee *t, struct thread *th, char *why, size_t whylen);
unsigned engine_patch_module(struct tracee *t, struct thread *th, struct module *m,
                             const struct intercept_site *sites, size_t n, unsigned alloc_id,
                             unsigned *refused);
void engine_module_gone(struct tracee *t, uint64_t module_start);
void engine_modules_reread(struct tracee *t);
unsigned engine_drain(struct tracee *t, bool force);
int engine_poll_fd(const struct tracee *t);
int engine_poll_timeout(const struct tracee *t);
void engine_doorbell(struct tracee *t);
void engine_thread_exit(struct tracee *t, int tid);
void engine_stop(struct tracee *t);
void engine_forget(struct tracee *t);
void engine_free(struct tracee *t);
int engine_release_child(struct tracee *t, int child_pid);
void engine_fork_settle(struct tracee *t);
int engine_fork_child(struct tracee *t, struct tracee *c, struct thread *th, char *why,
                      size_t whylen);
bool engine_get_stats(const struct tracee *t, struct engine_stats *out);
unsigned engine_own_ranges(const struct tracee *t, uint64_t lo[2], uint64_t len[2]);

#endif
