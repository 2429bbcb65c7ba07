/* A traced process forked (fork, vfork, or a clone that makes a new
 * process).  Without -f the child is let go: its copy of our breakpoints
 * and displaced return addresses is undone first, so it never dies of
 * SIGTRAP; a vfork child, which runs in our memory, breakpoints and all,
 * is kept attached until it execs or exits (vfork_kids.h).  With -f it becomes a traced process of its own, whose state
 * starts as a copy of its parent's: the same breakpoints and scratch pages
 * sit in its copy of the memory, the forking thread's open calls are on
 * its copy of the stack, and its heap holds the same blocks (a free of one
 * of them in the child is a correct free), so its books start as a copy of
 * the parent's, as valgrind's do in a forked child. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "shared/log.h"
#include "shared/xalloc.h"
#include "target/tracer/engine_ops.h"
#include "target/heap/freed.h"
#include "target/heap/heap.h"
#include "target/heap/stacks.h"
#include "target/tracer/calls.h"
#include "target/tracer/engine.h"
#include "target/tracer/family.h"
#include "target/tracer/modules.h"
#include "target/tracer/placement.h"
#include "target/tracer/return_sites.h"
#include "target/tracer/vfork_kids.h"

static void release_child(struct tracee *t, struct thread *parent, pid_t child, bool shares_vm)
{
    /* A vfork child runs in our memory, our breakpoints in its way, until
     * it execs or exits: kept attached till then (the family's drain
     * hands its stops to vfork_kids.c). */
    if (shares_vm && t->family) {
        vfork_kid_keep(t, child);
        return;
    }
    /* Its first stop (parked, when it came before this fork event). */
    struct stop st;
    if (stop_next(child, 0, &st) < 0 || st.kind == STOP_GONE)
        return;
    /* (A vfork child without a family to drain its stops: it shares our
     * memory until it execs or exits, the breakpoints must stay, and it is
     * let go as it is.) */
    struct target_mem cm;
    int failed = 0;
    if (!shares_vm && target_mem_open(&cm, child) == 0) {
        for (unsigned i = 0; i < t->bps_cap; i++)
            if (t->bps[i].addr && t->bps[i].inserted &&
                target_mem_write(&cm, ARCH_CODE_ADDR(t->bps[i].addr), t->bps[i].orig,
                                 t->bps[i].len) < 0)
                failed++;
        for (unsigned i = 0; i < parent->ncalls; i++) {
            const struct pending_call *c = &parent->calls[i];
            if (c->ret_slot &&
                target_mem_write_word(&cm, c->ret_slot, c->orig_ret, ARCH_PTR_SIZE) < 0)
                failed++;
        }
        /* arm, aarch64: the copies a callee saved of its lr. */
        struct arch_regs cr;
        if (arch_get_regs(child, &cr) == 0)
            failed += (int)call_restore_saved_returns(t, &cm, parent, arch_sp(&cr));
        target_mem_close(&cm);
        /* agent engine: patches out, agent off */
        if (engine_release_child(t, child) < 0)
            failed++;
    } else if (!shares_vm) {
        failed = -1;
    }
    /* A child we cannot clean dies of SIGTRAP at its first trap: said, as
     * nothing else can be done for it. */
    if (failed)
        mt_warn("process %d (forked by %d): cannot undo our traps in its memory; it may die "
                "of SIGTRAP", (int)child, (int)t->pid);
    /* ESRCH only: the child is gone already. */
    if (ptrace(PTRACE_DETACH, child, NULL, NULL) < 0 && errno != ESRCH)
        mt_warn("process %d: cannot let it go: %s", (int)child, strerror(errno));
}

static void *dup_array(const void *p, size_t n, size_t size)
{
    if (!p || !n)
        return NULL;
    void *c = xreallocarray(NULL, n, size);
    memcpy(c, p, n * size);
    return c;
}

static void copy_module_flags(struct tracee *child, const struct tracee *parent)
{
    for (size_t i = 0; i < child->modules->count; i++) {
        struct module *m = child->modules->mods[i];
        const struct module *pm = module_find(parent->modules, m->start);
        if (pm && pm->start == m->start)
            m->intercepts_placed = pm->intercepts_placed;
    }
}

/* The child's tracee, as the kernel's dup_utask() makes a forked task's
 * uprobe state: one function sets every field of struct tracee (keep it
 * so when adding one), from the parent's state at the fork. */
static struct tracee *tracee_clone(struct tracee *t, struct thread *parent, pid_t child,
                                   bool shares_vm)
{
    /* opts (hooks too), locator, empty books, stacks, misuse log (the
     * child's errors are its own from here), modules: tracee_create. */
    struct tracee *c = tracee_create(child, &t->opts, t->locator);
    c->ppid = t->pid;
    c->program = xstrdup(t->program);
    c->attached_mode = t->attached_mode;
    c->shares_vm = shares_vm;
    /* vfork_kids: the parent's own; none for the child */
    c->exec_seen = true; /* its exec restarts the books */
    /* exited, cannot_follow, exit_status: a new process's (false, 0);
     * stack_window: allocated at its first event. */

    /* Its heap holds the parent's blocks. */
    heap_books_free(c->books);
    c->books = heap_books_clone(t->books);
    stack_table_free(c->stacks);
    c->stacks = stack_table_clone(t->stacks);
    c->unsampled_stack = t->unsampled_stack;
    freed_history_free(c->freed);
    c->freed = freed_history_clone(t->freed);
    allocators_copy(&c->allocators, &t->allocators);
    custom_pools_copy(&c->pools, &t->pools);

    /* Its memory holds the parent's breakpoints, scratch pages, return
     * stubs and displaced return addresses. */
    c->bps = dup_array(t->bps, t->bps_cap, sizeof(*t->bps));
    c->bps_cap = t->bps_cap;
    c->bps_count = t->bps_count;
    c->scratch = dup_array(t->scratch, t->scratch_cap, sizeof(*t->scratch));
    c->scratch_cap = t->scratch_cap;
    c->scratch_count = t->scratch_count;
    return_sites_clone(c, t);
    c->rendezvous_addr = t->rendezvous_addr;

    if (target_mem_open(&c->mem, child) < 0)
        mt_warn("process %d: cannot open its memory", (int)child);
    module_map_refresh(c->modules, NULL, NULL);
    copy_module_flags(c, t);

    /* One thread, the forking one's copy: its open calls (unhooked ones
     * included) and its last release are on the child's copy of the
     * stack too. */
    struct thread *th = thread_add(c, child, THREAD_NEW);
    for (unsigned i = 0; i < parent->ncalls; i++)
        *thread_push_call(th) = parent->calls[i];
    th->last_release = parent->last_release;
    /* and where it stands with exceptions (calls.c) */
    th->exception_memory = parent->exception_memory;
    memcpy(th->exceptions, parent->exceptions, sizeof(th->exceptions));
    th->nexceptions = parent->nexceptions;
    family_add(t->family, c);
    return c;
}

/* agent engine: the child, held at its first stop, gets an agent and
 * rings of its own (target/agent/agent_fork.c); else its copy of the
 * agent is switched off, its patches undone, and breakpoints intercept
 * its calls, said in one line. */
static void child_agent(struct tracee *t, struct tracee *c, pid_t child)
{
    struct stop st;
    if (stop_next(child, 0, &st) < 0)
        return;
    struct thread *th = thread_find(c, child);
    if (st.kind != STOP_GONE && th) {
        th->state = THREAD_STOPPED;
        char why[256];
        if (engine_fork_child(t, c, th, why, sizeof(why)) < 0) {
            c->agent_refused = true;
            int rc = engine_release_child(t, child);
            for (size_t i = 0; i < c->modules->count; i++)
                c->modules->mods[i]->intercepts_placed = false;
            scan_modules(c, th);
            mt_warn("agent engine unavailable in process %d (forked by %d): %s; using "
                    "breakpoints%s",
                    (int)child, (int)t->pid, why,
                    rc < 0 ? " (its copy of the agent could not be switched off)" : "");
        }
    }
    family_dispatch(t->family, &st);
}

void tracer_new_process(struct tracee *t, struct thread *parent, pid_t child, bool shares_vm)
{
    if (!t->opts.follow_fork || !t->family) {
        release_child(t, parent, child, shares_vm);
        return;
    }
    /* agent engine: the child's books start with every call before the fork */
    if (t->agent && !shares_vm)
        engine_fork_settle(t);
    struct tracee *c = tracee_clone(t, parent, child, shares_vm);
    /* A vfork child runs in its parent's memory, with its parent's agent,
     * until it execs: none is injected meanwhile. */
    if (shares_vm || t->agent_refused)
        c->agent_refused = true;
    if (t->agent && !shares_vm) {
        mt_info("following process %d, forked by %d", (int)child, (int)t->pid);
        child_agent(t, c, child);
        return;
    }
    mt_info("following process %d, forked by %d", (int)child, (int)t->pid);
    /* Its first stop, if it came already (parked, or waiting). */
    struct stop st;
    if (stop_next(child, STOP_NOHANG, &st) > 0)
        family_dispatch(t->family, &st);
}
