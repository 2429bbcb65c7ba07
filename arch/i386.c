/* i386: cdecl (every argument on the stack, the return address at [esp] on
 * entry, the result in eax), int3 breakpoints, system calls through
 * int $0x80 with the i386 numbers, and the DWARF numbering of the i386
 * psABI (eax=0 ecx=1 edx=2 ebx=3 esp=4 ebp=5 esi=6 edi=7 eip=8).
 *
 * The register file is the i386 struct user_regs_struct, whose fields are
 * signed longs: every value goes through uint32_t so that an address above
 * 2 GiB (a 32-bit process on a 64-bit kernel owns almost all 4 GiB) is not
 * sign-extended into the tracer's 64-bit addresses. */
#if defined(__i386__)

#include "arch/arch.h"
#include "arch/agent_cpu.h"

#include <string.h>
#include <asm/ldt.h> /* struct user_desc */
#include <sys/ptrace.h>

#include "arch/x86_insn.h"

const uint8_t arch_breakpoint_insn[ARCH_BREAKPOINT_LEN] = {0xcc};
/* nop; int $0x80; int3 -- entered after the nop (arch_setup_syscall). */
const uint8_t arch_syscall_insn[] = {0x90, 0xcd, 0x80, 0xcc};
const size_t arch_syscall_insn_len = sizeof(arch_syscall_insn);

static uint64_t word(long v) { return (uint64_t)(uint32_t)v; }

static long to_reg(uint64_t v) { return (long)(uint32_t)v; }

/* no agent for i386 yet: breakpoints */
bool arch_agent_default(void) { return true; }

void agent_cpu_entry_regs(struct arch_regs *regs, uint64_t pc, uint64_t sp, uint64_t fp, uint64_t ra,
                          const uint64_t callee[5], const uint64_t args[6])
{
    (void)ra, (void)args; /* cdecl: on the copied stack */
    regs->user.eip = (long)pc;
    regs->user.esp = (long)sp;
    regs->user.ebp = (long)fp;
    regs->user.ebx = (long)callee[0];
    regs->user.esi = (long)callee[1];
    regs->user.edi = (long)callee[2];
}

/* The agent finds its thread's slot by the TCB's self pointer at %gs:0,
 * which every thread may read. */
bool agent_cpu_ready(int pid, uint32_t *cpu_flags, char *why, size_t whylen)
{
    (void)pid, (void)why, (void)whylen;
    *cpu_flags = 0;
    return true;
}

/* The word at %gs:0 (the TCB's self pointer), as the agent reads it: the
 * gs base from the thread's TLS descriptor. */
uint64_t agent_cpu_thread_key(int tid, int (*read_word)(void *ctx, uint64_t addr, uint32_t *out), void *ctx)
{
    struct arch_regs regs;
    if (arch_get_regs(tid, &regs) < 0)
        return 0;
    unsigned sel = (unsigned)regs.user.xgs & 0xffff;
    if (sel == 0)
        return 1;
    struct user_desc desc = {0};
    if (ptrace(PTRACE_GET_THREAD_AREA, tid, (void *)(uintptr_t)(sel >> 3), &desc) < 0)
        return 0;
    uint32_t tp = 0;
    if (read_word(ctx, desc.base_addr, &tp) < 0)
        return 0;
    return tp ? tp : 1;
}

int arch_get_regs(pid_t tid, struct arch_regs *regs)
{
    return (int)ptrace(PTRACE_GETREGS, tid, NULL, &regs->user);
}

int arch_set_regs(pid_t tid, const struct arch_regs *regs)
{
    return (int)ptrace(PTRACE_SETREGS, tid, NULL, &regs->user);
}

uint64_t arch_pc(const struct arch_regs *regs) { return word(regs->user.eip); }
void arch_set_pc(struct arch_regs *regs, uint64_t pc) { regs->user.eip = to_reg(pc); }
uint64_t arch_sp(const struct arch_regs *regs) { return word(regs->user.esp); }

void arch_clear_dead_at_entry(struct arch_regs *regs, unsigned nargs)
{
    /* cdecl: arguments on the stack; eax, ecx, edx are the caller's. */
    (void)nargs;
    regs->user.eax = 0;
    regs->user.ecx = 0;
    regs->user.edx = 0;
}

/* glibc's allocator entry points are plain cdecl (no regparm): argument n
 * is the word above the return address. */
struct arch_arg_slot arch_arg_slot(const struct arch_regs *regs, int n)
{
    struct arch_arg_slot slot = {
        .in_memory = true,
        .addr = (word(regs->user.esp) + 4 + 4 * (uint64_t)n) & 0xffffffffu,
    };
    return slot;
}

uint64_t arch_retval(const struct arch_regs *regs) { return word(regs->user.eax); }

uint64_t arch_breakpoint_addr_from_pc(uint64_t pc) { return (pc - 1) & 0xffffffffu; }

struct arch_return_slot arch_return_slot_at_entry(const struct arch_regs *regs)
{
    struct arch_return_slot slot = {.in_memory = true, .addr = word(regs->user.esp)};
    return slot;
}

/* The return address is never in a register on x86. */
uint64_t arch_return_reg(const struct arch_regs *regs)
{
    (void)regs;
    return 0;
}

void arch_set_return_reg(struct arch_regs *regs, uint64_t value)
{
    (void)regs;
    (void)value;
}

void arch_emulate_return(struct arch_regs *regs, uint64_t ret_addr)
{
    regs->user.eip = to_reg(ret_addr);
    regs->user.esp = to_reg(word(regs->user.esp) + 4);
}

void arch_regs_to_unwind(const struct arch_regs *regs, struct unwind_regs *out)
{
    const struct user_regs_struct *u = &regs->user;
    out->r[0] = word(u->eax);
    out->r[1] = word(u->ecx);
    out->r[2] = word(u->edx);
    out->r[3] = word(u->ebx);
    out->r[4] = word(u->esp);
    out->r[5] = word(u->ebp);
    out->r[6] = word(u->esi);
    out->r[7] = word(u->edi);
    out->r[8] = word(u->eip);
    out->valid = (1ull << ARCH_DWARF_NREGS) - 1;
}

/* int $0x80 takes the number in eax and up to six arguments in ebx, ecx,
 * edx, esi, edi, ebp.  orig_eax = -1 keeps the kernel from treating the
 * stop as an interrupted system call to restart.
 *
 * A thread stopped inside a system call made through the vDSO sits at the
 * vDSO's int80 landing pad; a 64-bit kernel returns to that very address
 * with SYSRETL/SYSEXIT, which overwrite ecx (our second argument) on the
 * way out.  Starting one byte in, past a nop, the return is never to the
 * landing pad, so it goes through IRET with every register as set here. */
void arch_setup_syscall(struct arch_regs *regs, uint64_t pc, long nr, const uint64_t args[6])
{
    struct user_regs_struct *u = &regs->user;
    u->eip = to_reg(pc + 1);
    u->eax = nr;
    u->orig_eax = -1;
    u->ebx = to_reg(args[0]);
    u->ecx = to_reg(args[1]);
    u->edx = to_reg(args[2]);
    u->esi = to_reg(args[3]);
    u->edi = to_reg(args[4]);
    u->ebp = to_reg(args[5]);
}

struct displace_plan arch_displace(const uint8_t *insn, size_t avail, uint64_t insn_addr,
                                   uint64_t slot_addr)
{
    return x86_displace(insn, avail, insn_addr, slot_addr, false);
}

#endif

/* x86: roll $3, $13, $29, $19 of %edi, then xchgl %ebx,%ebx; the block
 * (32-bit words) at %eax, the result in %edx. */
static const uint8_t client_request_code[] = {
    0xc1, 0xc7, 0x03, 0xc1, 0xc7, 0x0d, 0xc1, 0xc7, 0x1d, 0xc1, 0xc7, 0x13, 0x87, 0xdb,
};

const struct arch_client_request *arch_client_request(unsigned i)
{
    static const struct arch_client_request cr = {
        client_request_code, sizeof(client_request_code), 12, 2, 4, 1, 0,
    };
    return i == 0 ? &cr : NULL;
}

uint64_t arch_client_request_block(const struct arch_regs *regs) { return word(regs->user.eax); }
