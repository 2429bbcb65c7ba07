/* arm (32-bit, EABI hard-float): AAPCS (arguments r0-r3, result r0, return
 * address in lr), DWARF numbering r0-r15 (sp 13, lr 14, pc 15).
 *
 * ARM and Thumb state: breakpoints, the injected system call and displaced
 * instructions are ARM-state code.  A Thumb function (bit 0 of its symbol,
 * or the T bit of CPSR) is refused by arch_displace: patching it needs the
 * 16-bit ARM_THUMB_BREAKPOINT and a Thumb decoder (not written), and the
 * engine must pass the state down.  Debian's armhf libc is Thumb-2, so on
 * such a system malloc is not intercepted yet.
 *
 * Unwinding reads .eh_frame and .debug_frame only; ARM EHABI tables
 * (.ARM.exidx/.ARM.extab), which is all an armhf libc carries without its
 * debug file, are not read. */
#if defined(__arm__)

#include "arch/arch.h"

#include <string.h>
#include <sys/ptrace.h>

#include "arch/arm_insn.h"

#define LE32(w) {(uint8_t)(w), (uint8_t)((w) >> 8), (uint8_t)((w) >> 16), (uint8_t)((w) >> 24)}

const uint8_t arch_breakpoint_insn[ARCH_BREAKPOINT_LEN] = LE32(ARM_BREAKPOINT);
/* svc #0; udf (breakpoint) */
const uint8_t arch_syscall_insn[] = {0x00, 0x00, 0x00, 0xef, 0xf0, 0x01, 0xf0, 0xe7};
const size_t arch_syscall_insn_len = sizeof(arch_syscall_insn);

#define CPSR_T (1u << 5)
#define CPSR_IT_MASK 0x0600fc00u   /* IT[7:2] at 15:10, IT[1:0] at 26:25 */

int arch_get_regs(pid_t tid, struct arch_regs *regs)
{
    return (int)ptrace(PTRACE_GETREGS, tid, NULL, &regs->user);
}

int arch_set_regs(pid_t tid, const struct arch_regs *regs)
{
    return (int)ptrace(PTRACE_SETREGS, tid, NULL, (void *)&regs->user);
}

uint64_t arch_pc(const struct arch_regs *regs) { return (uint32_t)regs->user.uregs[15]; }
void arch_set_pc(struct arch_regs *regs, uint64_t pc) { regs->user.uregs[15] = (unsigned long)(uint32_t)pc; }
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

struct displace_plan arch_displace(const uint8_t *insn, size_t avail, uint64_t insn_addr,
                                   uint64_t slot_addr)
{
    if (avail < 4 || (insn_addr & 3)) {   /* Thumb (odd) or misaligned */
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
