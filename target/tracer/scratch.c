/* Scratch pages in the target and one-off system calls to map them.
 *
 * The first page is mapped by injecting mmap at the PC of a stopped thread
 * while every other thread is stopped too (at attach, or at the first
 * dynamic-linker stop of a program we started), because the injected code
 * briefly replaces the instructions there.  Every page then carries a
 * "syscall; trap" gadget, so later injections run there and never touch
 * code that other threads may be executing. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "shared/log.h"
#include "shared/xalloc.h"
#include "target/tracer/return_sites.h"
#include "target/tracer/tracee.h"

#ifdef SYS_mmap2
#define MMAP_SYSCALL SYS_mmap2
#else
#define MMAP_SYSCALL SYS_mmap
#endif

bool scratch_is_trampoline(const struct tracee *t, uint64_t pc)
{
    for (unsigned i = 0; i < t->scratch_count; i++)
        if (pc == t->scratch[i].addr + SCRATCH_TRAMPOLINE_OFF)
            return true;
    return return_stub_at(t, pc, NULL);
}

uint64_t scratch_trampoline(const struct tracee *t, uint64_t near)
{
    for (unsigned i = 0; i < t->scratch_count; i++)
        if (t->scratch[i].near == near)
            return t->scratch[i].addr + SCRATCH_TRAMPOLINE_OFF;
    return t->scratch_count ? t->scratch[0].addr + SCRATCH_TRAMPOLINE_OFF : 0;
}

/* Waits for th to stop after an injected step, keeping any signal that
 * arrives meanwhile for later delivery.  Returns 0 at the trap. */
static int wait_for_trap(struct thread *th)
{
    for (;;) {
        int status;
        int rc = thread_wait(th->tid, &status);
        if (rc < 0)
            return rc;
        if (WIFEXITED(status) || WIFSIGNALED(status))
            return -ESRCH;
        if (!WIFSTOPPED(status))
            continue;
        int sig = WSTOPSIG(status);
        if (sig == SIGTRAP && (status >> 16) == 0)
            return 0;
        /* A fault of the injected code itself: continuing would run the
         * faulting instruction again forever.  The caller puts the thread's
         * registers back, so the fault is dropped with the injection. */
        if ((status >> 16) == 0 &&
            (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE)) {
            mt_warn("thread %d: injected code faulted (signal %d)", (int)th->tid, sig);
            return -EFAULT;
        }
        if ((status >> 16) == 0 && sig != SIGTRAP && sig != SIGSTOP && !th->resume_signal)
            th->resume_signal = sig;
        if (ptrace(PTRACE_CONT, th->tid, NULL, NULL) < 0)
            return -errno;
    }
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
    target_mem_write(&t->mem, pc, orig, sizeof(orig));
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
                arch_set_regs(th->tid, &saved);
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
            arch_set_regs(th->tid, &saved); /* leave_syscall moved it */
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
    if (patched)
        target_mem_write(&t->mem, code, orig, arch_syscall_insn_len);
    if (rc != -ESRCH)
        arch_set_regs(th->tid, &saved);
    return rc;
}

static int scratch_map_page(struct tracee *t, struct thread *th, uint64_t near, struct scratch_page *out)
{
    /* Ask for a page just below the module: RIP-relative operands of the
     * displaced instructions must stay within reach (+-2 GiB). */
    /* (A static executable sits at 4 MiB: 1 MiB below it is still far
     * above mmap_min_addr.) */
    uint64_t hint = near >= (2u << 20) ? (near - (1u << 20)) & ~(uint64_t)(SCRATCH_PAGE_SIZE - 1) : 0;
    uint64_t args[6] = {hint, SCRATCH_PAGE_SIZE, PROT_READ | PROT_EXEC,
                        MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0};
    uint64_t addr = 0;
    int rc = inject_syscall(t, th, MMAP_SYSCALL, args, &addr);
    if (rc < 0)
        return rc;
    /* -errno in the target's word (zero-extended from 32 bits on i386). */
    const uint64_t word_max = ARCH_PTR_SIZE == 8 ? UINT64_MAX : UINT32_MAX;
    if (addr > word_max - 4096)
        return -(int)(word_max - addr + 1);
    uint8_t page[SCRATCH_PAGE_SIZE];
    memset(page, arch_breakpoint_insn[0], sizeof(page));
    if (ARCH_BREAKPOINT_LEN > 1) {
        for (size_t off = 0; off + ARCH_BREAKPOINT_LEN <= sizeof(page); off += ARCH_BREAKPOINT_LEN)
            memcpy(page + off, arch_breakpoint_insn, ARCH_BREAKPOINT_LEN);
    }
    memcpy(page + SCRATCH_SYSCALL_OFF, arch_syscall_insn, arch_syscall_insn_len);
    rc = target_mem_write(&t->mem, addr, page, sizeof(page));
    if (rc < 0)
        return rc;
    out->addr = addr;
    out->size = SCRATCH_PAGE_SIZE;
    out->slots_used = 0;
    out->near = near;
    return 0;
}

int scratch_reserve_slot(struct tracee *t, struct thread *th, uint64_t near, uint64_t *slot)
{
    const unsigned slots = (SCRATCH_PAGE_SIZE - SCRATCH_SLOTS_OFF) / SCRATCH_SLOT_SIZE;
    for (unsigned i = 0; i < t->scratch_count; i++) {
        struct scratch_page *p = &t->scratch[i];
        if (p->near == near && p->slots_used < slots) {
            *slot = p->addr + SCRATCH_SLOTS_OFF + (uint64_t)p->slots_used++ * SCRATCH_SLOT_SIZE;
            return 0;
        }
    }
    struct scratch_page page = {0};
    int rc = scratch_map_page(t, th, near, &page);
    if (rc < 0)
        return rc;
    if (t->scratch_count == t->scratch_cap) {
        t->scratch_cap = t->scratch_cap ? t->scratch_cap * 2 : 4;
        t->scratch = xreallocarray(t->scratch, t->scratch_cap, sizeof(*t->scratch));
    }
    page.slots_used = 1;
    t->scratch[t->scratch_count++] = page;
    *slot = page.addr + SCRATCH_SLOTS_OFF;
    return 0;
}

void scratch_release_slots(struct tracee *t, uint64_t near)
{
    for (unsigned i = 0; i < t->scratch_count; i++)
        if (t->scratch[i].near == near)
            t->scratch[i].slots_used = 0;
}
