/* A traced process forked (fork, vfork, or a clone that makes a new
 * process).  Without -f the child is let go: its copy of our breakpoints
 * and displaced return addresses is undone first, so it never dies of
 * SIGTRAP.  With -f it becomes a traced process of its own, whose state
 * starts as a copy of its parent's: the same breakpoints and scratch pages
 * sit in its copy of the memory, the forking thread's open calls are on
 * its copy of the stack, and its heap holds the same blocks (a free of one
 * of them in the child is a correct free), so its books start as a copy of
 * the parent's, as valgrind's do in a forked child. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "shared/log.h"
#include "shared/xalloc.h"
#include "target/heap/freed.h"
#include "target/heap/heap.h"
#include "target/heap/stacks.h"
#include "target/tracer/calls.h"
#include "target/tracer/engine.h"
#include "target/tracer/family.h"
#include "target/tracer/modules.h"

/* The child's first stop: parked by the family when it came first. */
static int wait_child_stop(struct tracee *t, pid_t child, int *status)
{
    if (t->family && family_take_parked(t->family, child, status))
        return 0;
    return thread_wait(child, status);
}

static void release_child(struct tracee *t, struct thread *parent, pid_t child, bool shares_vm)
{
    int status;
    if (wait_child_stop(t, child, &status) < 0 || !WIFSTOPPED(status))
        return;
    /* A vfork child shares our memory until it execs or exits: the
     * breakpoints must stay, and its calls before the exec are not seen. */
    struct target_mem cm;
    if (!shares_vm && target_mem_open(&cm, child) == 0) {
        for (unsigned i = 0; i < t->bps_cap; i++)
            if (t->bps[i].addr && t->bps[i].inserted)
                target_mem_write(&cm, ARCH_CODE_ADDR(t->bps[i].addr), t->bps[i].orig,
                                 t->bps[i].len);
        for (unsigned i = 0; i < parent->ncalls; i++) {
            const struct pending_call *c = &parent->calls[i];
            if (c->ret_slot)
                target_mem_write_word(&cm, c->ret_slot, c->orig_ret, ARCH_PTR_SIZE);
        }
        /* arm, aarch64: the copies a callee saved of its lr. */
        struct arch_regs cr;
        if (arch_get_regs(child, &cr) == 0)
            call_restore_saved_returns(t, &cm, parent, arch_sp(&cr));
        target_mem_close(&cm);
    }
    ptrace(PTRACE_DETACH, child, NULL, NULL);
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

static struct tracee *adopt_child(struct tracee *t, struct thread *parent, pid_t child,
                                  bool shares_vm)
{
    struct tracee *c = tracee_create(child, &t->opts, t->locator);
    c->ppid = t->pid;
    c->program = xstrdup(t->program);
    c->attached_mode = t->attached_mode;
    c->shares_vm = shares_vm;
    c->exec_seen = true; /* its exec restarts the books */
    c->on_misuse = t->on_misuse;
    c->on_misuse_ctx = t->on_misuse_ctx;

    heap_books_free(c->books);
    c->books = heap_books_clone(t->books);
    stack_table_free(c->stacks);
    c->stacks = stack_table_clone(t->stacks);
    freed_history_free(c->freed);
    c->freed = freed_history_clone(t->freed);

    c->bps = dup_array(t->bps, t->bps_cap, sizeof(*t->bps));
    c->bps_cap = t->bps_cap;
    c->bps_count = t->bps_count;
    c->scratch = dup_array(t->scratch, t->scratch_cap, sizeof(*t->scratch));
    c->scratch_cap = t->scratch_cap;
    c->scratch_count = t->scratch_count;
    c->rendezvous_addr = t->rendezvous_addr;

    if (target_mem_open(&c->mem, child) < 0)
        mt_warn("process %d: cannot open its memory", (int)child);
    module_map_refresh(c->modules, NULL, NULL);
    copy_module_flags(c, t);

    struct thread *th = thread_add(c, child, THREAD_NEW);
    for (unsigned i = 0; i < parent->ncalls; i++)
        *thread_push_call(th) = parent->calls[i];
    family_add(t->family, c);
    mt_info("following process %d, forked by %d", (int)child, (int)t->pid);
    return c;
}

void tracer_new_process(struct tracee *t, struct thread *parent, pid_t child, bool shares_vm)
{
    if (!t->opts.follow_fork || !t->family) {
        release_child(t, parent, child, shares_vm);
        return;
    }
    adopt_child(t, parent, child, shares_vm);
    int status;
    if (family_take_parked(t->family, child, &status))
        family_handle_status(t->family, child, status);
}
