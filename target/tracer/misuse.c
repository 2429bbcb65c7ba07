#include "target/tracer/misuse.h"

#include <stdio.h>
#include <string.h>

#include "shared/log.h"
#include "target/heap/freed.h"
#include "target/tracer/calls.h"

bool misuse_release_continues(struct thread *th, uint64_t entry, uint64_t sp, uint64_t ret_addr,
                              uint64_t ptr)
{
    struct release_mark *m = &th->last_release;
    /* A tail call keeps the stack pointer and return address of the call
     * the program made, and passes the same pointer on; the same function
     * again (a loop freeing the same pointer) is a new call.  Functions
     * are told apart by their entry: one allocator's free jumping to
     * another module's free is a chain too, though both are "free". */
    /* A return address of 0 was not read (calls.c skips the read for a
     * release of a known block): the stack pointer and pointer decide. */
    bool same_ret = m->ret == ret_addr || !m->ret || !ret_addr;
    bool same_call = m->sp == sp && same_ret && m->ptr == ptr && m->head != entry &&
                     m->last != entry && m->head;
    if (same_call) {
        m->last = entry;
        return true;
    }
    *m = (struct release_mark){.sp = sp, .ret = ret_addr, .ptr = ptr, .head = entry, .last = entry};
    return false;
}

void misuse_released(struct tracee *t, const struct arch_regs *regs, const struct heap_block *blk)
{
    if (t->freed)
        freed_history_push(t->freed, blk, capture_stack(t, regs));
}

void misuse_reallocated(struct tracee *t, const struct heap_block *blk, uint32_t call_stack)
{
    if (t->freed)
        freed_history_push(t->freed, blk, call_stack);
}

struct containing {
    uint64_t addr;
    bool found;
    struct heap_block block;
};

static void find_containing(void *ctx, const struct heap_block *b)
{
    struct containing *c = ctx;
    if (!c->found && c->addr >= b->addr && c->addr - b->addr < (b->size ? b->size : 1)) {
        c->found = true;
        c->block = *b;
    }
}

/* Where ptr points: into a live block, into a block freed before, or
 * nowhere we know.  Linear: errors are rare. */
static void describe(struct tracee *t, uint64_t ptr, struct misuse_error *e)
{
    struct containing c = {.addr = ptr};
    heap_foreach_block(t->books, find_containing, &c);
    if (c.found) {
        e->state = MISUSE_BLOCK_LIVE;
        e->block_addr = c.block.addr;
        e->block_size = c.block.size;
        e->alloc_stack = c.block.stack_id;
        return;
    }
    struct freed_block f;
    if (t->freed && freed_history_find(t->freed, ptr, &f)) {
        e->state = MISUSE_BLOCK_FREED;
        e->block_addr = f.block.addr;
        e->block_size = f.block.size;
        e->alloc_stack = f.block.stack_id;
        e->free_stack = f.free_stack;
        return;
    }
    e->state = MISUSE_BLOCK_UNKNOWN;
}

static void emit(struct tracee *t, const struct misuse_error *e)
{
    const struct misuse_error *kept = misuse_log_add(&t->errors, e);
    if (kept && t->opts.on_misuse)
        t->opts.on_misuse(t->opts.on_misuse_ctx, t, kept);
    else if (!kept && t->errors.total == MISUSE_LOG_MAX + 1)
        mt_warn("process %d: more than %u misuse errors; further ones are counted, not shown",
                (int)t->pid, MISUSE_LOG_MAX);
}

static void base_name_into(char *dst, size_t cap, const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    snprintf(dst, cap, "%s", slash ? slash + 1 : path ? path : "?");
}

/* call_stack: captured already, or UINT32_MAX: from regs when needed. */
static void bad_release(struct tracee *t, int tid, const struct arch_regs *regs,
                        const struct intercept_fn *fn, unsigned released_by, uint64_t ptr,
                        enum heap_free_result r, const struct heap_block *freed,
                        uint32_t call_stack)
{
    struct misuse_error e = {.function = fn->name, .addr = ptr, .tid = tid};
    if (r == HEAP_FREE_MISMATCH || r == HEAP_FREE_OTHER_HEAP) {
        e.kind = r == HEAP_FREE_OTHER_HEAP ? MISUSE_OTHER_HEAP : MISUSE_MISMATCHED;
        if (r == HEAP_FREE_OTHER_HEAP) {
            base_name_into(e.made_by, sizeof(e.made_by),
                           allocators_heap_path(&t->allocators, freed->heap));
            base_name_into(e.released_by, sizeof(e.released_by),
                           allocators_heap_path(&t->allocators, released_by));
        }
        e.state = MISUSE_BLOCK_LIVE;
        e.block_addr = freed->addr;
        e.block_size = freed->size;
        e.alloc_stack = freed->stack_id;
        e.call_stack = call_stack != UINT32_MAX ? call_stack : capture_stack(t, regs);
        if (t->freed)
            freed_history_push(t->freed, freed, e.call_stack);
    } else {
        e.kind = MISUSE_INVALID_FREE;
        describe(t, ptr, &e);
        /* Blocks allocated before an attach are unknown to the books, and
         * freeing them is fine. */
        if (e.state == MISUSE_BLOCK_UNKNOWN && t->attached_mode)
            return;
        e.call_stack = call_stack != UINT32_MAX ? call_stack : capture_stack(t, regs);
    }
    emit(t, &e);
}

void misuse_bad_release(struct tracee *t, struct thread *th, const struct arch_regs *regs,
                        const struct intercept_fn *fn, unsigned released_by, uint64_t ptr,
                        enum heap_free_result r, const struct heap_block *freed)
{
    bad_release(t, th->tid, regs, fn, released_by, ptr, r, freed, UINT32_MAX);
}

void misuse_bad_release_at(struct tracee *t, int tid, const struct intercept_fn *fn,
                           unsigned released_by, uint64_t ptr, enum heap_free_result r,
                           const struct heap_block *freed, uint32_t call_stack)
{
    bad_release(t, tid, NULL, fn, released_by, ptr, r, freed, call_stack);
}

void misuse_check_realloc(struct tracee *t, struct thread *th, const struct intercept_fn *fn,
                          uint64_t ptr, uint32_t call_stack)
{
    if (heap_knows(t->books, ptr))
        return;
    struct misuse_error e = {.kind = MISUSE_INVALID_FREE, .function = fn->name, .addr = ptr,
                             .tid = th->tid, .call_stack = call_stack};
    describe(t, ptr, &e);
    if (e.state == MISUSE_BLOCK_UNKNOWN && t->attached_mode)
        return;
    emit(t, &e);
}

void misuse_reset(struct tracee *t)
{
    misuse_log_reset(&t->errors);
    freed_history_free(t->freed);
    t->freed = t->opts.check ? freed_history_new(FREED_HISTORY_DEFAULT) : NULL;
}
