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
    case FAMILY_ANY: return ALLOC_ANY;
    case FAMILY_NAMED: return ALLOC_CUSTOM;
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
                           uint64_t entry, unsigned alloc_id, const struct arch_regs *regs,
                           uint64_t addr, uint64_t ret_addr)
{
    if (!addr)
        return;
    if (misuse_release_continues(th, entry, arch_sp(regs), ret_addr, addr))
        return;
    /* The allocator freeing memory the program already gave back (glibc
     * empties a dying thread's tcache through free()): housekeeping that
     * valgrind, which replaces the allocator, never sees. */
    /* (the books first: a lookup costs less than finding the caller's
     * module, and most released blocks are known) */
    if (!heap_lookup(t->books, addr, NULL) && caller_is_allocator(t, ret_addr))
        return;
    struct heap_block blk;
    unsigned heap = allocators_heap_of(&t->allocators, alloc_id);
    heap_set_heap(t->books, heap);
    enum heap_free_result r = heap_record_free(t->books, addr, family_kind(fn->family), &blk);
    if (r == HEAP_FREE_OK)
        misuse_released(t, regs, &blk);
    else
        misuse_bad_release(t, th, regs, fn, heap, addr, r, &blk);
}

/* --- exceptions (breakpoint engine) ---------------------------------------
 *
 * The C++ unwinder (libgcc_s) walks the stack by the return addresses in
 * it, and a return stub or trampoline has no unwind information: it would
 * end the walk there and std::terminate would run.  So when th enters the
 * unwinder (OP_UNWIND: _Unwind_RaiseException and its kin) every open
 * call gets its real return address back and is marked unhooked; the
 * stack is then the untraced program's.  Where the exception lands tells
 * which calls it left: those entered at or below the stack pointer of the
 * handler's __cxa_begin_catch (OP_CATCH) or of any later intercepted
 * entry are gone, failed calls that book nothing (no block, as valgrind
 * books a failed call).  The others are still running (the handler is
 * inside them): once no exception of the thread is in flight (a handler
 * run by a destructor during another exception's unwinding would
 * otherwise hook a call that exception still has to pass), each gets its
 * stub back and its return is caught as before.  A call whose return
 * address is in a register (arm, aarch64: ret_slot 0) cannot be hooked
 * again: it is forgotten at the handler. */
static unsigned restore_saved_copies(struct tracee *t, struct target_mem *mem, uint64_t lo,
                                     uint64_t hi, uint64_t ret, uint64_t *found, uint64_t *found_word);

/* The stack word the guardian knows for c: its return slot, or the copy of
 * its register-held return address it was hooked at again. */
static uint64_t guarded_slot(const struct pending_call *c) { return c->ret_slot ? c->ret_slot : c->saved_slot; }

static void unhook_returns(struct tracee *t, struct thread *th, uint64_t sp)
{
    /* arm, aarch64: the copies callees saved of a register-held return
     * address get it back, and the highest (the callee's own frame, just
     * below the entry sp) is kept for hook_again. */
    unsigned failed = 0;
    uint64_t lo = sp;
    for (unsigned i = th->ncalls; sp && i > 0; i--) {
        struct pending_call *c = &th->calls[i - 1];
        if (c->ret_slot || !c->entry_sp)
            continue;
        uint64_t found = 0, word = 0;
        failed += restore_saved_copies(t, &t->mem, lo, c->entry_sp, c->orig_ret, &found, &word);
        if (found) {
            guardian_forget_return(t->pid, c->saved_slot);
            c->saved_slot = found;
            c->saved_tramp = word;
        }
        lo = c->entry_sp;
    }
    if (failed)
        mt_warn("thread %d: cannot restore the saved copies of a return address", (int)th->tid);
    for (unsigned i = th->ncalls; i > 0; i--) {
        struct pending_call *c = &th->calls[i - 1];
        if (c->unhooked)
            continue;
        uint64_t now = 0;
        if (c->ret_slot && target_mem_read_word(&t->mem, c->ret_slot, &now, ARCH_PTR_SIZE) == 0 &&
            scratch_is_trampoline(t, now) &&
            target_mem_write_word(&t->mem, c->ret_slot, c->orig_ret, ARCH_PTR_SIZE) < 0)
            mt_warn("thread %d: cannot restore a return address at %#llx", (int)th->tid,
                    (unsigned long long)c->ret_slot);
        guardian_forget_return(t->pid, guarded_slot(c));
        c->unhooked = true;
    }
}

/* The thread's exceptions in flight, by their _Unwind_Exception (a set:
 * a rethrow may pass two of the unwinder's entries).  One too many for
 * the set counts as in flight for good: no call is hooked again. */
static void note_exception(struct thread *th, uint64_t exc, bool thrown)
{
    unsigned n = th->nexceptions, max = sizeof(th->exceptions) / sizeof(th->exceptions[0]);
    for (unsigned i = 0; i < n && i < max; i++)
        if (th->exceptions[i] == exc) {
            if (!thrown)
                th->exceptions[i] = th->exceptions[--th->nexceptions];
            return;
        }
    if (thrown && n <= max) {
        if (n < max)
            th->exceptions[n] = exc;
        th->nexceptions++;
    }
}

/* Its stub back in the return slot of a call still running; false when
 * it cannot be (the slot no longer holds its return address). */
static bool hook_again(struct tracee *t, struct thread *th, struct pending_call *c)
{
    /* A register-held return address (arm, aarch64) is hooked again where
     * the callee had saved it, with the word that was there. */
    uint64_t slot = guarded_slot(c), now = 0;
    if (!slot || target_mem_read_word(&t->mem, slot, &now, ARCH_PTR_SIZE) < 0 || now != c->orig_ret)
        return false;
    uint64_t tramp = c->ret_slot ? return_stub_for(t, th, c->orig_ret) : c->saved_tramp;
    if (!tramp)
        tramp = scratch_trampoline(t, 0);
    if (!tramp)
        return false;
    guardian_note_return(t->pid, slot, c->orig_ret, tramp, ARCH_PTR_SIZE);
    if (target_mem_write_word(&t->mem, slot, tramp, ARCH_PTR_SIZE) < 0) {
        guardian_forget_return(t->pid, slot);
        return false;
    }
    c->unhooked = false;
    return true;
}

/* th stopped at an entry with stack pointer sp: its unhooked calls
 * entered at or below sp are gone; with rehook, the others are caught
 * again (or forgotten when they cannot be). */
static void settle_unhooked(struct tracee *t, struct thread *th, uint64_t sp, bool rehook)
{
    unsigned k = 0;
    for (unsigned i = 0; i < th->ncalls; i++) {
        struct pending_call *c = &th->calls[i];
        if (c->unhooked) {
            uint64_t at = c->ret_slot ? c->ret_slot : c->entry_sp;
            if (at <= sp)
                continue; /* left by the exception: a failed call */
            if (rehook && !hook_again(t, th, c))
                continue;
        }
        if (k != i)
            th->calls[k] = *c;
        k++;
    }
    th->ncalls = k;
}

void call_skip_breakpoint(const struct breakpoint *bp, struct arch_regs *regs)
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

/* --sample: is an allocation of size bytes by th sampled (its stack
 * kept)?  Advances th's stream (target/heap/sample_draw.h). */
static bool size_sampled(struct tracee *t, struct thread *th, uint64_t size)
{
    if (!th->sampler.mean) /* the n-th thread to draw gets stream n: a seed repeats a run */
        th->sampler.rng = sample_seed_for(t->opts.sample_seed, t->sample_streams++);
    return sample_take(&th->sampler, t->opts.sample_bytes, size) != 0;
}

/* --sample, at a call's entry (a its own arguments): does it keep its
 * stack?  A string copy's size is known only at its return, where it is
 * decided (call_on_return); the mmap family always keeps its stack. */
static bool entry_sampled(struct tracee *t, struct thread *th, const struct intercept_fn *fn,
                          const uint64_t *a)
{
    int i, j;
    if (!t->opts.sample_bytes || intercept_size_args(fn->op, &i, &j) != INTERCEPT_SIZE_ARGS)
        return true;
    uint64_t size = a[i];
    if (j >= 0 && __builtin_mul_overflow(size, a[j], &size))
        size = UINT64_MAX;
    return size_sampled(t, th, size);
}

void call_on_entry(struct tracee *t, struct thread *th, struct breakpoint *bp, struct arch_regs *regs)
{
    const struct intercept_fn *fn = bp->fn;
    if (fn->op == OP_EXCEPTION_ALLOC) {
        th->exception_memory = true;
        call_skip_breakpoint(bp, regs);
        return;
    }
    if (fn->op == OP_UNWIND || fn->op == OP_CATCH) {
        struct stack_window w;
        stack_window_init(&w, t, arch_sp(regs));
        uint64_t exc = 0; /* the _Unwind_Exception, both functions' first argument */
        call_args(&w, regs, &exc, 1);
        if (fn->op == OP_UNWIND) {
            th->exception_memory = false;
            note_exception(th, exc, true);
            unhook_returns(t, th, arch_sp(regs));
        } else {
            note_exception(th, exc, false);
            settle_unhooked(t, th, arch_sp(regs), th->nexceptions == 0);
        }
        call_skip_breakpoint(bp, regs);
        return;
    }
    settle_unhooked(t, th, arch_sp(regs), false);
    if (fn->op == OP_EXIT) {
        /* exit(): the program's own frames are gone, no exit handler has
         * run yet.  Only the hook's business; nothing is recorded. */
        if (t->opts.exit_call_hook)
            t->opts.exit_call_hook(t->opts.exit_call_ctx, t, th, regs);
        call_skip_breakpoint(bp, regs);
        return;
    }
    struct stack_window w;
    stack_window_init(&w, t, arch_sp(regs));
    struct arch_return_slot slot = {0};
    /* 0 is no module's address: "not the allocator's own call". */
    uint64_t ret_addr = 0;
    uint64_t released = 0; /* the pointer a free-like function gives back */
    if (fn->releases)
        call_args(&w, regs, &released, 1); /* (no release takes a leading argument) */
    else
        misuse_end_release_chain(th);
    if (entry_needs_caller(t, th, fn, released))
        ret_addr = call_return_address(&w, regs, &slot);
    /* The C++ runtime's thrown object, allocated inside a call about to
     * fail by throwing (operator new's bad_alloc), or freed inside one
     * that caught it: the program's, as valgrind counts it; else its free
     * after the catch, outside any call, would be of a block the books
     * never had (or its allocation would stay booked). */
    bool program_call = th->exception_memory && !intercept_is_map_op(fn->op);
    if (!intercept_is_map_op(fn->op))
        th->exception_memory = false;

    if (program_call || !call_is_internal(t, th, fn, ret_addr)) {
        if (intercept_is_heap_fn(fn))
            allocators_count(&t->allocators, bp->alloc_id);
        if (fn->releases) {
            heap_set_thread(t->books, (uint32_t)th->tid);
            /* --sample: a release keeps no stack (as with the agent). */
            t->snap_unsampled = t->opts.sample_bytes && !intercept_is_map_op(fn->op);
            record_release(t, th, fn, bp->addr, bp->alloc_id, regs, released, ret_addr);
            t->snap_unsampled = false;
        } else {
            /* perf: the call site's own stub, so that the return stop
             * writes no register; else the shared trampoline. */
            uint64_t tramp = slot.in_memory ? return_stub_for(t, th, ret_addr) : 0;
            if (!tramp)
                tramp = scratch_trampoline(t, bp->module_start);
            struct pending_call *c = thread_push_call(th);
            c->fn = fn;
            c->tid = th->tid;
            c->alloc_id = bp->alloc_id;
            /* the op's own arguments, where the function has them (after
             * mi_heap_*'s heap; --alloc-fn's positions) */
            uint64_t args[6] = {0};
            unsigned nc = sizeof(c->args) / sizeof(c->args[0]);
            call_args(&w, regs, args, (int)intercept_args_needed(fn, nc));
            for (unsigned k = 0; k < nc; k++)
                c->args[k] = args[intercept_arg_index(fn, k)];
            c->orig_ret = ret_addr;
            c->ret_slot = slot.addr;
            c->entry_sp = arch_sp(regs);
            c->stack_id = entry_sampled(t, th, fn, c->args) ? capture_stack_in(&w, regs)
                                                             : t->unsampled_stack;
            if (intercept_is_realloc_op(fn->op) && c->args[0])
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
    call_skip_breakpoint(bp, regs);
}

static uint64_t checked_product(uint64_t a, uint64_t b, bool *overflow)
{
    uint64_t r;
    *overflow = __builtin_mul_overflow(a, b, &r);
    return r;
}

/* realloc and the like (intercept_is_realloc_op): the new size from the
 * call's own arguments a, and whether the old block is released given
 * the result r. */
static uint64_t call_realloc_size(const struct intercept_fn *fn, const uint64_t *a, bool *overflow)
{
    *overflow = false;
    return fn->op == OP_REALLOCARRAY ? checked_product(a[1], a[2], overflow) : a[1];
}

static bool call_realloc_releases(const struct intercept_fn *fn, uint64_t r, uint64_t size)
{
    /* reallocf frees the block when it fails too */
    return r || size == 0 || fn->op == OP_REALLOCF;
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
        if (intercept_is_realloc_op(c->fn->op) && c->args[0] == s->addr && !c->old_released)
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

/* The book entries of a finished call c, its result r: the one place
 * both engines book a call (breakpoints at its return, the agent when it
 * replays its record).  parts: both of realloc's, or one at a time (the
 * agent books the release at the entry's moment, the new block at the
 * return's). */
static void record_result(struct tracee *t, const struct pending_call *c, uint64_t r,
                          enum call_book parts)
{
    const uint64_t *a = c->args;
    enum alloc_kind kind = family_kind(c->fn->family);
    bool overflow = false;
    uint64_t size;
    heap_set_heap(t->books, allocators_heap_of(&t->allocators, c->alloc_id));
    if ((parts & CALL_BOOK_ALLOC) && !intercept_is_map_op(c->fn->op) &&
        c->fn->op != OP_POSIX_MEMALIGN && c->fn->op != OP_XALLOCX && c->fn->op != OP_EXPAND)
        settle_reused_address(t, r);
    switch (c->fn->op) {
    case OP_MALLOC:
    case OP_NEW:
    case OP_VALLOC:
    case OP_STRDUP: /* a[0]: the copy's size, set at the return */
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
    case OP_REALLOCF:
        size = call_realloc_size(c->fn, a, &overflow);
        if (overflow)
            break;
        if ((parts & CALL_BOOK_RELEASE) && a[0] && !c->old_released &&
            call_realloc_releases(c->fn, r, size)) {
            struct heap_block old;
            if (heap_record_free(t->books, a[0], ALLOC_MALLOC, &old) != HEAP_FREE_UNKNOWN)
                misuse_reallocated(t, &old, c->stack_id);
        }
        if ((parts & CALL_BOOK_ALLOC) && r)
            heap_record_alloc(t->books, r, size, c->stack_id, kind);
        break;
    case OP_XALLOCX:
    case OP_EXPAND: {
        /* resized in place: booked as a realloc to the size reached */
        uint64_t reached = a[1];
        if (c->fn->op == OP_XALLOCX) {
            if (r < a[1])
                break; /* not resized */
            uint64_t most = a[1] + a[2] < a[1] ? UINT64_MAX : a[1] + a[2];
            reached = r < most ? r : most;
        } else if (!r) {
            break;
        }
        struct heap_block old;
        if (a[0] && heap_record_free(t->books, a[0], ALLOC_MALLOC, &old) != HEAP_FREE_UNKNOWN) {
            misuse_reallocated(t, &old, c->stack_id);
            heap_record_alloc(t->books, a[0], reached, c->stack_id, old.kind);
        }
        break;
    }
    case OP_POSIX_MEMALIGN:
        if ((int)r == 0 && c->out) {
            settle_reused_address(t, c->out);
            heap_record_alloc(t->books, c->out, a[2], c->stack_id, kind);
        }
        break;
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
        /* --alloc-fn's free-like functions are booked at their return, so
         * that what they call themselves is theirs (the others release at
         * their entry: releases) */
        if (c->fn->family == FAMILY_NAMED && (parts & CALL_BOOK_RELEASE) && a[0]) {
            struct heap_block blk;
            enum heap_free_result fr = heap_record_free(t->books, a[0], kind, &blk);
            if (fr == HEAP_FREE_OK)
                misuse_reallocated(t, &blk, c->stack_id);
            else
                misuse_bad_release_at(t, c->tid, c->fn, 0, a[0], fr, &blk, c->stack_id);
        }
        break;
    case OP_EXIT:
    case OP_EXCEPTION_ALLOC:
    case OP_UNWIND:
    case OP_CATCH:
    case OP_FIND_EXIDX:
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
        guardian_forget_return(t->pid, guarded_slot(&th->calls[k]));
    th->ncalls = i - 1;
    return c;
}

/* posix_memalign: the pointer it stored at a[0], read at the return (the
 * agent reads it in the target: agent_ring.c). */
static void read_out(struct tracee *t, struct pending_call *c, uint64_t r)
{
    if (c->fn->op == OP_POSIX_MEMALIGN && (int)r == 0 &&
        target_mem_read_word(&t->mem, c->args[0], &c->out, ARCH_PTR_SIZE) < 0)
        c->out = 0;
}

/* The size of the string copy at addr (OP_STRDUP): its length + 1, read
 * while the thread is stopped at the return. */
static uint64_t copy_size(struct tracee *t, uint64_t addr)
{
    char buf[4096];
    uint64_t len = 0;
    for (;;) {
        size_t got = target_mem_read_partial(&t->mem, addr + len, buf, sizeof(buf));
        if (!got)
            return len + 1;
        const char *nul = memchr(buf, 0, got);
        if (nul)
            return len + (uint64_t)(nul - buf) + 1;
        len += got;
    }
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
    if (c.fn->op == OP_STRDUP && arch_retval(regs)) {
        c.args[0] = copy_size(t, arch_retval(regs));
        if (t->opts.sample_bytes && !size_sampled(t, th, c.args[0]))
            c.stack_id = t->unsampled_stack;
    }
    read_out(t, &c, arch_retval(regs));
    record_result(t, &c, arch_retval(regs), CALL_BOOK_ALL);
}

/* The words of [lo, hi) that hold a return trampoline get ret back.  A
 * callee that received the trampoline in lr/x30 saves it in its own frame
 * (push {lr}, stp x29, x30), below the call's entry sp and above the
 * stack pointer of what runs inside it.  The number of copies that could
 * not be written back. */
static unsigned restore_saved_copies(struct tracee *t, struct target_mem *mem, uint64_t lo,
                                     uint64_t hi, uint64_t ret, uint64_t *found, uint64_t *found_word)
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
        if (!w || !scratch_is_trampoline(t, ARCH_CODE_ADDR(w)))
            continue;
        if (target_mem_write_word(mem, lo + off, ret, ARCH_PTR_SIZE) < 0) {
            failed++;
        } else if (found) {
            *found = lo + off; /* the highest wins */
            *found_word = w;
        }
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
        failed += restore_saved_copies(t, mem, lo, c->entry_sp, c->orig_ret, NULL, NULL);
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
        read_out(t, &c, arch_retval(&regs));
        record_result(t, &c, arch_retval(&regs), CALL_BOOK_ALL);
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
    if (regs_changed && arch_set_regs(th->tid, &regs) < 0)
        mt_warn("thread %d: cannot restore a return address in its registers: %s", (int)th->tid,
                strerror(errno));
    call_abandon_returns(t, th, have_regs ? arch_sp(&regs) : 0);
}

void call_abandon_returns(struct tracee *t, struct thread *th, uint64_t sp)
{
    if (sp && call_restore_saved_returns(t, &t->mem, th, sp))
        mt_warn("thread %d: cannot restore the saved copies of a return address", (int)th->tid);
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
        guardian_forget_return(t->pid, guarded_slot(c));
    }
    th->ncalls = 0;
}

void call_record_release(struct tracee *t, struct thread *th, const struct intercept_fn *fn,
                         uint64_t entry, unsigned alloc_id, const struct arch_regs *regs,
                         uint64_t addr, uint64_t ret_addr)
{
    record_release(t, th, fn, entry, alloc_id, regs, addr, ret_addr);
}

void call_record_result(struct tracee *t, const struct pending_call *c, uint64_t r,
                        enum call_book parts)
{
    record_result(t, c, r, parts);
}
