/* One-off system calls run by a stopped thread of the target (mmap of the
 * scratch and stub pages).
 *
 * The first page is mapped by injecting mmap at the PC of a stopped thread
 * while every other thread is stopped too (at attach, or at the first
 * dynamic-linker stop of a program we started), because the injected code
 * briefly replaces the instructions there.  Every page then carries a
 * "syscall; trap" gadget, so later injections run there and never touch
 * code that other threads may be executing. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>

#include "shared/log.h"
#include "target/tracer/tracee.h"

/* Waits for th to stop after an injected step, keeping any signal that
 * arrives meanwhile for later delivery.  Returns 0 at the trap. */
static int wait_for_trap(struct thread *th)
{
    for (;;) {
        struct stop st;
        int rc = stop_next(th->tid, 0, &st);
        if (rc < 0)
            return rc;
        if (st.kind == STOP_GONE)
            return -ESRCH;
        if (st.kind == STOP_TRAP)
            return 0;
        /* A fault of the injected code itself: continuing would run the
         * faulting instruction again forever.  The caller puts the thread's
         * registers back, so the fault is dropped with the injection. */
        if (st.kind == STOP_SIGNAL &&
            (st.sig == SIGSEGV || st.sig == SIGBUS || st.sig == SIGILL || st.sig == SIGFPE)) {
            mt_warn("thread %d: injected code faulted (signal %d)", (int)th->tid, st.sig);
            return -EFAULT;
        }
        if (st.kind == STOP_SIGNAL && st.sig != SIGSTOP && !th->resume_signal)
            th->resume_signal = st.sig;
        if (ptrace(PTRACE_CONT, th->tid, NULL, NULL) < 0)
            return -errno;
    }
}

/* Puts back the registers a thread had before an injection; says so when
 * it cannot (the thread then runs on with the injection's registers). */
static int restore_regs(struct thread *th, const struct arch_regs *saved)
{
    if (arch_set_regs(th->tid, saved) == 0)
        return 0;
    mt_warn("thread %d: cannot restore its registers after a system call: %s", (int)th->tid,
            strerror(errno));
    return -1;
}

/* A thread stopped inside a system call of its own (the exec event stops
 * inside execve) gets that call's return value written over the register
 * of the call number when it resumes: an injected call would run as
 * another call.  So it first leaves its call onto a trap at its PC, marked
 * as not in a call (no restart either: the caller restores the registers
 * it had, restart and all). */
static int leave_syscall(struct tracee *t, struct thread *th, const struct arch_regs *saved)
{
    uint8_t orig[ARCH_BREAKPOINT_LEN];
    uint64_t pc = ARCH_INJECT_ADDR(arch_pc(saved));
    if (target_mem_read(&t->mem, pc, orig, sizeof(orig)) < 0 ||
        target_mem_write(&t->mem, pc, arch_breakpoint_insn, ARCH_BREAKPOINT_LEN) < 0)
        return -EFAULT;
    struct arch_regs regs = *saved;
    const uint64_t none[6] = {0, 0, 0, 0, 0, 0};
    arch_setup_syscall(&regs, pc, 0, none);
    arch_set_pc(&regs, pc); /* the trap itself: i386's gadget would start past a nop */
    int rc = 0;
    if (arch_set_regs(th->tid, &regs) < 0 || ptrace(PTRACE_CONT, th->tid, NULL, NULL) < 0)
        rc = -errno;
    if (rc == 0)
        rc = wait_for_trap(th);
    if (target_mem_write(&t->mem, pc, orig, sizeof(orig)) < 0 && rc != -ESRCH) {
        mt_warn("thread %d: cannot restore the code at %#llx after a system call", (int)th->tid,
                (unsigned long long)pc);
        rc = rc ? rc : -EFAULT;
    }
    return rc;
}

int inject_syscall(struct tracee *t, struct thread *th, long nr, const uint64_t args[6], uint64_t *ret)
{
    struct arch_regs saved, regs;
    if (arch_get_regs(th->tid, &saved) < 0)
        return -errno;
    /* Before the first page, the call runs at the thread's PC, where it may
     * have stopped inside a call of its own (the exec event). */
    if (!t->scratch_count) {
        int rc = leave_syscall(t, th, &saved);
        if (rc < 0) {
            if (rc != -ESRCH)
                restore_regs(th, &saved);
            return rc;
        }
    }
    uint8_t orig[16];
    uint64_t code;
    bool patched = false;
    if (t->scratch_count) {
        code = t->scratch[0].addr + SCRATCH_SYSCALL_OFF;
    } else {
        code = ARCH_INJECT_ADDR(arch_pc(&saved));
        if (target_mem_read(&t->mem, code, orig, arch_syscall_insn_len) < 0 ||
            target_mem_write(&t->mem, code, arch_syscall_insn, arch_syscall_insn_len) < 0) {
            (void)restore_regs(th, &saved); /* leave_syscall moved it; said if it fails */
            return -EFAULT;
        }
        patched = true;
    }
    regs = saved;
    arch_setup_syscall(&regs, code, nr, args);
    int rc = 0;
    if (arch_set_regs(th->tid, &regs) < 0 || ptrace(PTRACE_CONT, th->tid, NULL, NULL) < 0)
        rc = -errno;
    if (rc == 0)
        rc = wait_for_trap(th);
    if (rc == 0 && arch_get_regs(th->tid, &regs) == 0)
        *ret = arch_retval(&regs);
    if (patched && target_mem_write(&t->mem, code, orig, arch_syscall_insn_len) < 0 &&
        rc != -ESRCH) {
        mt_warn("thread %d: cannot restore the code at %#llx after a system call", (int)th->tid,
                (unsigned long long)code);
        rc = rc ? rc : -EFAULT;
    }
    /* A thread that is gone (-ESRCH) has no registers to put back. */
    if (rc != -ESRCH && restore_regs(th, &saved) < 0 && rc == 0)
        rc = -EIO;
    return rc;
}
