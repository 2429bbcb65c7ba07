/* x86_64: System V calling convention, int3 breakpoints, DWARF numbering of
 * the psABI (rax=0 rdx=1 rcx=2 rbx=3 rsi=4 rdi=5 rbp=6 rsp=7 r8..r15=8..15,
 * return address=16). */
#if defined(__x86_64__)

#include "arch/arch.h"
#include "arch/agent_cpu.h"

#include <string.h>
#include <unistd.h>
#include <stdio.h>
#include <fcntl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "arch/x86_insn.h"

const uint8_t arch_breakpoint_insn[ARCH_BREAKPOINT_LEN] = {0xcc};
/* syscall; int3 */
const uint8_t arch_syscall_insn[] = {0x0f, 0x05, 0xcc};
const size_t arch_syscall_insn_len = sizeof(arch_syscall_insn);

/* the agent is built and passes every oracle test here */
bool arch_agent_default(void) { return true; }

void agent_cpu_entry_regs(struct arch_regs *regs, uint64_t pc, uint64_t sp, uint64_t fp, uint64_t ra,
                          const uint64_t callee[5], const uint64_t args[6])
{
    (void)ra; /* on the stack */
    regs->user.rip = pc;
    regs->user.rsp = sp;
    regs->user.rbp = fp;
    regs->user.rbx = callee[0];
    regs->user.r12 = callee[1];
    regs->user.r13 = callee[2];
    regs->user.r14 = callee[3];
    regs->user.r15 = callee[4];
    regs->user.rdi = args[0];
    regs->user.rsi = args[1];
    regs->user.rdx = args[2];
    regs->user.rcx = args[3];
    regs->user.r8 = args[4];
    regs->user.r9 = args[5];
}

/* The agent finds its thread's slot by the thread pointer: read with
 * rdfsbase where the kernel allows it (AT_HWCAP2 bit 1), else as the TCB's
 * self pointer at %fs:0 (the payload's thread_key). */
bool agent_cpu_ready(int pid, uint32_t *cpu_flags, char *why, size_t whylen)
{
    (void)why, (void)whylen;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    uint64_t hwcap2 = 0;
    if (fd >= 0) {
        uint64_t av[2];
        while (read(fd, av, sizeof(av)) == (ssize_t)sizeof(av) && av[0] != 0)
            if (av[0] == 26 /* AT_HWCAP2 */)
                hwcap2 = av[1];
        close(fd);
    }
    *cpu_flags = (hwcap2 & 2) ? AGENT_CPU_RDFSBASE : 0;
    return true;
}

/* The fs base, which the agent reads with rdfsbase. */
uint64_t agent_cpu_thread_key(int tid, int (*read_word)(void *ctx, uint64_t addr, uint32_t *out), void *ctx)
{
    (void)read_word, (void)ctx;
    struct arch_regs regs;
    if (arch_get_regs(tid, &regs) < 0)
        return 0;
    return regs.user.fs_base ? regs.user.fs_base : 1;
}

int arch_get_regs(pid_t tid, struct arch_regs *regs)
{
    return (int)ptrace(PTRACE_GETREGS, tid, NULL, &regs->user);
}

int arch_set_regs(pid_t tid, const struct arch_regs *regs)
{
    return (int)ptrace(PTRACE_SETREGS, tid, NULL, &regs->user);
}

uint64_t arch_pc(const struct arch_regs *regs) { return regs->user.rip; }
void arch_set_pc(struct arch_regs *regs, uint64_t pc) { regs->user.rip = pc; }
uint64_t arch_sp(const struct arch_regs *regs) { return regs->user.rsp; }

void arch_clear_dead_at_entry(struct arch_regs *regs, unsigned nargs)
{
    /* System V: rdi, rsi, rdx, rcx, r8, r9 carry arguments; those and rax,
     * r10, r11 are the caller's to save. */
    unsigned long long *args[6] = {&regs->user.rdi, &regs->user.rsi, &regs->user.rdx,
                                   &regs->user.rcx, &regs->user.r8, &regs->user.r9};
    for (unsigned i = nargs; i < 6; i++)
        *args[i] = 0;
    regs->user.rax = 0;
    regs->user.r10 = 0;
    regs->user.r11 = 0;
}

uint64_t arch_arg(const struct arch_regs *regs, int n)
{
    switch (n) {
    case 0: return regs->user.rdi;
    case 1: return regs->user.rsi;
    case 2: return regs->user.rdx;
    case 3: return regs->user.rcx;
    case 4: return regs->user.r8;
    case 5: return regs->user.r9;
    default: return 0;
    }
}

uint64_t arch_retval(const struct arch_regs *regs) { return regs->user.rax; }

uint64_t arch_breakpoint_addr_from_pc(uint64_t pc) { return pc - 1; }

/* int3; jmp *0(%rip); .quad ret_addr; int3 (padding).  Absolute: the call
 * site may lie anywhere in the address space. */
void arch_return_stub(uint8_t out[ARCH_RETURN_STUB_LEN], uint64_t stub_addr, uint64_t ret_addr)
{
    (void)stub_addr;
    static const uint8_t head[7] = {0xcc, 0xff, 0x25, 0x00, 0x00, 0x00, 0x00};
    memcpy(out, head, sizeof(head));
    for (int i = 0; i < 8; i++)
        out[7 + i] = (uint8_t)(ret_addr >> (8 * i));
    out[15] = 0xcc;
}

struct arch_return_slot arch_return_slot_at_entry(const struct arch_regs *regs)
{
    struct arch_return_slot slot = {.in_memory = true, .addr = regs->user.rsp};
    return slot;
}

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
    regs->user.rip = ret_addr;
    regs->user.rsp += 8;
}

void arch_regs_to_unwind(const struct arch_regs *regs, struct unwind_regs *out)
{
    const struct user_regs_struct *u = &regs->user;
    out->r[0] = u->rax;
    out->r[1] = u->rdx;
    out->r[2] = u->rcx;
    out->r[3] = u->rbx;
    out->r[4] = u->rsi;
    out->r[5] = u->rdi;
    out->r[6] = u->rbp;
    out->r[7] = u->rsp;
    out->r[8] = u->r8;
    out->r[9] = u->r9;
    out->r[10] = u->r10;
    out->r[11] = u->r11;
    out->r[12] = u->r12;
    out->r[13] = u->r13;
    out->r[14] = u->r14;
    out->r[15] = u->r15;
    out->r[16] = u->rip;
    out->valid = (1ull << ARCH_DWARF_NREGS) - 1;
}

void arch_setup_syscall(struct arch_regs *regs, uint64_t pc, long nr, const uint64_t args[6])
{
    struct user_regs_struct *u = &regs->user;
    u->rip = pc;
    u->rax = (uint64_t)nr;
    u->orig_rax = (uint64_t)-1;
    u->rdi = args[0];
    u->rsi = args[1];
    u->rdx = args[2];
    u->r10 = args[3];
    u->r8 = args[4];
    u->r9 = args[5];
}

struct displace_plan arch_displace(const uint8_t *insn, size_t avail, uint64_t insn_addr,
                                   uint64_t slot_addr)
{
    return x86_displace(insn, avail, insn_addr, slot_addr, true);
}

#endif

/* amd64: rolq $3, $13, $61, $51 of %rdi, then xchgq %rbx,%rbx; the block
 * at %rax, the result in %rdx.  (xchgq %rcx,%rcx, %rdx,%rdx and %rdi,%rdi
 * after the same preamble are valgrind's other special instructions: not
 * requests, left alone.) */
static const uint8_t client_request_code[] = {
    0x48, 0xc1, 0xc7, 0x03, 0x48, 0xc1, 0xc7, 0x0d, 0x48, 0xc1, 0xc7, 0x3d,
    0x48, 0xc1, 0xc7, 0x33, 0x48, 0x87, 0xdb,
};

const struct arch_client_request *arch_client_request(unsigned i)
{
    static const struct arch_client_request cr = {
        client_request_code, sizeof(client_request_code), 16, 3, 8, 1, 0,
    };
    return i == 0 ? &cr : NULL;
}

uint64_t arch_client_request_block(const struct arch_regs *regs) { return regs->user.rax; }
