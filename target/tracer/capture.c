/* The call stack of a thread stopped at an intercepted function's entry.
 * The stack is read once per stop, in one process_vm_readv of a window
 * above the stack pointer; the return address, the unwinder's reads and
 * the stack capture all come from that window, and only a frame beyond it
 * falls back to a read of its own. */
#include <errno.h>
#include <string.h>

#include "shared/xalloc.h"
#include "target/heap/stacks.h"
#include "target/tracer/calls.h"
#include "target/tracer/modules.h"
#include "target/unwind/unwind.h"

#define STACK_WINDOW 8192
#define MAX_DEPTH 256

void stack_window_init(struct stack_window *w, struct tracee *t, uint64_t sp)
{
    w->t = t;
    w->base = sp;
    w->have = 0;
    w->loaded = false;
}

int stack_window_read(struct stack_window *w, uint64_t addr, void *buf, size_t len)
{
    struct tracee *t = w->t;
    /* agent engine: the stack as the call saw it, copied by the agent */
    if (t->snap) {
        if (addr >= t->snap_base && addr - t->snap_base <= t->snap_len &&
            len <= t->snap_len - (addr - t->snap_base)) {
            memcpy(buf, t->snap + (addr - t->snap_base), len);
            return 0;
        }
        if (t->snap2 && addr >= t->snap2_base && addr - t->snap2_base <= t->snap2_len &&
            len <= t->snap2_len - (addr - t->snap2_base)) {
            memcpy(buf, t->snap2 + (addr - t->snap2_base), len);
            return 0;
        }
        /* The call is over and the thread has moved on: its stack now
         * holds another moment's frames.  Only code (a module's mapping,
         * which does not change) is read from the live process; a frame
         * beyond the copies ends the stack (issue 29). */
        if (!module_find(t->modules, addr))
            return -EFAULT;
        return target_mem_read(&t->mem, addr, buf, len);
    }
    if (!w->loaded) {
        if (!t->stack_window)
            t->stack_window = xmalloc(STACK_WINDOW);
        w->loaded = true;
        w->have = target_mem_read_partial(&t->mem, w->base, t->stack_window, STACK_WINDOW);
    }
    if (addr >= w->base && addr - w->base <= w->have && len <= w->have - (addr - w->base)) {
        memcpy(buf, t->stack_window + (addr - w->base), len);
        return 0;
    }
    return target_mem_read(&t->mem, addr, buf, len);
}

static int capture_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    return stack_window_read(ctx, addr, buf, len);
}

static struct cfi_table *capture_find_cfi(void *ctx, uint64_t pc, uint64_t *bias)
{
    struct tracee *t = ctx;
    struct module *m = module_find(t->modules, pc);
    if (!m)
        return NULL;
    *bias = m->bias;
    return object_cfi(m->obj);
}

static struct exidx_table *capture_find_exidx(void *ctx, uint64_t pc, uint64_t *bias)
{
    struct tracee *t = ctx;
    struct module *m = module_find(t->modules, pc);
    if (!m)
        return NULL;
    *bias = m->bias;
    return object_exidx(m->obj);
}

static size_t capture_func_code(void *ctx, uint64_t pc, uint64_t *start, uint8_t *code, size_t max)
{
    struct tracee *t = ctx;
    return module_func_code(t->modules, pc, start, code, max);
}

uint32_t capture_stack_in(struct stack_window *w, const struct arch_regs *regs)
{
    struct tracee *t = w->t;
    if (t->snap_unsampled) /* --sample: a call not sampled keeps no stack */
        return t->unsampled_stack;
    if (t->snap_pcs) /* agent engine: unwound in the target with our rows */
        return stack_table_intern(t->stacks, t->snap_pcs, (unsigned)t->snap_npcs);
    struct unwind_regs ur;
    arch_regs_to_unwind(regs, &ur);
    struct unwind_memory mem = {.read = capture_read, .ctx = w};
    struct unwind_lookup lookup = {.find = capture_find_cfi, .ctx = t,
                                   .find_exidx = capture_find_exidx,
                                   .func_code = capture_func_code};
    uint64_t pcs[MAX_DEPTH];
    unsigned depth = t->opts.depth < MAX_DEPTH ? t->opts.depth : MAX_DEPTH;
    int n = unwind_stack_at_entry(&ur, &mem, &lookup, pcs, (int)depth);
    if (n < 1) {
        pcs[0] = ARCH_CODE_ADDR(arch_pc(regs));
        n = 1;
    }
    return stack_table_intern(t->stacks, pcs, (unsigned)n);
}

uint32_t capture_stack(struct tracee *t, const struct arch_regs *regs)
{
    struct stack_window w;
    stack_window_init(&w, t, arch_sp(regs));
    return capture_stack_in(&w, regs);
}
