/* Starting, attaching, the dispatch of ptrace stops, and detaching. */
#include "target/tracer/engine.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/xalloc.h"
#include "target/dwarf/cfi.h"
#include "target/heap/freed.h"
#include "target/heap/heap.h"
#include "target/heap/stacks.h"
#include "target/tracer/calls.h"
#include "target/tracer/exe_class.h"
#include "target/tracer/misuse.h"
#include "target/tracer/modules.h"
#include "target/tracer/return_sites.h"
#include "target/tracer/guardian.h"
#include "target/tracer/thread_signals.h"

#define PTRACE_OPTIONS                                                                            \
    (PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |      \
     PTRACE_O_TRACEEXIT)

static void resume(struct thread *th, int sig)
{
    if (ptrace(PTRACE_CONT, th->tid, NULL, (void *)(long)sig) == 0)
        th->state = THREAD_RUNNING;
}

struct tracee *tracee_create(pid_t pid, const struct tracer_options *opts, struct file_locator *loc)
{
    struct tracee *t = xcalloc(1, sizeof(*t));
    t->pid = pid;
    t->opts = *opts;
    t->locator = loc;
    t->mem.mem_fd = -1;
    t->books = heap_books_new();
    t->stacks = stack_table_new();
    t->modules = xcalloc(1, sizeof(*t->modules));
    module_map_init(t->modules, pid, loc);
    misuse_reset(t);
    return t;
}

/* --- breakpoint placement ------------------------------------------------ */

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

static void place_intercepts(struct tracee *t, struct thread *th, struct module *m)
{
    /* The dynamic linker too: musl's is its libc, malloc and all (glibc's
     * exports none of these names). */
    if (m->intercepts_placed)
        return;
    unsigned placed = 0;
    for (const struct intercept_fn *fn = intercept_table(); fn->name; fn++) {
        if (name_placed(t, fn->name))
            continue;
        uint64_t addr = module_export_addr(t->modules, m, fn->name);
        if (addr && place_breakpoint(t, th, m, addr, fn) == 0)
            placed++;
    }
    if (placed) {
        m->intercepts_placed = true;
        mt_info("%s: %u functions intercepted", m->path, placed);
    } else if (module_is_static_executable(t->modules, m->start) && !m->dobj_tried) {
        /* Said once: dobj_tried is set by the lookup below. */
        module_debug_object(t->modules, m);
        mt_warn("%s: statically linked and stripped (no symbol table): allocation functions "
                "cannot be found, nothing will be recorded", m->path);
    }
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
    bp_forget_module(t, m->start);
    if (t->rendezvous_addr >= m->start && t->rendezvous_addr < m->end)
        t->rendezvous_addr = 0;
}

/* New modules (at attach, exec, and every dynamic-linker rendezvous):
 * the executable first, so that a program's own malloc wins as the dynamic
 * linker's symbol lookup would have it. */
static void scan_modules(struct tracee *t, struct thread *th)
{
    module_map_refresh(t->modules, module_gone, t);
    place_rendezvous(t);
    for (size_t i = 0; i < t->modules->count; i++)
        if (t->modules->mods[i]->is_main)
            place_intercepts(t, th, t->modules->mods[i]);
    for (size_t i = 0; i < t->modules->count; i++)
        place_intercepts(t, th, t->modules->mods[i]);
}

/* --- stops ---------------------------------------------------------------- */

static void handle_trap(struct tracee *t, struct thread *th)
{
    struct arch_regs was, regs;
    if (arch_get_regs(th->tid, &was) < 0)
        return;
    regs = was;
    uint64_t at = arch_breakpoint_addr_from_pc(arch_pc(&regs));
    if (scratch_is_trampoline(t, at)) {
        call_on_return(t, th, &regs);
    } else {
        struct breakpoint *bp = bp_find(t, at);
        if (!bp || !bp->inserted) {
            resume(th, SIGTRAP); /* the program's own trap */
            return;
        }
        arch_set_pc(&regs, at);
        if (bp->fn) {
            call_on_entry(t, th, bp, &regs);
        } else {
            scan_modules(t, th);
            struct arch_return_slot slot;
            struct stack_window w;
            stack_window_init(&w, t, arch_sp(&regs));
            arch_emulate_return(&regs, call_return_address(&w, &regs, &slot));
        }
    }
    regs_write_changes(th->tid, &was, &regs); /* perf: often the PC alone */
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
    /* The books restart for the new program. */
    if (t->exec_seen) {
        heap_books_free(t->books);
        stack_table_free(t->stacks);
        t->books = heap_books_new();
        t->stacks = stack_table_new();
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

static void handle_event(struct tracee *t, struct thread *th, int event, int sig)
{
    unsigned long msg = 0;
    switch (event) {
    case PTRACE_EVENT_CLONE:
        ptrace(PTRACE_GETEVENTMSG, th->tid, NULL, &msg);
        if (!thread_find(t, (pid_t)msg))
            thread_add(t, (pid_t)msg, THREAD_NEW);
        resume(th, 0);
        break;
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK:
        ptrace(PTRACE_GETEVENTMSG, th->tid, NULL, &msg);
        tracer_new_process(t, th, (pid_t)msg, event == PTRACE_EVENT_VFORK);
        resume(th, 0);
        break;
    case PTRACE_EVENT_EXEC:
        handle_exec(t, th);
        th = thread_find(t, t->pid);
        if (th)
            resume(th, 0);
        break;
    case PTRACE_EVENT_STOP:
        if (is_job_control_stop(sig)) {
            /* Job control: stay stopped, but keep reporting events. */
            th->group_stopped = true;
            if (!th->interrupt_requested && ptrace(PTRACE_LISTEN, th->tid, NULL, NULL) == 0)
                th->state = THREAD_RUNNING;
        } else if (th->interrupt_requested) {
            th->interrupt_requested = false; /* the detach waits for this */
        } else {
            th->group_stopped = false;
            resume(th, 0);
        }
        break;
    case PTRACE_EVENT_EXIT:
        /* The leak scan at exit (target/leak): memory is still there. */
        if (t->exit_stop_hook)
            t->exit_stop_hook(t->exit_stop_ctx, t, th);
        resume(th, 0);
        break;
    default:
        resume(th, 0);
        break;
    }
}

static bool is_other_process(struct tracee *t, pid_t tid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    pid_t tgid = 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "Tgid: %d", &tgid) == 1)
            break;
    fclose(f);
    return tgid && tgid != t->pid;
}

void tracer_handle_status(struct tracee *t, pid_t tid, int status)
{
    struct thread *th = thread_find(t, tid);
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
        if (tid == t->pid) {
            t->exited = true;
            t->exit_status = status;
        }
        thread_remove(t, tid);
        return;
    }
    if (!WIFSTOPPED(status))
        return;
    if (!th) {
        if (is_other_process(t, tid)) {
            /* A fork child whose stop came before its parent's event. */
            return;
        }
        th = thread_add(t, tid, THREAD_STOPPED);
    }
    th->state = THREAD_STOPPED;
    int sig = WSTOPSIG(status);
    int event = (status >> 16) & 0xff;
    if (event) {
        handle_event(t, th, event, sig);
    } else if (sig == SIGTRAP) {
        handle_trap(t, th);
    } else {
        resume(th, sig); /* the program's signal, delivered as it was sent */
    }
}

bool tracer_finished(const struct tracee *t) { return t->exited && t->threads_count == 0; }

bool tracer_cannot_follow(const struct tracee *t) { return t->cannot_follow; }

/* --- launch and attach ------------------------------------------------ */

static void seize_error(pid_t pid, int err, char *buf, size_t len)
{
    if (err == ESRCH)
        snprintf(buf, len, "no such process: %d", (int)pid);
    else if (err == EPERM)
        snprintf(buf, len,
                 "cannot trace process %d: permission denied (run as root or with "
                 "CAP_SYS_PTRACE; check /proc/sys/kernel/yama/ptrace_scope, and that no other "
                 "tracer is attached)",
                 (int)pid);
    else
        snprintf(buf, len, "cannot trace process %d: %s", (int)pid, strerror(err));
}

struct tracee *tracer_launch(char *const argv[], const struct tracer_options *opts,
                             struct file_locator *loc, char *err, size_t errlen)
{
    int go[2], fail[2];
    if (pipe2(go, O_CLOEXEC) < 0 || pipe2(fail, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return NULL;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return NULL;
    }
    if (pid == 0) {
        /* Wait until the parent has seized us, then become the program. */
        char c;
        close(go[1]);
        close(fail[0]);
        while (read(go[0], &c, 1) < 0 && errno == EINTR)
            ;
        execvp(argv[0], argv);
        int e = errno;
        if (write(fail[1], &e, sizeof(e)) < 0)
            _exit(127);
        _exit(127);
    }
    close(go[0]);
    close(fail[1]);
    if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)(long)(PTRACE_OPTIONS | PTRACE_O_EXITKILL)) < 0) {
        seize_error(pid, errno, err, errlen);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return NULL;
    }
    close(go[1]);
    int exec_errno = 0;
    ssize_t n;
    while ((n = read(fail[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR)
        ;
    close(fail[0]);
    if (n == (ssize_t)sizeof(exec_errno)) {
        snprintf(err, errlen, "cannot run %s: %s", argv[0], strerror(exec_errno));
        ptrace(PTRACE_DETACH, pid, NULL, NULL);
        waitpid(pid, NULL, 0);
        return NULL;
    }
    /* The exec is done (its close-on-exec pipe closed) and the program has
     * not run an instruction yet: a program we cannot trace never starts. */
    if (exe_class_check(pid, err, errlen) < 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, __WALL);
        return NULL;
    }
    struct tracee *t = tracee_create(pid, opts, loc);
    t->program = xstrdup(argv[0]);
    thread_add(t, pid, THREAD_RUNNING);
    /* The exec stop comes through the event loop like any other; the
     * kill-on-exit option only guards this window.  After the exec event
     * it is dropped, so that a detach leaves the program running. */
    return t;
}

static int wait_for_stop(struct tracee *t, struct thread *th)
{
    for (;;) {
        int status;
        int rc = thread_wait(th->tid, &status);
        if (rc < 0)
            return rc;
        if (WIFEXITED(status) || WIFSIGNALED(status)) {
            tracer_handle_status(t, th->tid, status);
            return -ESRCH;
        }
        int event = (status >> 16) & 0xff;
        int sig = WSTOPSIG(status);
        if (event == PTRACE_EVENT_STOP) {
            if (is_job_control_stop(sig))
                th->group_stopped = true;
            th->state = THREAD_STOPPED;
            th->interrupt_requested = false;
            return 0;
        }
        if (event == 0 && sig != SIGTRAP && !th->resume_signal)
            th->resume_signal = sig; /* delivered when we let it go */
        ptrace(PTRACE_CONT, th->tid, NULL, NULL);
    }
}

static int seize_all_threads(struct tracee *t, char *err, size_t errlen)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)t->pid);
    bool added = true;
    /* Threads may be created while we attach: scan until no new one. */
    while (added) {
        added = false;
        DIR *d = opendir(path);
        if (!d) {
            seize_error(t->pid, errno == ENOENT ? ESRCH : errno, err, errlen);
            return -1;
        }
        struct dirent *de;
        while ((de = readdir(d))) {
            pid_t tid = (pid_t)atoi(de->d_name);
            if (tid <= 0 || thread_find(t, tid))
                continue;
            if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(long)PTRACE_OPTIONS) < 0) {
                if (errno == ESRCH)
                    continue;
                seize_error(t->pid, errno, err, errlen);
                closedir(d);
                return -1;
            }
            struct thread *th = thread_add(t, tid, THREAD_RUNNING);
            ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
            th->interrupt_requested = true;
            added = true;
        }
        closedir(d);
    }
    return 0;
}

static void wait_interrupted(struct tracee *t, struct thread *th, void *ctx)
{
    (void)ctx;
    if (th->interrupt_requested)
        wait_for_stop(t, th);
}

static void resume_after_attach(struct tracee *t, struct thread *th, void *ctx)
{
    (void)t;
    (void)ctx;
    thread_resume_stopped(th);
}

struct tracee *tracer_attach(pid_t pid, const struct tracer_options *opts, struct file_locator *loc,
                             char *err, size_t errlen)
{
    if (pid <= 0 || kill(pid, 0) < 0) {
        seize_error(pid, pid <= 0 ? ESRCH : errno, err, errlen);
        return NULL;
    }
    if (exe_class_check(pid, err, errlen) < 0)
        return NULL;
    struct tracee *t = tracee_create(pid, opts, loc);
    t->attached_mode = true;
    t->exec_seen = true;
    char path[64], exe[4096];
    snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(path, exe, sizeof(exe) - 1);
    t->program = xstrdup(n > 0 ? (exe[n] = '\0', exe) : "?");
    if (seize_all_threads(t, err, errlen) < 0) {
        tracer_detach(t);
        tracer_free(t);
        return NULL;
    }
    thread_foreach(t, wait_interrupted, NULL);
    struct thread *leader = thread_find(t, pid);
    if (!leader || target_mem_open(&t->mem, pid) < 0) {
        snprintf(err, errlen, "process %d exited while attaching", (int)pid);
        tracer_detach(t);
        tracer_free(t);
        return NULL;
    }
    scan_modules(t, leader);
    thread_foreach(t, resume_after_attach, NULL);
    return t;
}

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

/* A thread that stopped on one of our traps before the interrupt took
 * effect: finish that stop so that no trap of ours is left pending. */
static void settle_thread(struct tracee *t, struct thread *th, void *ctx)
{
    (void)ctx;
    while (th->interrupt_requested) {
        int status;
        if (thread_wait(th->tid, &status) < 0) {
            thread_remove(t, th->tid);
            return;
        }
        if (WIFEXITED(status) || WIFSIGNALED(status)) {
            tracer_handle_status(t, th->tid, status);
            return;
        }
        int event = (status >> 16) & 0xff;
        int sig = WSTOPSIG(status);
        th->state = THREAD_STOPPED;
        if (event == PTRACE_EVENT_STOP) {
            /* reliability: a trap of ours fired just before the interrupt
             * (or a job-control stop) still waits behind this stop; let it
             * arrive and settle it.  A job-stopped thread stops again by
             * itself once detached. */
            if (thread_signal_pending(th->tid, SIGTRAP) &&
                ptrace(PTRACE_CONT, th->tid, NULL, NULL) == 0)
                continue;
            th->interrupt_requested = false;
            if (is_job_control_stop(sig))
                th->group_stopped = true;
            break;
        }
        if (event == 0 && sig == SIGTRAP) {
            struct arch_regs regs;
            if (arch_get_regs(th->tid, &regs) == 0) {
                uint64_t at = arch_breakpoint_addr_from_pc(arch_pc(&regs));
                if (scratch_is_trampoline(t, at)) {
                    call_on_return(t, th, &regs);
                    arch_set_regs(th->tid, &regs);
                } else if (bp_find(t, at)) {
                    /* Re-run the original instruction once it is back. */
                    arch_set_pc(&regs, at);
                    arch_set_regs(th->tid, &regs);
                } else if (!th->resume_signal) {
                    th->resume_signal = SIGTRAP;
                }
            }
            break; /* stopped; the pending interrupt dies with the detach */
        }
        if (event == 0 && !th->resume_signal)
            th->resume_signal = sig;
        unsigned long msg = 0;
        if (event == PTRACE_EVENT_CLONE) {
            ptrace(PTRACE_GETEVENTMSG, th->tid, NULL, &msg);
            thread_add(t, (pid_t)msg, THREAD_NEW);
        } else if (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK) {
            /* The child holds a copy of our traps: let it go clean, or
             * (-f) join the family, to be detached in turn. */
            ptrace(PTRACE_GETEVENTMSG, th->tid, NULL, &msg);
            tracer_new_process(t, th, (pid_t)msg, event == PTRACE_EVENT_VFORK);
        } else if (event == PTRACE_EVENT_EXEC) {
            /* Nothing of ours is left in the new image. */
            forget_old_image(t, th);
        }
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
    bp_remove(t, bp);
}

static void detach_thread(struct tracee *t, struct thread *th, void *ctx)
{
    (void)ctx;
    if (th->state == THREAD_STOPPED || th->state == THREAD_NEW)
        ptrace(PTRACE_DETACH, th->tid, NULL, (void *)(long)th->resume_signal);
    thread_remove(t, th->tid);
}

void tracer_detach(struct tracee *t)
{
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
    free(t->bps);
    free(t->scratch);
    return_sites_free(t);
    module_map_destroy(t->modules);
    free(t->modules);
    heap_books_free(t->books);
    stack_table_free(t->stacks);
    misuse_log_reset(&t->errors);
    freed_history_free(t->freed);
    target_mem_close(&t->mem);
    free(t->stack_window);
    free(t->program);
    free(t);
}
