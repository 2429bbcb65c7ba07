/* aarch64: AAPCS64 (arguments x0-x7, result x0, return address in x30),
 * brk #0 breakpoints, DWARF numbering of the psABI (x0-x30 = 0-30, sp = 31;
 * memtrace's own pc slot is 32, the return-address column of CFI is 30). */
#if defined(__aarch64__)

#include "arch/arch.h"
#include "arch/agent_cpu.h"

#include <elf.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "arch/aarch64_insn.h"

#define LE32(w) {(uint8_t)(w), (uint8_t)((w) >> 8), (uint8_t)((w) >> 16), (uint8_t)((w) >> 24)}

const uint8_t arch_breakpoint_insn[ARCH_BREAKPOINT_LEN] = LE32(A64_BRK0);
/* svc #0; brk #0 */
const uint8_t arch_syscall_insn[] = {0x01, 0x00, 0x00, 0xd4, 0x00, 0x00, 0x20, 0xd4};
const size_t arch_syscall_insn_len = sizeof(arch_syscall_insn);

/* aarch64 has no PTRACE_GETREGS: the general registers are the NT_PRSTATUS
 * regset. */
/* no agent for aarch64 yet: breakpoints */
bool arch_agent_default(void) { return true; }

void agent_cpu_entry_regs(struct arch_regs *regs, uint64_t pc, uint64_t sp, uint64_t fp, uint64_t ra,
                          const uint64_t callee[5], const uint64_t args[6])
{
    regs->user.pc = pc;
    regs->user.sp = sp;
    regs->user.regs[29] = fp;
    regs->user.regs[30] = ra;
    for (int i = 0; i < 5; i++)
        regs->user.regs[19 + i] = callee[i];
    for (int i = 0; i < 6; i++)
        regs->user.regs[i] = args[i];
}

/* The agent finds its thread's slot by TPIDR_EL0, which every thread may
 * read. */
bool agent_cpu_ready(int pid, uint32_t *cpu_flags, char *why, size_t whylen)
{
    (void)pid, (void)why, (void)whylen;
    *cpu_flags = 0;
    return true;
}

/* TPIDR_EL0, which the agent reads (NT_ARM_TLS). */
uint64_t agent_cpu_thread_key(int tid, int (*read_word)(void *ctx, uint64_t addr, uint32_t *out), void *ctx)
{
    (void)read_word, (void)ctx;
    uint64_t tp = 0;
    struct iovec iov = {&tp, sizeof(tp)};
    if (ptrace(PTRACE_GETREGSET, tid, (void *)0x401 /* NT_ARM_TLS */, &iov) < 0)
        return 0;
    return tp ? tp : 1;
}

int arch_get_regs(pid_t tid, struct arch_regs *regs)
{
    struct iovec iov = {.iov_base = &regs->user, .iov_len = sizeof(regs->user)};
    return (int)ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov);
}

int arch_set_regs(pid_t tid, const struct arch_regs *regs)
{
    struct iovec iov = {.iov_base = (void *)&regs->user, .iov_len = sizeof(regs->user)};
    return (int)ptrace(PTRACE_SETREGSET, tid, (void *)NT_PRSTATUS, &iov);
}

uint64_t arch_pc(const struct arch_regs *regs) { return regs->user.pc; }
void arch_set_pc(struct arch_regs *regs, uint64_t pc) { regs->user.pc = pc; }
uint64_t arch_sp(const struct arch_regs *regs) { return regs->user.sp; }

void arch_clear_dead_at_entry(struct arch_regs *regs, unsigned nargs)
{
    /* AAPCS64: x0-x7 arguments, x0-x18 the caller's to save (x18, the
     * platform register, is one more scratch register on Linux). */
    for (unsigned i = nargs; i <= 18; i++)
        regs->user.regs[i] = 0;
}

uint64_t arch_arg(const struct arch_regs *regs, int n)
{
    return n >= 0 && n < 8 ? regs->user.regs[n] : 0;
}

uint64_t arch_retval(const struct arch_regs *regs) { return regs->user.regs[0]; }

/* brk does not advance the pc: the stop reports the breakpoint itself. */
uint64_t arch_breakpoint_addr_from_pc(uint64_t pc) { return pc; }

struct arch_return_slot arch_return_slot_at_entry(const struct arch_regs *regs)
{
    (void)regs;
    struct arch_return_slot slot = {.in_memory = false, .addr = 0};
    return slot;
}

uint64_t arch_return_reg(const struct arch_regs *regs) { return regs->user.regs[30]; }
void arch_set_return_reg(struct arch_regs *regs, uint64_t value) { regs->user.regs[30] = value; }

void arch_emulate_return(struct arch_regs *regs, uint64_t ret_addr)
{
    regs->user.pc = ret_addr;   /* nothing was pushed: sp stays */
}

/* The vDSO's __kernel_rt_sigreturn: mov x8, #139 (rt_sigreturn); svc #0.
 * The handler returned to it with sp at the kernel's struct rt_sigframe:
 * siginfo (128 bytes), then the ucontext, whose sigcontext (at 176: after
 * uc_flags, uc_link, uc_stack and the 1024-bit signal mask, 16-aligned)
 * holds fault_address, x0-x30, sp, pc. */
#define RT_SIGFRAME_REGS (128 + 176 + 8)

bool arch_sigtramp_frame(const uint8_t *code, int64_t off[ARCH_DWARF_NREGS])
{
    static const uint8_t tramp[ARCH_SIGTRAMP_CODE_LEN] = {0x68, 0x11, 0x80, 0xd2,
                                                          0x01, 0x00, 0x00, 0xd4};
    if (memcmp(code, tramp, sizeof(tramp)) != 0)
        return false;
    for (int i = 0; i < 31; i++)
        off[i] = RT_SIGFRAME_REGS + 8 * i;
    off[31] = RT_SIGFRAME_REGS + 8 * 31;   /* sp */
    off[32] = RT_SIGFRAME_REGS + 8 * 32;   /* pc */
    return true;
}

void arch_regs_to_unwind(const struct arch_regs *regs, struct unwind_regs *out)
{
    for (int i = 0; i < 31; i++)
        out->r[i] = regs->user.regs[i];
    out->r[31] = regs->user.sp;
    out->r[32] = regs->user.pc;
    out->valid = (1ull << ARCH_DWARF_NREGS) - 1;
}

/* A syscall interrupted by the stop that we inject at has already been
 * rewound by the kernel for its restart (pc back on its svc, x0 restored)
 * before the tracer sees the thread, so nothing like x86's orig_rax needs
 * clearing: the saved registers restart it when they are put back. */
void arch_setup_syscall(struct arch_regs *regs, uint64_t pc, long nr, const uint64_t args[6])
{
    regs->user.pc = pc;
    regs->user.regs[8] = (uint64_t)nr;
    for (int i = 0; i < 6; i++)
        regs->user.regs[i] = args[i];
}

struct displace_plan arch_displace(const uint8_t *insn, size_t avail, uint64_t insn_addr,
                                   uint64_t slot_addr)
{
    if (avail < 4 || (insn_addr & 3)) {
        struct displace_plan none;
        memset(&none, 0, sizeof(none));
        none.kind = DISPLACE_UNSUPPORTED;
        return none;
    }
    uint32_t word = (uint32_t)insn[0] | (uint32_t)insn[1] << 8 | (uint32_t)insn[2] << 16 |
                    (uint32_t)insn[3] << 24;
    return a64_displace(word, insn_addr, slot_addr);
}

#endif

/* arm64: ror x12 by #3, #13, #51, #61, then orr x10,x10,x10; the block
 * at x4, the result in x3 (little-endian instruction words). */
static const uint8_t client_request_code[] = {
    0x8c, 0x0d, 0xcc, 0x93, 0x8c, 0x35, 0xcc, 0x93, 0x8c, 0xcd, 0xcc, 0x93,
    0x8c, 0xf5, 0xcc, 0x93, 0x4a, 0x01, 0x0a, 0xaa,
};

const struct arch_client_request *arch_client_request(unsigned i)
{
    static const struct arch_client_request cr = {
        client_request_code, sizeof(client_request_code), 16, 4, 8, 4, 0,
    };
    return i == 0 ? &cr : NULL;
}

uint64_t arch_client_request_block(const struct arch_regs *regs) { return regs->user.regs[4]; }
