/* The in-process agent (arm, EABI hard-float), injected by the tracer into
 * the traced process: no libc, no relocations, position independent, raw
 * system calls (svc #0, the number in r7).  Its C code is ARM or Thumb-2 as
 * the compiler's default is; agent_entry is ARM code, reached from the
 * stubs by a load into pc (which interworks).
 *
 * Every intercepted function's entry is a b.w (Thumb) or b (ARM) to a
 * stub (made by the tracer in a scratch slot near the function,
 * arch/arm_patch.c) that loads the function's index into ip (r12: free at
 * a function's entry) and loads agent_entry into pc.  agent_entry saves
 * r0-r11, lr (the return address) and the entry sp in a frame and asks
 * agent_enter whether the call is recorded.  If not, it restores them and
 * jumps to the function's moved first instructions (bx: the copy is in the
 * function's own state, bit 0 of its address).  If so, it copies the
 * caller's first four stack words (the arguments after r0-r3: mmap's fd
 * and offset, mmap64's 64-bit offset) below its frame, calls the function
 * with blx, and agent_leave writes the record (arguments, result, the
 * registers at entry and a copy of the stack from sp) into the thread's
 * ring, which the tracer unwinds with its own unwinder (CFI, .ARM.exidx,
 * Thumb prologues) as it unwinds a thread stopped at a breakpoint; once
 * the tracer has put the frames' rows in the shared table (agent_rows.c),
 * the agent unwinds with them itself (agent_core.inc.c) and sends only the
 * pcs. */
#include <stdint.h>

#include "target/agent/agent_abi.h"

#define SYS_write 4
#define SYS_gettid 224
#define SYS_futex 240
#define SYS_sigaltstack 186
#define SYS_ppoll 336
#define SYS_process_vm_readv 376
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1

struct agent_frame {
    uint32_t r0, r1, r2, r3;     /* 0..12: the arguments */
    uint32_t r4, r5, r6, r7;     /* 16..28 */
    uint32_t r8, r9, r10, r11;   /* 32..44 */
    uint32_t lr;                 /* 48: the return address */
    uint32_t sp;                 /* 52: sp at the function's entry */
    uint32_t ret1;               /* 56: r1 after the call */
    uint32_t pad;                /* 60 */
    uint64_t idx;                /* 64 */
    uint64_t orig;               /* 72 */
    uint64_t ret;                /* 80 */
    uint64_t track;              /* 88 */
    uint64_t t_entry;            /* 96 */
    uint64_t slot;               /* 104 */
    uint64_t pc;                 /* 112: the intercepted function */
};
_Static_assert(sizeof(struct agent_frame) == 120, "agent_entry's frame");

/* The frame sits at sp + 16, above the four stack argument words of the
 * call agent_entry makes: 136 bytes in all, sp stays 8-byte aligned. */
__asm__(AGENT_HEADER_ASM
        ".syntax unified\n"
        ".arm\n"
        ".p2align 3\n"
        ".globl agent_entry\n"
        ".type agent_entry, %function\n"
        "agent_entry:\n"
        /* The frame's unwind entry (.ARM.exidx, kept by agent.ld) for the
         * return address of the blx below, the only pc of this function an
         * unwinder meets: an exception thrown by the intercepted function
         * passes this frame to the caller's handler.  In push terms the
         * frame is 68 bytes, then {r4-r11, lr} (the caller's: stored at
         * sp + 32 .. 64 by the stmia and str below), then 32 bytes. */
        "  .fnstart\n"
        "  .pad #68\n"
        "  .save {r4-r11, lr}\n"
        "  .pad #32\n"
        "  sub sp, sp, #136\n"
        "  str ip, [sp, #80]\n"       /* idx */
        "  mov ip, #0\n"
        "  str ip, [sp, #84]\n"
        "  add ip, sp, #16\n"
        "  stmia ip, {r0-r11}\n"
        "  str lr, [sp, #64]\n"
        "  add r4, sp, #136\n"
        "  str r4, [sp, #68]\n"
        "  add r0, sp, #16\n"
        "  bl agent_enter\n"
        "  ldr r4, [sp, #104]\n"       /* track */
        "  cmp r4, #0\n"
        "  beq 1f\n"
        "  cmp r4, #2\n"               /* answered by the agent itself */
        "  beq 2f\n"
        "  ldr r4, [sp, #136]\n"       /* the caller's stack arguments */
        "  ldr r5, [sp, #140]\n"
        "  ldr r6, [sp, #144]\n"
        "  ldr r7, [sp, #148]\n"
        "  stmia sp, {r4-r7}\n"
        "  add ip, sp, #16\n"
        "  ldmia ip, {r0-r3}\n"
        "  ldr ip, [sp, #88]\n"        /* orig */
        "  blx ip\n"
        "  str r0, [sp, #96]\n"        /* ret */
        "  mov r2, #0\n"
        "  str r2, [sp, #100]\n"
        "  str r1, [sp, #72]\n"        /* ret1 */
        "  add r0, sp, #16\n"
        "  bl agent_leave\n"
        "  ldr r0, [sp, #96]\n"
        "  ldr r1, [sp, #72]\n"
        "  add ip, sp, #32\n"
        "  ldmia ip, {r4-r11}\n"
        "  ldr lr, [sp, #64]\n"
        "  add sp, sp, #136\n"
        "  bx lr\n"
        "1:\n"
        "  add ip, sp, #16\n"
        "  ldmia ip, {r0-r4}\n"
        "  ldr lr, [sp, #64]\n"
        "  ldr ip, [sp, #88]\n"        /* orig */
        "  add sp, sp, #136\n"
        "  bx ip\n"
        "2:\n"
        "  add ip, sp, #32\n"
        "  ldmia ip, {r4-r11}\n"
        "  ldr r0, [sp, #96]\n"        /* ret */
        "  ldr lr, [sp, #64]\n"
        "  add sp, sp, #136\n"
        "  bx lr\n"
        "  .fnend\n"
        ".size agent_entry, . - agent_entry\n"
        /* The compact model's routine the unwind entry names: the unwinder
         * runs its own (libgcc's), never this one. */
        ".globl __aeabi_unwind_cpp_pr0\n"
        ".hidden __aeabi_unwind_cpp_pr0\n"
        ".globl __aeabi_unwind_cpp_pr1\n"
        ".hidden __aeabi_unwind_cpp_pr1\n"
        "__aeabi_unwind_cpp_pr0:\n"
        "__aeabi_unwind_cpp_pr1:\n"
        "  bx lr\n");

__attribute__((visibility("hidden"), used)) struct agent_data agent_data;

static inline long sys6(long nr, long a, long b, long c, long d, long e, long f)
{
    register long r7 __asm__("r7") = nr;
    register long r0 __asm__("r0") = a;
    register long r1 __asm__("r1") = b;
    register long r2 __asm__("r2") = c;
    register long r3 __asm__("r3") = d;
    register long r4 __asm__("r4") = e;
    register long r5 __asm__("r5") = f;
    __asm__ volatile("svc #0"
                     : "+r"(r0)
                     : "r"(r7), "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r5)
                     : "memory");
    return r0;
}

static inline long sys3(long nr, long a, long b, long c) { return sys6(nr, a, b, c, 0, 0, 0); }

/* The thread pointer (TPIDRURO): one per thread once libc set it up. */
static inline uint64_t thread_key(void)
{
    uint32_t tp;
    __asm__ volatile("mrc p15, 0, %0, c13, c0, 3" : "=r"(tp));
    return tp ? tp : 1;
}

static inline void copy(void *dst, const void *src, uint64_t n)
{
    uint32_t *d = dst;
    const uint32_t *s = src;
    uint32_t i = 0, m = (uint32_t)n;
    for (; i + 4 <= m; i += 4)
        *(volatile uint32_t *)(void *)((uint8_t *)d + i) = *(const uint32_t *)(const void *)((const uint8_t *)s + i);
    for (; i < m; i++)
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

#define FRAME_SP(f) ((uint64_t)(f)->sp)
#define FRAME_FP(f) ((uint64_t)(f)->r7) /* Thumb-2's frame pointer (ARCH_AGENT_ROW_FP) */
#define FRAME_ARG0(f) ((uint64_t)(f)->r0)
#define AGENT_LOAD_PTR(addr) ((uint64_t) * (const uint32_t *)(uintptr_t)(addr))
#define AGENT_PTR_SIZE 4u
/* Stores may become visible out of order: the stamp before the call's. */
#define STORE_LOAD_FENCE() __asm__ volatile("dmb ish" ::: "memory")
#define AGENT_UNWIND_ROWS 1
#define AGENT_RA_IN_REG 1
/* A return address into Thumb code has bit 0 set: the pc is without it. */
#define RA_TO_PC(ra) ((ra) & ~(uint64_t)1)
/* No AGENT_EH_FRAME: the target's unwinder (EHABI, libgcc_s) finds unwind
 * tables through libc's __gnu_Unwind_Find_exidx, which knows the loaded
 * objects only.  The tracer patches that function too (agent_inject.c):
 * asked for a pc of the agent, the agent answers with its own table
 * (.ARM.exidx in the image, agent.ld), so an exception thrown out of an
 * intercepted function passes agent_entry's frame; every other pc goes on
 * to libc's function.  Answered in any state: a frame of the agent may
 * still be on a stack after the agent was switched off. */
#define AGENT_OWN_EXIDX 1
extern const uint32_t __agent_exidx_start[] __attribute__((visibility("hidden")));
extern const uint32_t __agent_exidx_end[] __attribute__((visibility("hidden")));
extern const uint8_t agent_header[] __attribute__((visibility("hidden")));
extern const uint8_t __text_end[] __attribute__((visibility("hidden")));

static inline void answer_find_exidx(struct agent_frame *f)
{
    uint32_t pc = f->r0, lo = (uint32_t)(uintptr_t)__agent_exidx_start;
    uint32_t entries = ((uint32_t)(uintptr_t)__agent_exidx_end - lo) / 8;
    if (pc < (uint32_t)(uintptr_t)agent_header || pc >= (uint32_t)(uintptr_t)__text_end ||
        !f->r1 || !entries)
        return;
    *(int *)(uintptr_t)f->r1 = (int)entries;
    f->ret = lo;
    f->track = 2;
}

/* The return address at the function's entry: lr. */
static inline uint64_t frame_ra(const struct agent_frame *f) { return f->lr; }

/* The record's register fields in arm's view (agent_abi.h): rbp is r7
 * (the frame pointer the rows follow), rbx and r12-r15 are r4, r5, r6,
 * r11, r8; the fifth and sixth arguments are the first
 * two words on the stack. */
static inline void fill_regs(struct agent_rec *r, const struct agent_frame *f)
{
    const uint32_t *stack = (const uint32_t *)(uintptr_t)f->sp;
    r->args[0] = f->r0;
    r->args[1] = f->r1;
    r->args[2] = f->r2;
    r->args[3] = f->r3;
    r->args[4] = stack[0];
    r->args[5] = stack[1];
    r->rsp = f->sp;
    r->rbp = f->r7;
    r->rbx = f->r4;
    r->r12 = f->r5;
    r->r13 = f->r6;
    r->r14 = f->r11;
    r->r15 = f->r8;
}

/* The stack pointer a signal interrupted, from the signal frame that moved
 * the thread onto its alternate stack [alo, ahi), found in the copy win
 * (n bytes) by its ucontext (uc_flags, uc_link, uc_stack, then struct
 * sigcontext: arm_sp the 21st word, arm_cpsr the 24th, user mode M[4:0] =
 * 0x10).  An RT frame (SA_SIGINFO) is known by uc_stack, which holds the
 * alternate stack itself (ss_sp, ss_flags, ss_size); a non-RT frame saves
 * no uc_stack but marks uc_flags with the kernel's 0x5ac3c35a.  The lowest
 * frame whose sp lies off the alternate stack (a nested signal's frame
 * interrupted the alternate stack itself).  0: none in the copy. */
static uint64_t sig_interrupted_sp(const uint8_t *win, uint64_t n, uint64_t alo, uint64_t ahi)
{
    const uint32_t *w = (const uint32_t *)(const void *)win;
    uint64_t nw = n / 4;
    for (uint64_t i = 0; i + 24 < nw; i++) {
        int rt = w[i + 2] == alo && w[i + 4] == ahi - alo;
        if ((!rt && w[i] != 0x5ac3c35au) || (w[i + 24] & 0x1f) != 0x10)
            continue;
        uint32_t sp = w[i + 21];
        if (sp && !(sp & 3) && (sp < alo || sp >= ahi))
            return sp;
    }
    return 0;
}

#include "target/agent/payload/agent_core.inc.c"
