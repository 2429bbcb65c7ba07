/* A traced process: its creation, the handling of its stops (stops.h
 * classifies them), and detaching.  Launch and attach: launch.c;
 * breakpoint placement: placement.c. */
#include "target/tracer/engine.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/xalloc.h"
#include "target/tracer/engine_ops.h"
#include "target/dwarf/cfi.h"
#include "target/heap/freed.h"
#include "target/heap/heap.h"
#include "target/heap/stacks.h"
#include "target/tracer/calls.h"
#include "target/tracer/client_requests.h"
#include "target/tracer/exe_class.h"
#include "target/tracer/misuse.h"
#include "target/tracer/modules.h"
#include "target/tracer/placement.h"
#include "target/tracer/return_sites.h"
#include "target/tracer/guardian.h"
#include "target/tracer/thread_signals.h"
#include "target/tracer/family.h"
#include "target/tracer/vfork_kids.h"

static void resume(struct thread *th, int sig)
{
    if (ptrace(PTRACE_CONT, th->tid, NULL, (void *)(long)sig) == 0)
        th->state = THREAD_RUNNING;
}

/* Empty books and stacks; under --sample the pseudo-stack of the blocks
 * not sampled is the table's first. */
static void books_new(struct tracee *t)
{
    t->books = heap_books_new();
    t->stacks = stack_table_new();
    t->unsampled_stack = 0;
    if (t->opts.sample_bytes) {
        const uint64_t pc = SAMPLE_UNSAMPLED_PC;
        t->unsampled_stack = stack_table_intern(t->stacks, &pc, 1);
        heap_set_sample(t->books, t->opts.sample_bytes, t->unsampled_stack);
    }
}

struct tracee *tracee_create(pid_t pid, const struct tracer_options *opts, struct file_locator *loc)
{
    struct tracee *t = xcalloc(1, sizeof(*t));
    t->pid = pid;
    t->opts = *opts;
    t->locator = loc;
    t->mem.mem_fd = -1;
    books_new(t);
    t->modules = xcalloc(1, sizeof(*t->modules));
    module_map_init(t->modules, pid, loc);
    misuse_reset(t);
    return t;
}

/* --- stops ---------------------------------------------------------------- */

/* Whose books a call of t's belongs in: a followed vfork child, until its
 * exec, allocates from its parent's heap (what it mallocs its parent may
 * free: dash does), so its calls are its parent's, as the agent's records
 * of such a child are (vfork_kids.h does the same for an unfollowed one).
 * Its exit() is its own (-a: its scan). */
static struct tracee *books_owner(struct tracee *t, const struct intercept_fn *fn)
{
    if (!t->shares_vm || !t->family || (fn && fn->op == OP_EXIT))
        return t;
    struct tracee *parent = family_owner(t->family, t->ppid);
    return parent && !tracer_finished(parent) ? parent : t;
}

/* A return trampoline or stub at `at`: t's own, or (a vfork child's call
 * booked by its parent) one its parent's books made in the shared memory. */
static bool is_return_catch(struct tracee *t, uint64_t at)
{
    struct tracee *owner = books_owner(t, NULL);
    return scratch_is_trampoline(t, at) || (owner != t && scratch_is_trampoline(owner, at));
}

static void handle_trap(struct tracee *t, struct thread *th)
{
    struct arch_regs was, regs;
    if (arch_get_regs(th->tid, &was) < 0)
        return;
    regs = was;
    uint64_t at = arch_breakpoint_addr_from_pc(arch_pc(&regs));
    if (is_return_catch(t, at)) {
        call_on_return(books_owner(t, NULL), th, &regs);
    } else {
        struct breakpoint *bp = bp_find(t, at);
        if (!bp || !bp->inserted) {
            resume(th, SIGTRAP); /* the program's own trap */
            return;
        }
        arch_set_pc(&regs, at);
        if (bp->fn) {
            call_on_entry(books_owner(t, bp->fn), th, bp, &regs);
        } else if (bp->client_request) {
            client_request_trap(t, th, bp, &regs);
        } else {
            scan_modules(t, th);
            struct arch_return_slot slot;
            struct stack_window w;
            stack_window_init(&w, t, arch_sp(&regs));
            arch_emulate_return(&regs, call_return_address(&w, &regs, &slot));
        }
    }
    /* perf: often the PC alone.  A thread whose registers cannot be set
     * was killed while stopped (ESRCH): resuming it fails the same way. */
    if (regs_write_changes(th->tid, &was, &regs) < 0 && errno != ESRCH)
        mt_warn("thread %d: cannot set its registers: %s", (int)th->tid, strerror(errno));
    resume(th, 0);
}

static void reset_address_space(struct tracee *t)
{
    free(t->bps);
    t->bps = NULL;
    t->bps_cap = t->bps_count = 0;
    free(t->scratch);
    t->scratch = NULL;
    t->scratch_count = t->scratch_cap = 0;
    return_sites_free(t);
    t->rendezvous_addr = 0;
    engine_forget(t); /* agent engine: gone with the old image */
    t->agent_refused = false;
    guardian_forget_all(t->pid); /* reliability: nothing of the old image to restore */
    module_map_destroy(t->modules);
    module_map_init(t->modules, t->pid, t->locator);
}

/* The old image is gone, and with it every other thread, breakpoint and
 * scratch page.  Returns the thread that exec'ed, under the leader's tid. */
static struct thread *forget_old_image(struct tracee *t, struct thread *th)
{
    for (unsigned i = 0; i < t->threads_cap; i++) {
        struct thread *other = t->threads[i];
        if (other && other != th && other->tid != t->pid)
            thread_remove(t, other->tid);
    }
    if (th->tid != t->pid) {
        /* A non-leader thread exec'ed: it now has the leader's tid. */
        thread_remove(t, t->pid);
        pid_t tid = th->tid;
        th = thread_add(t, t->pid, THREAD_STOPPED);
        thread_remove(t, tid);
    }
    th->ncalls = 0;
    t->shares_vm = false;
    target_mem_close(&t->mem);
    target_mem_open(&t->mem, t->pid);
    guardian_watch(t->pid, t->mem.mem_fd); /* reliability: the new image's memory */
    reset_address_space(t);
    return th;
}

/* A followed child names the program it became (the first process keeps
 * the name it was given, as its report always did). */
static void rename_after_exec(struct tracee *t)
{
    char path[64], exe[4096];
    snprintf(path, sizeof(path), "/proc/%d/exe", (int)t->pid);
    ssize_t n = readlink(path, exe, sizeof(exe) - 1);
    if (n <= 0)
        return;
    exe[n] = '\0';
    free(t->program);
    t->program = xstrdup(exe);
}

static void handle_exec(struct tracee *t, struct thread *th)
{
    th = forget_old_image(t, th);
    allocators_reset(&t->allocators); /* the new program's own */
    custom_pools_free(&t->pools);
    /* The books restart for the new program. */
    if (t->exec_seen) {
        heap_books_free(t->books);
        stack_table_free(t->stacks);
        books_new(t);
        t->books_epoch++;
        misuse_reset(t); /* its stack ids were the old table's */
    }
    t->exec_seen = true;
    if (t->ppid)
        rename_after_exec(t);
    /* An exec into a program of another word size (a 64-bit shell script
     * starting a 32-bit program): no breakpoint goes into it; the session
     * detaches and reports what it saw before. */
    char why[256];
    if (exe_class_check(t->pid, why, sizeof(why)) < 0) {
        mt_error("%s; detaching after its exec", why);
        t->cannot_follow = true;
        return;
    }
    scan_modules(t, th);
}

/* The id of the thread or process a clone or fork stop made; 0, said,
 * when the kernel cannot tell it (th was killed meanwhile): the new one is
 * then not ours to know, and nothing else can be done for it. */
static pid_t event_child(const struct thread *th)
{
    unsigned long msg = 0;
    if (ptrace(PTRACE_GETEVENTMSG, th->tid, NULL, &msg) == 0 && msg)
        return (pid_t)msg;
    mt_warn("thread %d: cannot learn the id of the thread or process it made", (int)th->tid);
    return 0;
}

/* A thread at its exit stop: its memory is still there. */
void tracer_exit_stop(struct tracee *t, struct thread *th)
{
    /* agent engine: the books complete before anyone reads them */
    if (t->agent) {
        engine_thread_exit(t, th->tid);
        engine_drain(t, th->tid == t->pid);
    }
    /* The leak scan at exit (target/leak): memory is still there. */
    if (t->opts.exit_stop_hook)
        t->opts.exit_stop_hook(t->opts.exit_stop_ctx, t, th);
    resume(th, 0);
}

static void handle_event(struct tracee *t, struct thread *th, const struct stop *st)
{
    pid_t child;
    switch (st->kind) {
    case STOP_CLONE:
        child = event_child(th);
        if (child && !thread_find(t, child))
            thread_add(t, child, THREAD_NEW);
        resume(th, 0);
        break;
    case STOP_FORK:
    case STOP_VFORK:
        child = event_child(th);
        if (child)
            tracer_new_process(t, th, child, st->kind == STOP_VFORK);
        resume(th, 0);
        break;
    case STOP_EXEC:
        handle_exec(t, th);
        th = thread_find(t, t->pid);
        if (th)
            resume(th, 0);
        break;
    case STOP_GROUP:
        /* Job control: stay stopped, but keep reporting events. */
        th->group_stopped = true;
        if (!th->interrupt_requested && ptrace(PTRACE_LISTEN, th->tid, NULL, NULL) == 0)
            th->state = THREAD_RUNNING;
        break;
    case STOP_INTERRUPT:
        if (th->interrupt_requested) {
            th->interrupt_requested = false; /* the detach waits for this */
        } else {
            th->group_stopped = false;
            resume(th, 0);
        }
        break;
    case STOP_EXIT:
        tracer_exit_stop(t, th);
        break;
    default:
        resume(th, 0);
        break;
    }
}

void tracer_handle_stop(struct tracee *t, const struct stop *st)
{
    pid_t tid = st->tid;
    struct thread *th = thread_find(t, tid);
    if (st->kind == STOP_GONE) {
        if (tid == t->pid) {
            engine_drain(t, true); /* agent engine: every thread is gone */
            if (t->ppid)
                engine_forget(t); /* a followed child's rings: nothing more comes */
            t->exited = true;
            t->exit_status = st->status;
        }
        thread_remove(t, tid);
        return;
    }
    if (!th) {
        pid_t tgid = thread_group_of(tid);
        if (tgid && tgid != t->pid) {
            /* Another process's (a fork child whose stop came before its
             * parent's event): parked for whoever claims it. */
            stop_park(st);
            return;
        }
        th = thread_add(t, tid, THREAD_STOPPED);
    }
    th->state = THREAD_STOPPED;
    switch (st->kind) {
    case STOP_TRAP:
        handle_trap(t, th);
        break;
    case STOP_SIGNAL:
        resume(th, st->sig); /* the program's signal, delivered as it was sent */
        break;
    default:
        handle_event(t, th, st);
        break;
    }
}

bool tracer_finished(const struct tracee *t) { return t->exited && t->threads_count == 0; }

bool tracer_cannot_follow(const struct tracee *t) { return t->cannot_follow; }

/* --- detach ------------------------------------------------------------- */

static void interrupt_thread(struct tracee *t, struct thread *th, void *ctx)
{
    (void)t;
    (void)ctx;
    if (th->state == THREAD_RUNNING || th->state == THREAD_NEW) {
        if (ptrace(PTRACE_INTERRUPT, th->tid, NULL, NULL) == 0)
            th->interrupt_requested = true;
    }
}

/* Registers put back at detach: a failure (the thread was killed under
 * us) leaves nothing to restore, but is said. */
static void set_regs_or_warn(struct thread *th, const struct arch_regs *regs)
{
    if (arch_set_regs(th->tid, regs) < 0)
        mt_warn("thread %d: cannot restore its registers: %s", (int)th->tid, strerror(errno));
}

/* A thread that stopped on one of our traps before the interrupt took
 * effect: finish that stop so that no trap of ours is left pending. */
static void settle_thread(struct tracee *t, struct thread *th, void *ctx)
{
    (void)ctx;
    while (th->interrupt_requested) {
        struct stop st;
        if (stop_next(th->tid, 0, &st) < 0) {
            thread_remove(t, th->tid);
            return;
        }
        if (st.kind == STOP_GONE) {
            tracer_handle_stop(t, &st);
            return;
        }
        th->state = THREAD_STOPPED;
        if (st.kind == STOP_GROUP || st.kind == STOP_INTERRUPT) {
            /* reliability: a trap of ours fired just before the interrupt
             * (or a job-control stop) still waits behind this stop; let it
             * arrive and settle it.  A job-stopped thread stops again by
             * itself once detached. */
            if (thread_signal_pending(th->tid, SIGTRAP) &&
                ptrace(PTRACE_CONT, th->tid, NULL, NULL) == 0)
                continue;
            th->interrupt_requested = false;
            if (st.kind == STOP_GROUP)
                th->group_stopped = true;
            break;
        }
        if (st.kind == STOP_TRAP) {
            struct arch_regs regs;
            if (arch_get_regs(th->tid, &regs) == 0) {
                uint64_t at = arch_breakpoint_addr_from_pc(arch_pc(&regs));
                if (is_return_catch(t, at)) {
                    call_on_return(books_owner(t, NULL), th, &regs);
                    set_regs_or_warn(th, &regs);
                } else if (bp_find(t, at)) {
                    /* Re-run the original instruction once it is back. */
                    arch_set_pc(&regs, at);
                    set_regs_or_warn(th, &regs);
                } else if (!th->resume_signal) {
                    th->resume_signal = SIGTRAP;
                }
            }
            break; /* stopped; the pending interrupt dies with the detach */
        }
        if (st.kind == STOP_SIGNAL && !th->resume_signal)
            th->resume_signal = st.sig;
        pid_t child;
        if (st.kind == STOP_CLONE) {
            if ((child = event_child(th)))
                thread_add(t, child, THREAD_NEW);
        } else if (st.kind == STOP_FORK || st.kind == STOP_VFORK) {
            /* The child holds a copy of our traps: let it go clean, or
             * (-f) join the family, to be detached in turn. */
            if ((child = event_child(th)))
                tracer_new_process(t, th, child, st.kind == STOP_VFORK);
        } else if (st.kind == STOP_EXEC) {
            /* Nothing of ours is left in the new image. */
            forget_old_image(t, th);
        }
        /* Stopped by this event, not yet by the interrupt, which comes
         * only once it runs again and dies with the detach: waiting for
         * it here (the loop again after a clone) would wait forever. */
        th->interrupt_requested = false;
        break;
    }
}

static void restore_returns(struct tracee *t, struct thread *th, void *ctx)
{
    (void)ctx;
    call_restore_returns(t, th);
}

static void remove_bp(struct tracee *t, struct breakpoint *bp, void *ctx)
{
    (void)ctx;
    /* Said: the detach goes on with the other breakpoints. */
    if (bp_remove(t, bp) < 0)
        mt_warn("process %d: cannot remove the breakpoint at %#llx", (int)t->pid,
                (unsigned long long)bp->addr);
}

static void detach_thread(struct tracee *t, struct thread *th, void *ctx)
{
    (void)ctx;
    if ((th->state == THREAD_STOPPED || th->state == THREAD_NEW) &&
        ptrace(PTRACE_DETACH, th->tid, NULL, (void *)(long)th->resume_signal) < 0 &&
        errno != ESRCH)
        mt_warn("thread %d: cannot detach: %s", (int)th->tid, strerror(errno));
    thread_remove(t, th->tid);
}

void tracer_detach(struct tracee *t)
{
    /* An unfollowed vfork child first: until it execs or exits, the
     * vforking thread cannot stop, and our breakpoints are in its way. */
    vfork_kids_finish(t);
    /* Stop everyone first: a breakpoint may only go while no thread can
     * be about to hit it, and a return address only while its thread
     * cannot be returning through it. */
    unsigned before;
    do {
        before = t->threads_count;
        thread_foreach(t, interrupt_thread, NULL);
        thread_foreach(t, settle_thread, NULL);
    } while (t->threads_count > before);
    thread_foreach(t, restore_returns, NULL);
    engine_stop(t); /* agent engine: patches out, agent unmapped */
    bp_foreach(t, remove_bp, NULL);
    thread_foreach(t, detach_thread, NULL);
}

void tracer_free(struct tracee *t)
{
    if (!t)
        return;
    while (t->threads_count) {
        for (unsigned i = 0; i < t->threads_cap; i++)
            if (t->threads[i]) {
                thread_remove(t, t->threads[i]->tid);
                break;
            }
    }
    free(t->threads);
    free(t->vfork_kids);
    free(t->bps);
    free(t->scratch);
    return_sites_free(t);
    engine_free(t);
    module_map_destroy(t->modules);
    free(t->modules);
    heap_books_free(t->books);
    stack_table_free(t->stacks);
    misuse_log_reset(&t->errors);
    freed_history_free(t->freed);
    allocators_reset(&t->allocators);
    custom_pools_free(&t->pools);
    target_mem_close(&t->mem);
    free(t->stack_window);
    free(t->program);
    free(t);
}
