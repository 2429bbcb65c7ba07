/* The in-process agent (i386), injected by the tracer into a 32-bit traced
 * process: no libc, no run-time relocations (the -fPIC code reaches its
 * data @GOTOFF, resolved at link time), raw system calls (int $0x80).
 *
 * Every intercepted function's entry is a jmp rel32 to a stub (made by the
 * tracer in a scratch slot, arch/i386_patch.c) that loads the function's
 * index into eax (scratch at a cdecl function's entry) and jumps to
 * agent_entry.  agent_entry saves ecx, edx and the callee-saved registers
 * in a frame and asks agent_enter whether the call is recorded.  If not, it
 * restores them and jumps to the function's displaced first instructions
 * (the function returns to its caller).  If so, it copies the caller's eight
 * argument words (cdecl: on the stack; the most any intercepted function
 * takes is seven, mmap64's 64-bit offset being two) below its frame and calls them, and agent_leave writes the
 * record (arguments, result, registers at entry and a copy of the stack
 * from the entry's esp) into the thread's ring.  The tracer unwinds that
 * copy with its own CFI unwinder, as it unwinds a thread stopped at a
 * breakpoint; once the tracer has put the frames' rows in the shared table
 * (agent_rows.c: CFA from esp or ebp, eip and ebp at CFA offsets), the
 * agent unwinds with them itself (agent_core.inc.c) and sends only the pcs. */
#include <stdint.h>

#include "target/agent/agent_abi.h"

#define SYS_write 4
#define SYS_poll 168
#define SYS_gettid 224
#define SYS_futex 240
#define SYS_sigaltstack 186
#define SYS_process_vm_readv 347
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1

struct agent_frame {
    uint32_t ecx, edx, ebx, esi;   /* 0..12 */
    uint32_t edi, ebp, esp, eax;   /* 16..28: ebp and esp as at the function's entry */
    uint64_t idx;                  /* 32 */
    uint64_t orig;                 /* 40 */
    uint64_t ret;                  /* 48 */
    uint64_t track;                /* 56 */
    uint64_t t_entry;              /* 64 */
    uint64_t slot;                 /* 72 */
    uint64_t pc;                   /* 80: the intercepted function */
    uint32_t edx_ret, pad;         /* 88 */
};
_Static_assert(sizeof(struct agent_frame) == 96, "agent_entry's frame");

/* The frame sits at 32(%esp), above the eight argument words of the calls
 * agent_entry makes: absolute offsets below are 32 + the field's. */
__asm__(AGENT_HEADER_ASM
        ".p2align 4\n"
        ".globl agent_entry\n"
        "agent_entry:\n"
        /* Unwind information for the call below (as on x86_64: agent.ld
         * keeps it, the agent registers it, agent_core.inc.c): CFA = ebp + 8,
         * the caller's return address at CFA - 4, its ebp at CFA - 8; ebx,
         * esi and edi are the caller's during the call. */
        "  .cfi_startproc\n"
        "  push %ebp\n"
        "  .cfi_def_cfa_offset 8\n"
        "  .cfi_offset %ebp, -8\n"
        "  mov %esp, %ebp\n"
        "  .cfi_def_cfa_register %ebp\n"
        "  and $-16, %esp\n"
        "  sub $128, %esp\n"
        "  mov %ecx, 32(%esp)\n"
        "  mov %edx, 36(%esp)\n"
        "  mov %ebx, 40(%esp)\n"
        "  mov %esi, 44(%esp)\n"
        "  mov %edi, 48(%esp)\n"
        "  mov 0(%ebp), %ecx\n"
        "  mov %ecx, 52(%esp)\n"
        "  lea 4(%ebp), %ecx\n"
        "  mov %ecx, 56(%esp)\n"
        "  mov %eax, 64(%esp)\n"
        "  movl $0, 68(%esp)\n"
        "  lea 32(%esp), %ecx\n"
        "  mov %ecx, 0(%esp)\n"
        "  call agent_enter\n"
        "  cmpl $0, 88(%esp)\n"
        "  je 1f\n"
        /* the caller's arguments, for the call below */
        "  mov 8(%ebp), %eax\n"
        "  mov %eax, 0(%esp)\n"
        "  mov 12(%ebp), %eax\n"
        "  mov %eax, 4(%esp)\n"
        "  mov 16(%ebp), %eax\n"
        "  mov %eax, 8(%esp)\n"
        "  mov 20(%ebp), %eax\n"
        "  mov %eax, 12(%esp)\n"
        "  mov 24(%ebp), %eax\n"
        "  mov %eax, 16(%esp)\n"
        "  mov 28(%ebp), %eax\n"
        "  mov %eax, 20(%esp)\n"
        "  mov 32(%ebp), %eax\n"
        "  mov %eax, 24(%esp)\n"
        "  mov 36(%ebp), %eax\n"
        "  mov %eax, 28(%esp)\n"
        "  mov 32(%esp), %ecx\n"
        "  mov 36(%esp), %edx\n"
        "  mov 72(%esp), %eax\n"
        "  call *%eax\n"
        "  mov %eax, 80(%esp)\n"
        "  movl $0, 84(%esp)\n"
        "  mov %edx, 120(%esp)\n"
        "  lea 32(%esp), %ecx\n"
        "  mov %ecx, 0(%esp)\n"
        "  call agent_leave\n"
        "  mov 80(%esp), %eax\n"
        "  mov 120(%esp), %edx\n"
        "  .cfi_remember_state\n"
        "  leave\n"
        "  .cfi_def_cfa %esp, 4\n"
        "  ret\n"
        "  .cfi_restore_state\n"
        "1:\n"
        "  mov 32(%esp), %ecx\n"
        "  mov 36(%esp), %edx\n"
        "  mov 72(%esp), %eax\n"
        "  leave\n"
        "  .cfi_def_cfa %esp, 4\n"
        "  jmp *%eax\n"
        "  .cfi_endproc\n");

__attribute__((visibility("hidden"), used)) struct agent_data agent_data;

/* int $0x80: ebx, ecx, edx, esi, edi, ebp.  ebx and ebp are loaded inside
 * the asm (ebp may hold the frame, ebx the PIC base). */
static inline long sys6(long nr, long a, long b, long c, long d, long e, long f)
{
    const long args[6] = {a, b, c, d, e, f};
    const long *p = args;
    long r = nr;
    __asm__ volatile("push %%ebp\n\t"
                     "push %%ebx\n\t"
                     "mov 0(%%esi), %%ebx\n\t"
                     "mov 4(%%esi), %%ecx\n\t"
                     "mov 8(%%esi), %%edx\n\t"
                     "mov 16(%%esi), %%edi\n\t"
                     "mov 20(%%esi), %%ebp\n\t"
                     "mov 12(%%esi), %%esi\n\t"
                     "int $0x80\n\t"
                     "pop %%ebx\n\t"
                     "pop %%ebp"
                     : "+a"(r), "+S"(p)
                     : "m"(args)
                     : "ecx", "edx", "edi", "memory");
    return r;
}

static inline long sys3(long nr, long a, long b, long c) { return sys6(nr, a, b, c, 0, 0, 0); }

#include "target/agent/payload/agent_x86.h"

/* The thread pointer: the TCB's self pointer at %gs:0 (glibc sets it to
 * the gs base).  Before the C library set up gs (selector 0) a read
 * through it would fault: such a thread is key 1. */
static inline uint64_t thread_key(void)
{
    uint32_t sel, tp;
    __asm__ volatile("mov %%gs, %0" : "=r"(sel));
    if ((sel & 0xffff) == 0)
        return 1;
    __asm__ volatile("mov %%gs:0, %0" : "=r"(tp));
    return tp ? tp : 1;
}

#define FRAME_SP(f) ((uint64_t)(f)->esp)
#define FRAME_FP(f) ((uint64_t)(f)->ebp)
/* cdecl: the first argument is the word above the return address. */
#define FRAME_ARG0(f) ((uint64_t)((const uint32_t *)(uintptr_t)(f)->esp)[1])
#define AGENT_LOAD_PTR(addr) ((uint64_t) * (const uint32_t *)(uintptr_t)(addr))
#define AGENT_PTR_SIZE 4u
/* x86 stores become visible in program order. */
#define STORE_LOAD_FENCE() ((void)0)
#define AGENT_UNWIND_ROWS 1
#define AGENT_RA_IN_REG 0
#define RA_TO_PC(ra) (ra)
#define AGENT_EH_FRAME 1 /* agent_entry has unwind information */

/* The return address at the function's entry: the word at esp. */
static inline uint64_t frame_ra(const struct agent_frame *f)
{
    return *(const uint32_t *)(uintptr_t)f->esp;
}

static inline void fill_regs(struct agent_rec *r, const struct agent_frame *f)
{
    const uint32_t *args = (const uint32_t *)(uintptr_t)f->esp + 1;
    for (int i = 0; i < 6; i++)
        r->args[i] = args[i];
    r->rsp = f->esp;
    r->rbp = f->ebp;
    r->rbx = f->ebx;
    r->r12 = f->esi;
    r->r13 = f->edi;
    r->r14 = 0;
    r->r15 = 0;
}

/* The stack pointer a signal interrupted, from the signal frame that moved
 * the thread onto its alternate stack [alo, ahi): found in the copy win
 * (n bytes) by the saved struct sigcontext (in the old frame and in the
 * rt frame's ucontext alike): esp (its 8th word) equal to esp_at_signal
 * (the 18th), cs and ss user selectors (a 64-bit kernel's 0x23 and 0x2b,
 * a 32-bit one's 0x73 and 0x7b).  The lowest frame whose esp lies off the
 * alternate stack (a nested signal's frame interrupted the alternate stack
 * itself).  0: none in the copy. */
static uint64_t sig_interrupted_sp(const uint8_t *win, uint64_t n, uint64_t alo, uint64_t ahi)
{
    const uint32_t *w = (const uint32_t *)(const void *)win;
    uint64_t nw = n / 4;
    for (uint64_t i = 0; i + 18 < nw; i++) {
        uint32_t cs = w[i + 15] & 0xffff, ss = w[i + 18] & 0xffff, sp = w[i + 7];
        if (sp != w[i + 17] || !((cs == 0x23 && ss == 0x2b) || (cs == 0x73 && ss == 0x7b)))
            continue;
        if (sp && (sp < alo || sp >= ahi))
            return sp;
    }
    return 0;
}

#include "target/agent/payload/agent_core.inc.c"
