/* The in-process agent (aarch64), injected by the tracer into the traced
 * process: no libc, no relocations, position independent, raw system calls.
 *
 * Every intercepted function's first instruction is a B to a stub (made by
 * the tracer in a scratch page near the function, arch/aarch64_patch.c)
 * that loads the function's index into x17 and branches to agent_entry
 * through x16 (IP0/IP1: dead at a function's entry).  agent_entry saves
 * the argument registers, x8, x19-x23, x29 and x30 (the return address) in
 * a frame and asks agent_enter whether the call is recorded.  If not, it
 * restores everything and branches to the function's displaced first
 * instruction (the function returns to its caller).  If so, it calls it
 * with BLR, and agent_leave writes the record (arguments, result, the
 * registers at entry and a copy of the stack from sp) into the thread's
 * ring, which the tracer unwinds with its own CFI unwinder as it unwinds a
 * thread stopped at a breakpoint; once the tracer has put the frames'
 * rows in the shared table (agent_rows.c), the agent unwinds with them
 * itself (agent_core.inc.c) and sends only the pcs. */
#include <stdint.h>

#include "target/agent/agent_abi.h"

#define SYS_write 64
#define SYS_ppoll 73
#define SYS_futex 98
#define SYS_gettid 178
#define SYS_sigaltstack 132
#define SYS_process_vm_readv 270
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1

struct agent_frame {
    uint64_t x29, x30;                 /* 0, 8: as at the function's entry */
    uint64_t x0, x1, x2, x3, x4, x5;   /* 16..56 */
    uint64_t x6, x7, x8, x19;          /* 64..88 */
    uint64_t x20, x21, x22, x23;       /* 96..120 */
    uint64_t idx;                      /* 128 */
    uint64_t sp;                       /* 136: sp at the function's entry */
    uint64_t orig;                     /* 144 */
    uint64_t ret;                      /* 152 */
    uint64_t track;                    /* 160 */
    uint64_t ret1;                     /* 168 */
    uint64_t t_entry;                  /* 176 */
    uint64_t slot;                     /* 184 */
    uint64_t pc;                       /* 192: the intercepted function */
    uint64_t pad;                      /* 200 */
};
_Static_assert(sizeof(struct agent_frame) == 208, "agent_entry's frame");

__asm__(AGENT_HEADER_ASM
        ".p2align 4\n"
        ".globl agent_entry\n"
        "agent_entry:\n"
        /* Unwind information for the call below (as on x86_64: agent.ld
         * keeps it, the agent registers it, agent_core.inc.c): CFA = x29 + 208
         * (sp at the function's entry), the caller's x29 and return
         * address (x30 at the entry) at CFA - 208 and CFA - 200; x19-x28
         * are the caller's during the call. */
        "  .cfi_startproc\n"
        "  stp x29, x30, [sp, #-208]!\n"
        "  .cfi_def_cfa_offset 208\n"
        "  .cfi_offset x29, -208\n"
        "  .cfi_offset x30, -200\n"
        "  mov x29, sp\n"
        "  .cfi_def_cfa_register x29\n"
        "  stp x0, x1, [sp, #16]\n"
        "  stp x2, x3, [sp, #32]\n"
        "  stp x4, x5, [sp, #48]\n"
        "  stp x6, x7, [sp, #64]\n"
        "  stp x8, x19, [sp, #80]\n"
        "  stp x20, x21, [sp, #96]\n"
        "  stp x22, x23, [sp, #112]\n"
        "  add x16, sp, #208\n"
        "  stp x17, x16, [sp, #128]\n"
        "  mov x0, sp\n"
        "  bl agent_enter\n"
        "  ldp x0, x1, [sp, #16]\n"
        "  ldp x2, x3, [sp, #32]\n"
        "  ldp x4, x5, [sp, #48]\n"
        "  ldp x6, x7, [sp, #64]\n"
        "  ldr x8, [sp, #80]\n"
        "  ldr x16, [sp, #144]\n"
        "  ldr x17, [sp, #160]\n"
        "  cbz x17, 1f\n"
        "  blr x16\n"
        "  str x0, [sp, #152]\n"
        "  str x1, [sp, #168]\n"
        "  mov x0, sp\n"
        "  bl agent_leave\n"
        "  ldr x0, [sp, #152]\n"
        "  ldr x1, [sp, #168]\n"
        "  .cfi_remember_state\n"
        "  ldp x29, x30, [sp], #208\n"
        "  .cfi_def_cfa sp, 0\n"
        "  .cfi_restore x29\n"
        "  .cfi_restore x30\n"
        "  ret\n"
        "  .cfi_restore_state\n"
        "1:\n"
        "  ldp x29, x30, [sp], #208\n"
        "  .cfi_def_cfa sp, 0\n"
        "  .cfi_restore x29\n"
        "  .cfi_restore x30\n"
        "  br x16\n"
        "  .cfi_endproc\n");

__attribute__((visibility("hidden"), used)) struct agent_data agent_data;

static inline long sys6(long nr, long a, long b, long c, long d, long e, long f)
{
    register long x8 __asm__("x8") = nr;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    register long x5 __asm__("x5") = f;
    __asm__ volatile("svc #0"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                     : "memory");
    return x0;
}

static inline long sys3(long nr, long a, long b, long c) { return sys6(nr, a, b, c, 0, 0, 0); }

/* The thread pointer (TPIDR_EL0): one per thread once libc set it up. */
static inline uint64_t thread_key(void)
{
    uint64_t tp;
    __asm__ volatile("mrs %0, tpidr_el0" : "=r"(tp));
    return tp ? tp : 1;
}

static inline void copy(void *dst, const void *src, uint64_t n)
{
    uint64_t *d = dst;
    const uint64_t *s = src;
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8)
        *(volatile uint64_t *)(void *)((uint8_t *)d + i) = *(const uint64_t *)(const void *)((const uint8_t *)s + i);
    for (; i < n; i++)
        *(volatile uint8_t *)((uint8_t *)d + i) = ((const uint8_t *)s)[i];
}

/* Is fd readable now (ppoll with a zero timeout)? */
static int fd_readable(int fd)
{
    struct {
        int fd;
        short events, revents;
    } p = {fd, 1 /* POLLIN */, 0};
    struct {
        long sec, nsec;
    } ts = {0, 0};
    return sys6(SYS_ppoll, (long)&p, 1, (long)&ts, 0, 8, 0) == 1 && p.revents;
}

#define FRAME_SP(f) ((f)->sp)
#define FRAME_FP(f) ((f)->x29)
#define FRAME_ARG0(f) ((f)->x0)
/* Stores may become visible out of order: the stamp before the call's. */
#define STORE_LOAD_FENCE() __asm__ volatile("dmb ish" ::: "memory")
#define AGENT_UNWIND_ROWS 1
#define AGENT_RA_IN_REG 1
#define RA_TO_PC(ra) strip_pac(ra)
#define AGENT_EH_FRAME 1 /* agent_entry has unwind information */

/* A return address without its pointer authentication code (xpaclri: a
 * no-op on CPUs without PAC), as the tracer's unwinder takes it. */
static inline uint64_t strip_pac(uint64_t ra)
{
    register uint64_t lr __asm__("x30") = ra;
    __asm__("hint #7" : "+r"(lr));
    return lr;
}

/* The return address at the function's entry: x30 (not signed yet: a
 * paciasp in the function runs after the entry). */
static inline uint64_t frame_ra(const struct agent_frame *f) { return f->x30; }

/* The record's register fields in aarch64's view (agent_abi.h). */
static inline void fill_regs(struct agent_rec *r, const struct agent_frame *f)
{
    r->args[0] = f->x0;
    r->args[1] = f->x1;
    r->args[2] = f->x2;
    r->args[3] = f->x3;
    r->args[4] = f->x4;
    r->args[5] = f->x5;
    r->rsp = f->sp;
    r->rbp = f->x29;
    r->rbx = f->x19;
    r->r12 = f->x20;
    r->r13 = f->x21;
    r->r14 = f->x22;
    r->r15 = f->x23;
}

/* The stack pointer a signal interrupted, from the signal frame that moved
 * the thread onto its alternate stack [alo, ahi): found in the copy win
 * (n bytes) by the ucontext's uc_stack, which holds the alternate stack
 * itself (ss_sp, ss_flags, ss_size: words 0-2 here), followed in struct
 * sigcontext by the saved registers (sp the 52nd word after ss_sp, pstate
 * the 54th: EL0t in AArch64 state, M[4:0] = 0, for a user frame).  The
 * lowest frame whose sp lies off the alternate stack (a nested signal's
 * frame interrupted the alternate stack itself).  0: none in the copy. */
static uint64_t sig_interrupted_sp(const uint8_t *win, uint64_t n, uint64_t alo, uint64_t ahi)
{
    const uint64_t *w = (const uint64_t *)(const void *)win;
    uint64_t nw = n / 8;
    for (uint64_t i = 0; i + 54 < nw; i++) {
        if (w[i] != alo || w[i + 2] != ahi - alo || (w[i + 54] & 0x1f) != 0)
            continue;
        uint64_t sp = w[i + 52];
        if (sp && !(sp & 15) && (sp < alo || sp >= ahi))
            return sp;
    }
    return 0;
}

#include "target/agent/payload/agent_core.inc.c"
