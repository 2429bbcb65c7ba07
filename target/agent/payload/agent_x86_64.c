/* The in-process agent (x86_64), injected by the tracer into the traced
 * process: no libc, no relocations, position independent, raw system calls.
 *
 * Every intercepted function's entry jumps to a stub (made by the tracer
 * near the function) that loads the function's index into r11 and jumps to
 * agent_entry.  agent_entry saves the argument and callee-saved registers
 * in a frame and asks agent_enter whether the call is recorded.  If not, it
 * restores everything and jumps to the function's displaced first
 * instructions (a tail jump: the function returns to its caller).  If so,
 * it calls them, and agent_leave writes the record (arguments, result,
 * registers at entry and a copy of the stack) into the thread's ring.
 * The tracer unwinds the copied stack with its own CFI unwinder, exactly as
 * it unwinds a thread stopped at a breakpoint. */
#include <stdint.h>

#include "target/agent/agent_abi.h"

#define SYS_write 1
#define SYS_poll 7
#define SYS_arch_prctl 158
#define ARCH_GET_FS 0x1003
#define SYS_gettid 186
#define SYS_futex 202
#define SYS_sigaltstack 131
#define SYS_process_vm_readv 310
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1

struct agent_frame {
    uint64_t rdi, rsi, rdx, rcx, r8, r9, rax, rbx; /* 0..56 */
    uint64_t rbp, r12, r13, r14, r15, idx, rsp;    /* 64..112 */
    uint64_t orig;                                 /* 120 */
    uint64_t ret;                                  /* 128 */
    uint64_t track;                                /* 136 */
    uint64_t rdx_ret;                              /* 144 */
    uint64_t t_entry;                              /* 152 */
    uint64_t slot;                                 /* 160 */
    uint64_t pc;                                   /* 168: the intercepted function */
};

__asm__(AGENT_HEADER_ASM
        ".globl agent_entry\n"
        "agent_entry:\n"
        /* Unwind information for the call below (agent.ld keeps it in the
         * image; the agent registers it with the target's unwinder): an
         * exception thrown by the function passes this frame, whose return
         * address is the caller's own, on to the caller's handler.  rbx and
         * r12-r15 are the caller's during the call (agent_enter keeps them). */
        "  .cfi_startproc\n"
        "  push %rbp\n"
        "  .cfi_def_cfa_offset 16\n"
        "  .cfi_offset %rbp, -16\n"
        "  mov %rsp, %rbp\n"
        "  .cfi_def_cfa_register %rbp\n"
        "  sub $176, %rsp\n"
        "  mov %rdi, 0(%rsp)\n"
        "  mov %rsi, 8(%rsp)\n"
        "  mov %rdx, 16(%rsp)\n"
        "  mov %rcx, 24(%rsp)\n"
        "  mov %r8, 32(%rsp)\n"
        "  mov %r9, 40(%rsp)\n"
        "  mov %rax, 48(%rsp)\n"
        "  mov %rbx, 56(%rsp)\n"
        "  mov 0(%rbp), %rax\n"
        "  mov %rax, 64(%rsp)\n"
        "  mov %r12, 72(%rsp)\n"
        "  mov %r13, 80(%rsp)\n"
        "  mov %r14, 88(%rsp)\n"
        "  mov %r15, 96(%rsp)\n"
        "  mov %r11, 104(%rsp)\n"
        "  lea 8(%rbp), %rax\n"
        "  mov %rax, 112(%rsp)\n"
        "  mov %rsp, %rdi\n"
        "  call agent_enter\n"
        "  mov 0(%rsp), %rdi\n"
        "  mov 8(%rsp), %rsi\n"
        "  mov 16(%rsp), %rdx\n"
        "  mov 24(%rsp), %rcx\n"
        "  mov 32(%rsp), %r8\n"
        "  mov 40(%rsp), %r9\n"
        "  mov 48(%rsp), %rax\n"
        "  mov 120(%rsp), %r11\n"
        "  cmpq $0, 136(%rsp)\n"
        "  je 1f\n"
        "  call *%r11\n"
        "  mov %rax, 128(%rsp)\n"
        "  mov %rdx, 144(%rsp)\n"
        "  mov %rsp, %rdi\n"
        "  call agent_leave\n"
        "  mov 128(%rsp), %rax\n"
        "  mov 144(%rsp), %rdx\n"
        "  .cfi_remember_state\n"
        "  leave\n"
        "  .cfi_def_cfa %rsp, 8\n"
        "  ret\n"
        "  .cfi_restore_state\n"
        "1:\n"
        "  leave\n"
        "  .cfi_def_cfa %rsp, 8\n"
        "  jmp *%r11\n"
        "  .cfi_endproc\n");

__attribute__((visibility("hidden"), used)) struct agent_data agent_data;

static inline long sys3(long nr, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

static inline long sys6(long nr, long a, long b, long c, long d, long e, long f)
{
    long r;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return r;
}

#include "target/agent/payload/agent_x86.h"

/* The thread pointer, the key of the thread's slot (the tracer computes
 * the same from the fs base, arch/x86_64.c).  rdfsbase where the kernel
 * allows it.  Elsewhere the x86-64 psABI's TLS rule serves: the word at
 * %fs:0 is the TCB's own address, in glibc and musl threads alike.  That
 * read would fault before the C library set up a thread pointer (fs base
 * 0, early in a static program), so until one thread has shown a valid
 * self pointer the base is asked of the kernel (arch_prctl, one system
 * call per call, only in that window). */
static uint32_t fs_self_pointer_seen;

static inline uint64_t thread_key(void)
{
    uint64_t fs;
    if (agent_data.cpu_flags & AGENT_CPU_RDFSBASE) {
        __asm__ volatile("rdfsbase %0" : "=r"(fs));
    } else if (__atomic_load_n(&fs_self_pointer_seen, __ATOMIC_RELAXED)) {
        __asm__ volatile("mov %%fs:0, %0" : "=r"(fs));
    } else {
        fs = 0;
        if (sys3(SYS_arch_prctl, ARCH_GET_FS, (long)&fs, 0) != 0)
            fs = 0;
        if (fs && *(volatile const uint64_t *)fs == fs)
            __atomic_store_n(&fs_self_pointer_seen, 1, __ATOMIC_RELAXED);
    }
    return fs ? fs : 1;
}

#define FRAME_SP(f) ((f)->rsp)
#define FRAME_FP(f) ((f)->rbp)
#define FRAME_ARG0(f) ((f)->rdi)
/* x86 stores become visible in program order. */
#define STORE_LOAD_FENCE() ((void)0)
#define AGENT_UNWIND_ROWS 1
#define AGENT_RA_IN_REG 0
#define RA_TO_PC(ra) (ra)
#define AGENT_EH_FRAME 1 /* agent_entry has unwind information */

/* The return address at the function's entry: the word at rsp. */
static inline uint64_t frame_ra(const struct agent_frame *f) { return *(const uint64_t *)f->rsp; }

static inline void fill_regs(struct agent_rec *r, const struct agent_frame *f)
{
    r->args[0] = f->rdi;
    r->args[1] = f->rsi;
    r->args[2] = f->rdx;
    r->args[3] = f->rcx;
    r->args[4] = f->r8;
    r->args[5] = f->r9;
    r->rsp = f->rsp;
    r->rbp = f->rbp;
    r->rbx = f->rbx;
    r->r12 = f->r12;
    r->r13 = f->r13;
    r->r14 = f->r14;
    r->r15 = f->r15;
}

/* The stack pointer a signal interrupted, from the signal frame that moved
 * the thread onto its alternate stack [alo, ahi): found in the copy win
 * (n bytes) by the ucontext's uc_stack, which holds the alternate stack
 * itself (ss_sp, ss_flags, ss_size), followed by the saved registers
 * (rsp the 16th, cs the low half of the 19th: 0x33 for 64-bit code).  The
 * lowest frame whose rsp lies off the alternate stack (a nested signal's
 * frame interrupted the alternate stack itself).  0: none in the copy. */
static uint64_t sig_interrupted_sp(const uint8_t *win, uint64_t n, uint64_t alo, uint64_t ahi)
{
    const uint64_t *w = (const uint64_t *)(const void *)win;
    uint64_t nw = n / 8;
    for (uint64_t i = 0; i + 22 < nw; i++) {
        if (w[i] != alo || w[i + 2] != ahi - alo || (w[i + 21] & 0xffff) != 0x33)
            continue;
        uint64_t sp = w[i + 18];
        if (sp && (sp < alo || sp >= ahi))
            return sp;
    }
    return 0;
}

#include "target/agent/payload/agent_core.inc.c"
