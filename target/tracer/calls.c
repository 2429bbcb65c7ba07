#include "target/tracer/calls.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "shared/log.h"
#include "target/heap/heap.h"
#include "target/tracer/misuse.h"
#include "target/tracer/guardian.h"
#include "target/tracer/modules.h"
#include "target/tracer/return_sites.h"

static enum alloc_kind family_kind(enum intercept_family f)
{
    switch (f) {
    case FAMILY_NEW: return ALLOC_NEW;
    case FAMILY_NEW_ARRAY: return ALLOC_NEW_ARRAY;
    default: return ALLOC_MALLOC;
    }
}

/* A call made by the allocator itself (realloc calling malloc, operator new
 * calling malloc, free calling munmap) is not a call of the program: only
 * the outermost call counts, as valgrind counts it.  A call is the
 * allocator's own when its caller lies in a module whose functions we
 * intercept and, for heap functions, an intercepted call is still open on
 * the same thread (so libc's strdup calling malloc does count).  Mappings
 * made by the C library itself (malloc arenas, thread stacks) are not the
 * program's mappings either. */
static bool caller_is_allocator(struct tracee *t, uint64_t ret_addr)
{
    struct module *m = module_find(t->modules, ret_addr);
    return m && m->intercepts_placed;
}

static bool call_is_internal(struct tracee *t, struct thread *th, const struct intercept_fn *fn,
                             uint64_t ret_addr)
{
    /* A tail call from an intercepted function (glibc's realloc(NULL, n)
     * jumps to malloc) returns through the trampoline of the outer call. */
    if (scratch_is_trampoline(t, ret_addr))
        return true;
    if (!intercept_is_map_op(fn->op) && th->ncalls == 0)
        return false;
    /* A static executable is its own C library: its mappings are the
     * program's unless made inside an intercepted call (malloc's). */
    if (th->ncalls == 0 && module_is_static_executable(t->modules, ret_addr))
        return false;
    return caller_is_allocator(t, ret_addr);
}

/* The first n integer arguments at the entry of an intercepted function:
 * from registers, or from the stack where the calling convention puts
 * them there (i386), read through the stop's stack window. */
static void call_args(struct stack_window *w, const struct arch_regs *regs, uint64_t *out, int n)
{
    for (int i = 0; i < n; i++) {
        struct arch_arg_slot a = arch_arg_slot(regs, i);
        out[i] = a.value;
        if (!a.in_memory)
            continue;
        out[i] = 0;
        if (ARCH_PTR_SIZE == 4) {
            uint32_t word;
            if (stack_window_read(w, a.addr, &word, sizeof(word)) == 0)
                out[i] = word;
        } else if (stack_window_read(w, a.addr, &out[i], sizeof(out[i])) < 0) {
            out[i] = 0;
        }
    }
}

/* A release the program made (free, delete...) of addr: the books forget
 * the block; what is wrong with it goes to misuse.c. */
static void record_release(struct tracee *t, struct thread *th, const struct intercept_fn *fn,
                           const struct arch_regs *regs, uint64_t addr, uint64_t ret_addr)
{
    if (!addr)
        return;
    if (misuse_release_continues(th, fn, arch_sp(regs), ret_addr, addr))
        return;
    /* The allocator freeing memory the program already gave back (glibc
     * empties a dying thread's tcache through free()): housekeeping that
     * valgrind, which replaces the allocator, never sees. */
    if (caller_is_allocator(t, ret_addr) && !heap_lookup(t->books, addr, NULL))
        return;
    struct heap_block blk;
    enum heap_free_result r = heap_record_free(t->books, addr, family_kind(fn->family), &blk);
    if (r == HEAP_FREE_OK)
        misuse_released(t, regs, &blk);
    else
        misuse_bad_release(t, th, regs, fn, addr, r, &blk);
}

static void move_past_breakpoint(struct breakpoint *bp, struct arch_regs *regs)
{
    if (bp->plan.kind == DISPLACE_EMULATE)
        arch_set_pc(regs, bp->plan.new_pc);
    else
        arch_set_pc(regs, bp->slot_addr + bp->plan.slot_entry);
}

/* perf: a free of a block the books know, with no intercepted call open on
 * the thread, needs neither the caller nor the stack, so its stop reads no
 * target memory at all.  Every other entry reads the return address from
 * the stack window that the capture of its stack then reuses. */
static bool entry_needs_caller(struct tracee *t, struct thread *th, const struct intercept_fn *fn,
                               uint64_t released)
{
    if (!fn->releases || th->ncalls > 0)
        return true;
    return released && !heap_lookup(t->books, released, NULL);
}

uint64_t call_return_address(struct stack_window *w, const struct arch_regs *regs,
                             struct arch_return_slot *slot)
{
    *slot = arch_return_slot_at_entry(regs);
    if (!slot->in_memory)
        return arch_return_reg(regs);
    uint64_t ret = 0;
    stack_window_read(w, slot->addr, &ret, ARCH_PTR_SIZE);
    return ret;
}

void call_on_entry(struct tracee *t, struct thread *th, struct breakpoint *bp, struct arch_regs *regs)
{
    const struct intercept_fn *fn = bp->fn;
    if (fn->op == OP_EXIT) {
        /* exit(): the program's own frames are gone, no exit handler has
         * run yet.  Only the hook's business; nothing is recorded. */
        if (t->opts.exit_call_hook)
            t->opts.exit_call_hook(t->opts.exit_call_ctx, t, th, regs);
        move_past_breakpoint(bp, regs);
        return;
    }
    struct stack_window w;
    stack_window_init(&w, t, arch_sp(regs));
    struct arch_return_slot slot = {0};
    /* 0 is no module's address: "not the allocator's own call". */
    uint64_t ret_addr = 0;
    uint64_t released = 0; /* the pointer a free-like function gives back */
    if (fn->releases)
        call_args(&w, regs, &released, 1);
    else
        misuse_end_release_chain(th);
    if (entry_needs_caller(t, th, fn, released))
        ret_addr = call_return_address(&w, regs, &slot);

    if (!call_is_internal(t, th, fn, ret_addr)) {
        if (fn->releases) {
            heap_set_thread(t->books, (uint32_t)th->tid);
            record_release(t, th, fn, regs, released, ret_addr);
        } else {
            /* perf: the call site's own stub, so that the return stop
             * writes no register; else the shared trampoline. */
            uint64_t tramp = slot.in_memory ? return_stub_for(t, th, ret_addr) : 0;
            if (!tramp)
                tramp = scratch_trampoline(t, bp->module_start);
            struct pending_call *c = thread_push_call(th);
            c->fn = fn;
            call_args(&w, regs, c->args, 5);
            c->orig_ret = ret_addr;
            c->ret_slot = slot.addr;
            c->entry_sp = arch_sp(regs);
            c->stack_id = capture_stack_in(&w, regs);
            if ((fn->op == OP_REALLOC || fn->op == OP_REALLOCARRAY) && c->args[0])
                misuse_check_realloc(t, th, fn, c->args[0], c->stack_id);
            if (slot.in_memory) {
                guardian_note_return(t->pid, slot.addr, ret_addr, tramp, ARCH_PTR_SIZE);
                if (target_mem_write_word(&t->mem, slot.addr, tramp, ARCH_PTR_SIZE) < 0) {
                    guardian_forget_return(t->pid, slot.addr);
                    th->ncalls--; /* cannot catch the return: the call is lost */
                }
            } else {
                arch_set_return_reg(regs, tramp);
            }
        }
    }
    move_past_breakpoint(bp, regs);
}

static uint64_t checked_product(uint64_t a, uint64_t b, bool *overflow)
{
    uint64_t r;
    *overflow = __builtin_mul_overflow(a, b, &r);
    return r;
}

struct stale_realloc {
    uint64_t addr;
    struct pending_call *found;
};

static void find_pending_realloc(struct tracee *t, struct thread *th, void *ctx)
{
    (void)t;
    struct stale_realloc *s = ctx;
    for (unsigned i = 0; i < th->ncalls && !s->found; i++) {
        struct pending_call *c = &th->calls[i];
        if ((c->fn->op == OP_REALLOC || c->fn->op == OP_REALLOCARRAY) && c->args[0] == s->addr &&
            !c->old_released)
            s->found = c;
    }
}

/* A block handed out while the books still hold its address: another
 * thread's realloc already released it inside the C library, and that
 * realloc's return stop has not been handled yet (stops of different
 * threads come in any order).  Its release is booked now, so that its
 * return later does not take the new owner's block off the books. */
static void settle_reused_address(struct tracee *t, uint64_t addr)
{
    if (!addr || !heap_lookup(t->books, addr, NULL))
        return;
    struct stale_realloc s = {.addr = addr, .found = NULL};
    thread_foreach(t, find_pending_realloc, &s);
    if (!s.found)
        return;
    struct heap_block old;
    if (heap_record_free(t->books, addr, ALLOC_MALLOC, &old) != HEAP_FREE_UNKNOWN)
        misuse_reallocated(t, &old, s.found->stack_id);
    s.found->old_released = true;
}

static void record_result(struct tracee *t, const struct pending_call *c, uint64_t r)
{
    const uint64_t *a = c->args;
    enum alloc_kind kind = family_kind(c->fn->family);
    bool overflow = false;
    uint64_t size;
    if (!intercept_is_map_op(c->fn->op) && c->fn->op != OP_POSIX_MEMALIGN)
        settle_reused_address(t, r);
    switch (c->fn->op) {
    case OP_MALLOC:
    case OP_NEW:
    case OP_VALLOC:
        if (r)
            heap_record_alloc(t->books, r, a[0], c->stack_id, kind);
        break;
    case OP_PVALLOC:
        size = (a[0] + heap_page_size() - 1) & ~(heap_page_size() - 1);
        if (r)
            heap_record_alloc(t->books, r, size ? size : heap_page_size(), c->stack_id, kind);
        break;
    case OP_ALIGNED_ALLOC:
        if (r)
            heap_record_alloc(t->books, r, a[1], c->stack_id, kind);
        break;
    case OP_CALLOC:
        size = checked_product(a[0], a[1], &overflow);
        if (r && !overflow)
            heap_record_alloc(t->books, r, size, c->stack_id, kind);
        break;
    case OP_REALLOC:
    case OP_REALLOCARRAY:
        size = c->fn->op == OP_REALLOC ? a[1] : checked_product(a[1], a[2], &overflow);
        if (overflow)
            break;
        if (a[0] && !c->old_released && (r || size == 0)) {
            struct heap_block old;
            if (heap_record_free(t->books, a[0], ALLOC_MALLOC, &old) != HEAP_FREE_UNKNOWN)
                misuse_reallocated(t, &old, c->stack_id);
        }
        if (r)
            heap_record_alloc(t->books, r, size, c->stack_id, kind);
        break;
    case OP_POSIX_MEMALIGN: {
        uint64_t p = 0;
        if ((int)r == 0 && target_mem_read_word(&t->mem, a[0], &p, ARCH_PTR_SIZE) == 0 && p) {
            settle_reused_address(t, p);
            heap_record_alloc(t->books, p, a[2], c->stack_id, kind);
        }
        break;
    }
    case OP_MMAP:
        if (r != (uint64_t)(uintptr_t)MAP_FAILED && (r & (heap_page_size() - 1)) == 0)
            heap_record_map(t->books, r, a[1], c->stack_id);
        break;
    case OP_MUNMAP:
        if ((int)r == 0)
            heap_record_unmap(t->books, a[0], a[1]);
        break;
    case OP_MREMAP:
        if (r != (uint64_t)(uintptr_t)MAP_FAILED && (r & (heap_page_size() - 1)) == 0)
            heap_record_remap(t->books, a[0], a[1], r, a[2], c->stack_id);
        break;
    case OP_FREE:
    case OP_DELETE:
    case OP_EXIT:
        break;
    }
}

/* The call a thread returning with this sp ends (th->ncalls > 0), taken
 * off the shadow stack: the innermost one whose return slot sits just
 * below sp; calls above it were left by longjmp. */
static struct pending_call pop_returning_call(struct tracee *t, struct thread *th, uint64_t sp)
{
    unsigned i = th->ncalls;
    while (i > 0 && th->calls[i - 1].ret_slot && th->calls[i - 1].ret_slot + ARCH_PTR_SIZE != sp)
        i--;
    if (i == 0)
        i = th->ncalls;
    struct pending_call c = th->calls[i - 1];
    for (unsigned k = i - 1; k < th->ncalls; k++)
        guardian_forget_return(t->pid, th->calls[k].ret_slot);
    th->ncalls = i - 1;
    return c;
}

void call_on_return(struct tracee *t, struct thread *th, struct arch_regs *regs)
{
    if (th->ncalls == 0) {
        mt_warn("thread %d returned through a trampoline with no open call", (int)th->tid);
        return;
    }
    struct pending_call c = pop_returning_call(t, th, arch_sp(regs));
    /* A stub that jumps to the return address lets the thread go on from
     * where it stopped; the shared trampoline needs the PC moved there. */
    uint64_t via = 0;
    if (!return_stub_at(t, arch_breakpoint_addr_from_pc(arch_pc(regs)), &via) || via != c.orig_ret)
        arch_set_pc(regs, c.orig_ret);
    heap_set_thread(t->books, (uint32_t)th->tid);
    record_result(t, &c, arch_retval(regs));
}

/* The words of [lo, hi) that hold a return trampoline get ret back.  A
 * callee that received the trampoline in lr/x30 saves it in its own frame
 * (push {lr}, stp x29, x30), below the call's entry sp and above the
 * stack pointer of what runs inside it.  The number of copies that could
 * not be written back. */
static unsigned restore_saved_copies(struct tracee *t, struct target_mem *mem, uint64_t lo,
                                     uint64_t hi, uint64_t ret)
{
    enum { MAX_SCAN = 64 * 1024 };
    lo = (lo + ARCH_PTR_SIZE - 1) & ~(uint64_t)(ARCH_PTR_SIZE - 1);
    if (!ret || hi <= lo || hi - lo > MAX_SCAN)
        return 0;
    static uint8_t buf[MAX_SCAN];
    size_t len = (size_t)(hi - lo);
    /* Unreadable: the stack is gone with the thread, nothing to put back. */
    if (target_mem_read(mem, lo, buf, len) < 0)
        return 0;
    unsigned failed = 0;
    for (size_t off = 0; off + ARCH_PTR_SIZE <= len; off += ARCH_PTR_SIZE) {
        uint64_t w = 0;
        memcpy(&w, buf + off, ARCH_PTR_SIZE);
        if (w && scratch_is_trampoline(t, ARCH_CODE_ADDR(w)) &&
            target_mem_write_word(mem, lo + off, ret, ARCH_PTR_SIZE) < 0)
            failed++;
    }
    return failed;
}

unsigned call_restore_saved_returns(struct tracee *t, struct target_mem *mem, const struct thread *th,
                                    uint64_t sp)
{
    uint64_t lo = sp;
    unsigned failed = 0;
    for (unsigned i = th->ncalls; i > 0; i--) {
        const struct pending_call *c = &th->calls[i - 1];
        if (c->ret_slot || !c->entry_sp)
            continue;
        failed += restore_saved_copies(t, mem, lo, c->entry_sp, c->orig_ret);
        lo = c->entry_sp;
    }
    return failed;
}

void call_restore_returns(struct tracee *t, struct thread *th)
{
    struct arch_regs regs;
    bool have_regs = th->ncalls && arch_get_regs(th->tid, &regs) == 0;
    bool regs_changed = false;
    /* Stopped on a trampoline before its trap ran: the call has returned. */
    if (have_regs && scratch_is_trampoline(t, ARCH_CODE_ADDR(arch_pc(&regs)))) {
        struct pending_call c = pop_returning_call(t, th, arch_sp(&regs));
        arch_set_pc(&regs, c.orig_ret);
        record_result(t, &c, arch_retval(&regs));
        regs_changed = true;
    }
    /* The innermost call's return address may still be in its register
     * (not after a return through the trampoline just undone: lr then
     * still holds the trampoline of the call that returned). */
    else if (have_regs && th->ncalls) {
        const struct pending_call *c = &th->calls[th->ncalls - 1];
        uint64_t lr = arch_return_reg(&regs);
        if (!c->ret_slot && lr && scratch_is_trampoline(t, ARCH_CODE_ADDR(lr))) {
            arch_set_return_reg(&regs, c->orig_ret);
            regs_changed = true;
        }
    }
    /* Said, as for a return slot below: nothing else can be done, and the
     * detach goes on. */
    if (have_regs && call_restore_saved_returns(t, &t->mem, th, arch_sp(&regs)))
        mt_warn("thread %d: cannot restore the saved copies of a return address", (int)th->tid);
    if (regs_changed && arch_set_regs(th->tid, &regs) < 0)
        mt_warn("thread %d: cannot restore a return address in its registers: %s", (int)th->tid,
                strerror(errno));
    for (unsigned i = th->ncalls; i > 0; i--) {
        struct pending_call *c = &th->calls[i - 1];
        uint64_t now = 0;
        if (c->ret_slot && target_mem_read_word(&t->mem, c->ret_slot, &now, ARCH_PTR_SIZE) == 0 &&
            scratch_is_trampoline(t, now) &&
            target_mem_write_word(&t->mem, c->ret_slot, c->orig_ret, ARCH_PTR_SIZE) < 0) {
            /* Said: nothing else can be done (the memory is gone or
             * cannot be written), and the detach goes on. */
            mt_warn("thread %d: cannot restore a return address at %#llx", (int)th->tid,
                    (unsigned long long)c->ret_slot);
        }
        guardian_forget_return(t->pid, c->ret_slot);
    }
    th->ncalls = 0;
}

void call_record_release(struct tracee *t, struct thread *th, const struct intercept_fn *fn,
                         const struct arch_regs *regs, uint64_t addr, uint64_t ret_addr)
{
    record_release(t, th, fn, regs, addr, ret_addr);
}

void call_record_result(struct tracee *t, const struct pending_call *c, uint64_t r)
{
    record_result(t, c, r);
}
