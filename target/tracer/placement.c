/* Breakpoint placement: the intercepted functions of every new module and
 * the dynamic linker's rendezvous. */
#include "target/tracer/placement.h"

#include <errno.h>
#include <string.h>

#include "shared/log.h"
#include "target/agent/agent.h"
#include "target/tracer/modules.h"

static bool name_placed(struct tracee *t, const char *name)
{
    for (unsigned i = 0; i < t->bps_cap; i++) {
        const struct breakpoint *bp = &t->bps[i];
        if (bp->addr && bp->fn && strcmp(bp->fn->name, name) == 0)
            return true;
    }
    return false;
}

static int place_breakpoint(struct tracee *t, struct thread *th, struct module *m, uint64_t addr,
                            const struct intercept_fn *fn)
{
    if (bp_find(t, addr))
        return 0; /* an alias (mmap64 = mmap, memalign = aligned_alloc) */
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
    return !t->agent || (!agent_fn_patched(fn) && t->opts.exit_call_hook);
}

/* Returns how many functions the agent could not redirect. */
static unsigned place_intercepts(struct tracee *t, struct thread *th, struct module *m)
{
    /* The dynamic linker too: musl's is its libc, malloc and all (glibc's
     * exports none of these names). */
    if (m->intercepts_placed)
        return 0;
    unsigned placed = 0;
    /* agent engine: trampolines instead of breakpoints (target/agent) */
    unsigned refused = 0;
    if (t->agent)
        placed = agent_patch_module(t, th, m, &refused);
    for (const struct intercept_fn *fn = intercept_table(); fn->name; fn++) {
        if (!wants_breakpoint(t, fn) || name_placed(t, fn->name))
            continue;
        uint64_t addr = module_export_addr(t->modules, m, fn->name);
        if (addr && place_breakpoint(t, th, m, addr, fn) == 0)
            placed++;
    }
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
    agent_stop(t);
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
    agent_module_gone(t, m->start);
    bp_forget_module(t, m->start);
    if (t->rendezvous_addr >= m->start && t->rendezvous_addr < m->end)
        t->rendezvous_addr = 0;
}

/* New modules (at attach, exec, and every dynamic-linker rendezvous):
 * the executable first, so that a program's own malloc wins as the dynamic
 * linker's symbol lookup would have it. */
void scan_modules(struct tracee *t, struct thread *th)
{
    agent_drain(t, false); /* agent engine: replayed while their modules are there */
    module_map_refresh(t->modules, module_gone, t);
    agent_rows_clear(t);
    place_rendezvous(t);
    /* agent engine: injected once per address space, where every thread
     * is stopped (attach, exec); else breakpoints, said in one line */
    if (t->opts.engine == ENGINE_AGENT && !t->agent && !t->agent_refused) {
        char why[256];
        if (agent_start(t, th, why, sizeof(why)) < 0) {
            t->agent_refused = true;
            mt_warn("agent engine unavailable in process %d: %s; using breakpoints", (int)t->pid,
                    why);
        }
    }
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
