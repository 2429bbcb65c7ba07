/* The call stack of a thread stopped at an intercepted function's entry.
 * The stack is read once per event, in one process_vm_readv of a window
 * above the stack pointer; the unwinder's further reads come from that
 * window and only fall back to the target when a frame lies beyond it. */
#include <string.h>

#include "shared/xalloc.h"
#include "target/heap/stacks.h"
#include "target/tracer/calls.h"
#include "target/tracer/modules.h"
#include "target/unwind/unwind.h"

#define STACK_WINDOW 8192
#define MAX_DEPTH 256

struct capture_ctx {
    struct tracee *t;
    uint64_t base;     /* target address of window[0] */
    size_t have;       /* bytes of the window read */
    bool loaded;
};

static int capture_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    struct capture_ctx *c = ctx;
    if (!c->loaded) {
        c->loaded = true;
        c->have = target_mem_read_partial(&c->t->mem, c->base, c->t->stack_window, STACK_WINDOW);
    }
    if (addr >= c->base && addr - c->base <= c->have && len <= c->have - (addr - c->base)) {
        memcpy(buf, c->t->stack_window + (addr - c->base), len);
        return 0;
    }
    return target_mem_read(&c->t->mem, addr, buf, len);
}

static struct cfi_table *capture_find_cfi(void *ctx, uint64_t pc, uint64_t *bias)
{
    struct capture_ctx *c = ctx;
    struct module *m = module_find(c->t->modules, pc);
    if (!m)
        return NULL;
    *bias = m->bias;
    return module_cfi(c->t->modules, m);
}

uint32_t capture_stack(struct tracee *t, const struct arch_regs *regs)
{
    if (!t->stack_window)
        t->stack_window = xmalloc(STACK_WINDOW);
    struct unwind_regs ur;
    arch_regs_to_unwind(regs, &ur);
    struct capture_ctx ctx = {.t = t, .base = arch_sp(regs)};
    struct unwind_memory mem = {.read = capture_read, .ctx = &ctx};
    struct unwind_lookup lookup = {.find = capture_find_cfi, .ctx = &ctx};
    uint64_t pcs[MAX_DEPTH];
    unsigned depth = t->opts.depth < MAX_DEPTH ? t->opts.depth : MAX_DEPTH;
    int n = unwind_stack_at_entry(&ur, &mem, &lookup, pcs, (int)depth);
    if (n < 1) {
        pcs[0] = arch_pc(regs);
        n = 1;
    }
    return stack_table_intern(t->stacks, pcs, (unsigned)n);
}
