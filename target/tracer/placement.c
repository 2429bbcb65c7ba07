/* Breakpoint placement: the intercepted functions of every new module and
 * the dynamic linker's rendezvous. */
#include "target/tracer/placement.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/log.h"
#include "target/tracer/client_requests.h"
#include "target/tracer/engine_ops.h"
#include "target/tracer/modules.h"

static int place_breakpoint(struct tracee *t, struct thread *th, struct module *m, uint64_t addr,
                            const struct intercept_fn *fn, unsigned alloc_id)
{
    if (bp_find(t, addr))
        return 0; /* placed already (aliases are one site: intercept.h) */
    uint8_t insn[ARCH_INSN_MAX];
    size_t avail = target_mem_read_partial(&t->mem, ARCH_CODE_ADDR(addr), insn, sizeof(insn));
    if (avail == 0)
        return -EFAULT;
    uint64_t slot = 0;
    int rc = scratch_reserve_slot(t, th, m->start, &slot);
    if (rc < 0) {
        mt_warn("cannot map a scratch page in process %d: %s", (int)t->pid, strerror(-rc));
        return rc;
    }
    struct displace_plan plan = arch_displace(insn, avail, addr, slot);
    if (plan.kind == DISPLACE_UNSUPPORTED) {
        mt_warn("%s in %s: its first instruction cannot be stepped over; not intercepted",
                fn ? fn->name : "rendezvous", m->path);
        return -ENOTSUP;
    }
    if (plan.kind == DISPLACE_OUT_OF_LINE &&
        (rc = target_mem_write(&t->mem, slot, plan.slot_bytes, plan.slot_len)) < 0)
        return rc;
    struct breakpoint *bp = bp_add(t, addr);
    bp->fn = fn;
    bp->alloc_id = alloc_id;
    bp->plan = plan;
    bp->slot_addr = slot;
    bp->module_start = m->start;
    return bp_insert(t, bp);
}

/* With the agent engine every function goes through the agent but exit(),
 * which gets a breakpoint when its moment is wanted (the leak scan at
 * exit: a stop before any exit handler runs, as with breakpoints). */
static bool wants_breakpoint(const struct tracee *t, const struct intercept_fn *fn)
{
    return !t->agent || (fn->op == OP_EXIT && t->opts.exit_call_hook);
}

/* A module whose heap functions are intercepted is one of the process's
 * allocators (allocators.h); a heap when it defines a malloc and a free. */
static unsigned note_allocator(struct tracee *t, const struct module *m,
                               const struct intercept_site *sites, size_t n)
{
    bool any = false, allocates = false, frees = false;
    for (size_t i = 0; i < n; i++) {
        any |= intercept_is_heap_fn(sites[i].fn);
        /* --alloc-fn's functions are a family, not a heap: their blocks
         * given to free() are mismatched, not another heap's */
        if (sites[i].fn->family == FAMILY_NAMED)
            continue;
        allocates |= sites[i].fn->op == OP_MALLOC;
        frees |= sites[i].fn->op == OP_FREE;
    }
    return any ? allocators_note(&t->allocators, m->path, m->start, allocates && frees) : 0;
}

/* Returns how many functions the agent could not redirect.  Every module
 * that defines an intercepted function gets it intercepted: which
 * definition a call reaches is the dynamic linker's business (lookup
 * scopes, LD_PRELOAD, RTLD_DEEPBIND, dlmopen namespaces, direct calls
 * inside a library), and every one of them is a real entry. */
static unsigned place_intercepts(struct tracee *t, struct thread *th, struct module *m)
{
    /* The dynamic linker too: musl's is its libc, malloc and all (glibc's
     * exports none of these names). */
    if (m->intercepts_placed)
        return 0;
    unsigned placed = 0;
    unsigned refused = 0;
    struct intercept_site *sites = NULL;
    size_t n = module_intercept_sites(t->modules, m, &sites);
    unsigned alloc_id = note_allocator(t, m, sites, n);
    /* agent engine: trampolines instead of breakpoints (target/agent);
     * asked of every module, which it also looks at for the C++ unwinder
     * and the dynamic linker (agent_inject.c, note_unwinder) */
    if (t->agent)
        placed = engine_patch_module(t, th, m, sites, n, alloc_id, &refused);
    for (size_t i = 0; i < n; i++)
        /* The unwinder's entries do not make its module an allocator. */
        if (wants_breakpoint(t, sites[i].fn) &&
            place_breakpoint(t, th, m, sites[i].addr, sites[i].fn, alloc_id) == 0 &&
            sites[i].fn->op != OP_UNWIND && sites[i].fn->op != OP_CATCH)
            placed++;
    free(sites);
    if (placed) {
        m->intercepts_placed = true;
        mt_info("%s: %u functions intercepted", m->path, placed);
    } else if (module_is_static_executable(t->modules, m->start) &&
               object_error(m->obj, OBJECT_DEBUG) == OBJECT_UNTRIED) {
        /* Said once: the lookup below marks the load tried. */
        object_debug_object(m->obj);
        mt_warn("%s: statically linked and stripped (no symbol table): allocation functions "
                "cannot be found, nothing will be recorded", m->path);
    }
    return refused;
}

static bool every_thread_stopped(const struct tracee *t)
{
    for (unsigned i = 0; i < t->threads_cap; i++)
        if (t->threads[i] && t->threads[i]->state != THREAD_STOPPED)
            return false;
    return true;
}

/* The agent could not redirect some function (said above, one line
 * each).  With every thread stopped (attach, exec, a rendezvous of a
 * process with one thread) the whole process goes to breakpoints, which
 * intercept every function; else (other threads run on) the engine cannot
 * change under them and those functions stay unintercepted. */
static void agent_refusals(struct tracee *t, struct thread *th, unsigned refused)
{
    if (!every_thread_stopped(t)) {
        mt_warn("agent engine: %u function%s in process %d not intercepted (other threads run: "
                "the engine cannot change now)", refused, refused == 1 ? "" : "s", (int)t->pid);
        return;
    }
    mt_warn("agent engine: %u function%s in process %d cannot be redirected; using breakpoints",
            refused, refused == 1 ? "" : "s", (int)t->pid);
    engine_stop(t);
    t->agent_refused = true;
    t->agent_used = false;
    for (size_t i = 0; i < t->modules->count; i++)
        t->modules->mods[i]->intercepts_placed = false;
    for (size_t i = 0; i < t->modules->count; i++)
        if (t->modules->mods[i]->is_main)
            place_intercepts(t, th, t->modules->mods[i]);
    for (size_t i = 0; i < t->modules->count; i++)
        if (!t->modules->mods[i]->is_main)
            place_intercepts(t, th, t->modules->mods[i]);
}

static void place_rendezvous(struct tracee *t)
{
    if (t->rendezvous_addr)
        return;
    for (size_t i = 0; i < t->modules->count; i++) {
        struct module *m = t->modules->mods[i];
        if (!m->is_interp)
            continue;
        uint64_t addr = module_export_addr(t->modules, m, "_dl_debug_state");
        if (!addr)
            continue;
        /* The rendezvous function is empty: its breakpoint returns at once
         * and needs no slot. */
        struct breakpoint *bp = bp_add(t, addr);
        bp->fn = NULL;
        bp->plan.kind = DISPLACE_EMULATE;
        bp->module_start = m->start;
        if (bp_insert(t, bp) == 0)
            t->rendezvous_addr = addr;
        return;
    }
}

static void module_gone(void *ctx, struct module *m)
{
    struct tracee *t = ctx;
    engine_module_gone(t, m->start);
    allocators_gone(&t->allocators, m->start);
    bp_forget_module(t, m->start);
    if (t->rendezvous_addr >= m->start && t->rendezvous_addr < m->end)
        t->rendezvous_addr = 0;
}

/* New modules (at attach, exec, and every dynamic-linker rendezvous):
 * the executable first (its allocator is the one named first among equals). */
void scan_modules(struct tracee *t, struct thread *th)
{
    engine_drain(t, false); /* agent engine: replayed while their modules are there */
    module_map_refresh(t->modules, module_gone, t);
    engine_modules_reread(t);
    place_rendezvous(t);
    /* agent engine: injected once per address space, where every thread
     * is stopped (attach, exec); else breakpoints, said in one line */
    if (t->opts.engine == ENGINE_AGENT && !t->agent && !t->agent_refused) {
        char why[256];
        if (engine_start(t, th, why, sizeof(why)) < 0) {
            t->agent_refused = true;
            mt_warn("agent engine unavailable in process %d: %s; using breakpoints", (int)t->pid,
                    why);
        }
    }
    /* valgrind's client requests: found before any entry is patched, so
     * that the code read is the module's own */
    for (size_t i = 0; i < t->modules->count; i++)
        client_requests_place(t, t->modules->mods[i]);
    unsigned refused = 0;
    for (size_t i = 0; i < t->modules->count; i++)
        if (t->modules->mods[i]->is_main)
            refused += place_intercepts(t, th, t->modules->mods[i]);
    for (size_t i = 0; i < t->modules->count; i++)
        if (!t->modules->mods[i]->is_main)
            refused += place_intercepts(t, th, t->modules->mods[i]);
    if (refused && t->agent)
        agent_refusals(t, th, refused);
}
