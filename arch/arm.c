/* arm (32-bit, EABI hard-float): AAPCS (arguments r0-r3, result r0, return
 * address in lr), DWARF numbering r0-r15 (sp 13, lr 14, pc 15).
 *
 * ARM and Thumb state: a code address with bit 0 set is Thumb code (a
 * Thumb function's symbol, a return address into Thumb code), and arch_pc /
 * arch_set_pc carry the T bit of CPSR that way.  A Thumb function gets a
 * Thumb trap (16- or 32-bit, as long as the instruction it covers) and its
 * first instruction is displaced as Thumb code (thumb_insn.c).  The return
 * trampoline and the injected system call stay ARM code: a Thumb function
 * returns to it with bx lr or pop {pc}, which interwork, and the trap there
 * puts the caller's state back from bit 0 of the saved return address. */
#if defined(__arm__)

#include "arch/arch.h"
#include "arch/agent_cpu.h"

#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>

#include "arch/arm_insn.h"
#include "arch/thumb_insn.h"

#define LE32(w) {(uint8_t)(w), (uint8_t)((w) >> 8), (uint8_t)((w) >> 16), (uint8_t)((w) >> 24)}

const uint8_t arch_breakpoint_insn[ARCH_BREAKPOINT_LEN] = LE32(ARM_BREAKPOINT);
/* svc #0; udf (breakpoint) */
const uint8_t arch_syscall_insn[] = {0x00, 0x00, 0x00, 0xef, 0xf0, 0x01, 0xf0, 0xe7};
const size_t arch_syscall_insn_len = sizeof(arch_syscall_insn);

#define CPSR_T (1u << 5)
#define CPSR_IT_MASK 0x0600fc00u   /* IT[7:2] at 15:10, IT[1:0] at 26:25 */

/* The agent: proven on the armhf board (board_armhf.sh). */
bool arch_agent_default(void) { return true; }

/* Can this process read the virtual counter (CNTVCT, once the agent's
 * clock; its stamps are a shared counter now, so this requirement could
 * go, untried on a CPU without it) in user mode?  Only CPUs with the generic timer have
 * one (Cortex-A7/A15/A53 and later, not the A9 of an i.MX6), and only
 * where the kernel lets user mode read it.  Tried once, here, on the same
 * CPU and kernel as the target: an undefined instruction raises SIGILL. */
static sigjmp_buf probe_env;
static void probe_sigill(int sig)
{
    (void)sig;
    siglongjmp(probe_env, 1);
}

static int counter_readable(void)
{
    static int known = -1;
    if (known >= 0)
        return known;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = probe_sigill;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGILL, &sa, &old) < 0)
        return known = 0;
    volatile int ok = 0;
    if (sigsetjmp(probe_env, 1) == 0) {
        uint32_t lo, hi;
        __asm__ volatile("isb\n\tmrrc p15, 1, %0, %1, c14" : "=r"(lo), "=r"(hi)::"memory");
        (void)lo;
        (void)hi;
        ok = 1;
    }
    sigaction(SIGILL, &old, NULL);
    return known = ok;
}

bool agent_cpu_ready(int pid, uint32_t *cpu_flags, char *why, size_t whylen)
{
    (void)pid;
    *cpu_flags = 0;
    if (!counter_readable()) {
        snprintf(why, whylen, "this arm CPU has no virtual counter readable in user mode (CNTVCT)");
        return false;
    }
    return true;
}

/* The registers at a function's entry: bit 0 of pc is the Thumb state;
 * fp is r7 (the rows' frame pointer, ARCH_AGENT_ROW_FP), callee[] are r4,
 * r5, r6, r11, r8, ra is lr; r0-r3 the arguments. */
void agent_cpu_entry_regs(struct arch_regs *regs, uint64_t pc, uint64_t sp, uint64_t fp, uint64_t ra,
                          const uint64_t callee[5], const uint64_t args[6])
{
    memset(regs, 0, sizeof(*regs));
    for (int i = 0; i < 4; i++)
        regs->user.uregs[i] = (unsigned long)(uint32_t)args[i];
    static const int callee_reg[5] = {4, 5, 6, 11, 8};
    for (int i = 0; i < 5; i++)
        regs->user.uregs[callee_reg[i]] = (unsigned long)(uint32_t)callee[i];
    regs->user.uregs[7] = (unsigned long)(uint32_t)fp;
    regs->user.uregs[13] = (unsigned long)(uint32_t)sp;
    regs->user.uregs[14] = (unsigned long)(uint32_t)ra;
    regs->user.uregs[15] = (unsigned long)((uint32_t)pc & ~1u);
    regs->user.uregs[16] = (unsigned long)(0x10u /* user mode */ | ((pc & 1) ? CPSR_T : 0));
}

/* The thread pointer (TPIDRURO), which the agent reads with mrc. */
uint64_t agent_cpu_thread_key(int tid, int (*read_word)(void *ctx, uint64_t addr, uint32_t *out), void *ctx)
{
    (void)read_word, (void)ctx;
    unsigned long tp = 0;
    if (ptrace((enum __ptrace_request)22 /* PTRACE_GET_THREAD_AREA */, tid, NULL, &tp) < 0)
        return 0;
    return tp ? (uint32_t)tp : 1;
}

int arch_get_regs(pid_t tid, struct arch_regs *regs)
{
    return (int)ptrace(PTRACE_GETREGS, tid, NULL, &regs->user);
}

int arch_set_regs(pid_t tid, const struct arch_regs *regs)
{
    return (int)ptrace(PTRACE_SETREGS, tid, NULL, (void *)&regs->user);
}

uint64_t arch_pc(const struct arch_regs *regs)
{
    uint32_t thumb = ((uint32_t)regs->user.uregs[16] & CPSR_T) ? 1 : 0;
    return ((uint32_t)regs->user.uregs[15] & ~1u) | thumb;
}

/* Bit 0 picks the state, as bx does.  The IT state belongs to the
 * instruction at the old pc: it is cleared when the pc moves. */
void arch_set_pc(struct arch_regs *regs, uint64_t pc)
{
    uint32_t cpsr = (uint32_t)regs->user.uregs[16];
    if (arch_pc(regs) != (uint32_t)pc)
        cpsr &= ~CPSR_IT_MASK;
    cpsr = (pc & 1) ? cpsr | CPSR_T : cpsr & ~CPSR_T;
    regs->user.uregs[16] = (unsigned long)cpsr;
    regs->user.uregs[15] = (unsigned long)((uint32_t)pc & ~1u);
}
uint64_t arch_sp(const struct arch_regs *regs) { return (uint32_t)regs->user.uregs[13]; }

void arch_clear_dead_at_entry(struct arch_regs *regs, unsigned nargs)
{
    /* AAPCS: r0-r3 arguments, those and r12 the caller's to save. */
    for (unsigned i = nargs; i < 4; i++)
        regs->user.uregs[i] = 0;
    regs->user.uregs[12] = 0;
}

uint64_t arch_arg(const struct arch_regs *regs, int n)
{
    return n >= 0 && n < 4 ? (uint32_t)regs->user.uregs[n] : 0;
}

uint64_t arch_retval(const struct arch_regs *regs) { return (uint32_t)regs->user.uregs[0]; }

/* The kernel reports the undefined-instruction breakpoint at its own
 * address. */
uint64_t arch_breakpoint_addr_from_pc(uint64_t pc) { return pc; }

struct arch_return_slot arch_return_slot_at_entry(const struct arch_regs *regs)
{
    (void)regs;
    struct arch_return_slot slot = {.in_memory = false, .addr = 0};
    return slot;
}

uint64_t arch_return_reg(const struct arch_regs *regs) { return (uint32_t)regs->user.uregs[14]; }
void arch_set_return_reg(struct arch_regs *regs, uint64_t value)
{
    regs->user.uregs[14] = (unsigned long)(uint32_t)value;
}

/* Returning to a Thumb caller (bit 0 of lr) switches to Thumb state, as
 * bx lr would. */
void arch_emulate_return(struct arch_regs *regs, uint64_t ret_addr)
{
    uint32_t cpsr = (uint32_t)regs->user.uregs[16] & ~(CPSR_T | CPSR_IT_MASK);
    if (ret_addr & 1)
        cpsr |= CPSR_T;
    regs->user.uregs[16] = (unsigned long)cpsr;
    regs->user.uregs[15] = (unsigned long)(uint32_t)(ret_addr & ~(uint64_t)1);
}

void arch_regs_to_unwind(const struct arch_regs *regs, struct unwind_regs *out)
{
    for (int i = 0; i < 16; i++)
        out->r[i] = (uint32_t)regs->user.uregs[i];
    out->valid = (1ull << ARCH_DWARF_NREGS) - 1;
}

/* The gadget is ARM code: run it in ARM state whatever state the thread was
 * in (the saved CPSR puts the state back).  A syscall interrupted by the
 * stop has already been rewound for its restart by the kernel. */
void arch_setup_syscall(struct arch_regs *regs, uint64_t pc, long nr, const uint64_t args[6])
{
    regs->user.uregs[15] = (unsigned long)(uint32_t)pc;
    regs->user.uregs[16] = (unsigned long)((uint32_t)regs->user.uregs[16] & ~(CPSR_T | CPSR_IT_MASK));
    regs->user.uregs[7] = nr;
    for (int i = 0; i < 6; i++)
        regs->user.uregs[i] = (unsigned long)(uint32_t)args[i];
}

unsigned arch_breakpoint_for(uint64_t addr, const uint8_t *code, size_t avail,
                             uint8_t out[ARCH_BREAKPOINT_LEN])
{
    if (addr & 1) {
        if (avail < 2)
            return 0;
        if (thumb_insn_len((uint16_t)(code[0] | code[1] << 8)) == 4) {
            if (avail < 4)
                return 0;
            static const uint8_t t32[4] = {(uint8_t)(ARM_THUMB2_BREAKPOINT >> 16),
                                           (uint8_t)(ARM_THUMB2_BREAKPOINT >> 24),
                                           (uint8_t)ARM_THUMB2_BREAKPOINT,
                                           (uint8_t)(ARM_THUMB2_BREAKPOINT >> 8)};
            memcpy(out, t32, 4);
            return 4;
        }
        out[0] = (uint8_t)ARM_THUMB_BREAKPOINT;
        out[1] = (uint8_t)(ARM_THUMB_BREAKPOINT >> 8);
        return 2;
    }
    if (avail < 4 || (addr & 3))
        return 0;
    memcpy(out, arch_breakpoint_insn, 4);
    return 4;
}

struct displace_plan arch_displace(const uint8_t *insn, size_t avail, uint64_t insn_addr,
                                   uint64_t slot_addr)
{
    if (insn_addr & 1)
        return thumb_displace(insn, avail, (uint32_t)insn_addr & ~1u, (uint32_t)slot_addr);
    if (avail < 4 || (insn_addr & 3)) {   /* misaligned */
        struct displace_plan none;
        memset(&none, 0, sizeof(none));
        none.kind = DISPLACE_UNSUPPORTED;
        return none;
    }
    uint32_t word = (uint32_t)insn[0] | (uint32_t)insn[1] << 8 | (uint32_t)insn[2] << 16 |
                    (uint32_t)insn[3] << 24;
    return arm_displace(word, (uint32_t)insn_addr, (uint32_t)slot_addr);
}

#endif

/* valgrind.h's sequence, mov r12, r12, ror #3, #13, #29, #19 then
 * orr r10, r10, r10 (the block at r4, the result in r3), is written as
 * ARM assembly, but a Thumb-2 build (armhf's default) assembles the same
 * text as 32-bit Thumb-2 instructions (ror.w, orr.w), which valgrind's
 * Thumb decoder recognises too.  Both: an ARM site gets an ARM trap, a
 * Thumb site (bit 0 of its address) a 32-bit Thumb trap, and the PC moves
 * 4 bytes on in the same state.  Little-endian words; a Thumb-2
 * instruction is its two halfwords in order. */
static const uint8_t client_request_arm[] = {
    0xec, 0xc1, 0xa0, 0xe1, 0xec, 0xc6, 0xa0, 0xe1, 0xec, 0xce, 0xa0, 0xe1,
    0xec, 0xc9, 0xa0, 0xe1, 0x0a, 0xa0, 0x8a, 0xe1,
};
static const uint8_t client_request_thumb[] = {
    0x4f, 0xea, 0xfc, 0x0c, 0x4f, 0xea, 0x7c, 0x3c, 0x4f, 0xea, 0x7c, 0x7c,
    0x4f, 0xea, 0xfc, 0x4c, 0x4a, 0xea, 0x0a, 0x0a,
};

const struct arch_client_request *arch_client_request(unsigned i)
{
    static const struct arch_client_request cr[] = {
        {client_request_arm, sizeof(client_request_arm), 16, 4, 4, 4, 0},
        {client_request_thumb, sizeof(client_request_thumb), 16, 4, 4, 2, 1},
    };
    return i < sizeof(cr) / sizeof(cr[0]) ? &cr[i] : NULL;
}

uint64_t arch_client_request_block(const struct arch_regs *regs) { return (uint32_t)regs->user.uregs[4]; }
