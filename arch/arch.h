/* The CPU seen by the tracer.  Everything that differs between x86_64, i386,
 * arm and aarch64 is behind this interface; one arch/<cpu>.c implements it.
 * The rest of memtrace never names a register. */
#ifndef MT_ARCH_ARCH_H
#define MT_ARCH_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#if defined(__x86_64__)
#include <sys/user.h>
#define ARCH_NAME "x86_64"
#define ARCH_ELF_MACHINE 62       /* EM_X86_64: the programs it can trace */
#define ARCH_DWARF_NREGS 17       /* rax..r15 (0-15), return address (16) */
#define ARCH_DWARF_SP 7
#define ARCH_DWARF_FP 6
#define ARCH_DWARF_RA 16
#define ARCH_PTR_SIZE 8
#define ARCH_STACK_REDZONE 128
#define ARCH_BREAKPOINT_LEN 1
typedef struct user_regs_struct arch_user_regs;
/* PTRACE_POKEUSER offset of the PC: writing one word costs less than a
 * whole PTRACE_SETREGS (undefined where POKEUSER cannot do it). */
#define ARCH_PC_USER_OFFSET offsetof(struct user_regs_struct, rip)
/* arch_return_stub exists (see below). */
#define ARCH_RETURN_STUB_LEN 16
/* How far from its module the tracer's code pages may go (target/tracer/
 * map_place.h): rel32 jumps and RIP-relative operands reach +-2 GiB, half
 * of it left for the module's own size. */
#define ARCH_PLACE_REACH (1ull << 30)
#elif defined(__i386__)
#include <sys/user.h>
#define ARCH_NAME "i386"
#define ARCH_ELF_MACHINE 3        /* EM_386 */
#define ARCH_DWARF_NREGS 9        /* eax..edi (0-7), eip (8) */
#define ARCH_DWARF_SP 4
#define ARCH_DWARF_FP 5
#define ARCH_DWARF_RA 8
#define ARCH_PTR_SIZE 4
#define ARCH_STACK_REDZONE 0
#define ARCH_BREAKPOINT_LEN 1
#define ARCH_ARGS_ON_STACK 1      /* cdecl: see arch_arg_slot */
typedef struct user_regs_struct arch_user_regs;
#define ARCH_PC_USER_OFFSET offsetof(struct user_regs_struct, eip)
/* A rel32 jump wraps around the 4 GiB space: every address is in reach. */
#define ARCH_PLACE_REACH (4ull << 30)
#elif defined(__aarch64__)
#include <asm/ptrace.h>
#define ARCH_NAME "aarch64"
#define ARCH_DWARF_NREGS 33       /* x0..x30 (0-30), sp (31), pc (32) */
#define ARCH_DWARF_SP 31
#define ARCH_DWARF_FP 29
#define ARCH_DWARF_RA 30
#define ARCH_PTR_SIZE 8
#define ARCH_STACK_REDZONE 0
#define ARCH_BREAKPOINT_LEN 4       /* brk #0 */
/* Scratch pages go within this distance of their module (target/tracer/
 * scratch.c): the agent's entry patch is one B (+-128 MiB). */
#define ARCH_SCRATCH_REACH (64ull << 20)
#define ARCH_PLACE_REACH ARCH_SCRATCH_REACH
/* Pointer authentication (PAC): a return address saved by code built with
 * -mbranch-protection (paciasp) carries a signature in its high bits.  The
 * unwinder strips it with xpaclri, which runs here on the target's own
 * kernel and CPU (the same virtual address size, so the same PAC field)
 * and is a nop on a CPU without PAC, where there is nothing to strip. */
static inline uint64_t arch_strip_pac(uint64_t ra)
{
    register uint64_t lr __asm__("x30") = ra;
    __asm__("hint #7" : "+r"(lr));   /* xpaclri */
    return lr;
}
#define ARCH_RA_TO_PC(ra) arch_strip_pac(ra)
/* Debian's arm64 vDSO has no CFI for its sigreturn trampoline: the
 * unwinder recognises it by its code (arch_sigtramp_frame). */
#define ARCH_HAS_SIGTRAMP 1
#define ARCH_SIGTRAMP_CODE_LEN 8
typedef struct user_pt_regs arch_user_regs;
#elif defined(__arm__)
#include <sys/user.h>   /* not asm/ptrace.h: its PTRACE_* macros break sys/ptrace.h */
#define ARCH_NAME "arm"
#define ARCH_DWARF_NREGS 16       /* r0..r15 */
#define ARCH_DWARF_SP 13
#define ARCH_DWARF_FP 11
#define ARCH_DWARF_RA 14
#define ARCH_PTR_SIZE 4
#define ARCH_STACK_REDZONE 0
#define ARCH_BREAKPOINT_LEN 4       /* the longest trap: ARM udf, or Thumb-2 udf.w */
/* A return address into Thumb code has bit 0 set: the caller's pc is the
 * address without it. */
#define ARCH_RA_TO_PC(ra) ((ra) & ~(uint64_t)1)
/* Code addresses carry the instruction set in bit 0, as interworking
 * branches (bx) and symbol values do: odd is Thumb code at the address
 * minus one.  arch_pc reports the state that way and arch_set_pc sets it. */
#define ARCH_CODE_ADDR(a) ((a) & ~(uint64_t)1)
/* Injected code (the system call gadget) is ARM-state code: word aligned. */
#define ARCH_INJECT_ADDR(pc) ((pc) & ~(uint64_t)3)
#define ARCH_HAS_BREAKPOINT_FOR 1
/* Scratch pages go within this distance of their module (target/tracer/
 * scratch.c): the agent's entry patch is one b.w (+-16 MiB) in Thumb code,
 * one b (+-32 MiB) in ARM code, from anywhere in the module's text. */
#define ARCH_SCRATCH_REACH (8ull << 20)
#define ARCH_PLACE_REACH ARCH_SCRATCH_REACH
/* Where no CFI covers a pc, the unwinder reads the EHABI tables
 * (target/unwind/exidx.h) and Thumb prologues. */
#define ARCH_UNWIND_EXIDX 1
/* The C++ unwinder (EHABI) asks libc's function of this name for the
 * unwind table of a pc; the agent answers it for its own code
 * (target/agent/agent_inject.c, agent_arm.c). */
#define ARCH_UNWIND_FIND_EXIDX "__gnu_Unwind_Find_exidx"
/* The frame pointer the agent's unwind rows follow (target/agent/
 * agent_rows.c): r7, Thumb-2's, not r11 (ARM code's, DWARF's FP here). */
#define ARCH_AGENT_ROW_FP 7
/* Thumb-state breakpoints, for a function whose symbol has bit 0 set: the
 * 16-bit udf the kernel treats as a breakpoint over a 16-bit instruction,
 * and its 32-bit Thumb-2 form over a 32-bit one (so the trap covers the
 * displaced instruction exactly). */
#define ARM_THUMB_BREAKPOINT 0xde01u
#define ARM_THUMB2_BREAKPOINT 0xf7f0a000u
typedef struct user_regs arch_user_regs;   /* uregs[0..15] = r0..pc, [16] cpsr */
#else
#error "memtrace: no arch/ support for this CPU"
#endif

/* The caller's pc from a return address found by the unwinder (arm clears
 * the Thumb bit; elsewhere they are the same). */
#ifndef ARCH_RA_TO_PC
#define ARCH_RA_TO_PC(ra) (ra)
#endif
/* Where the bytes of the code at a code address lie (arm: without the
 * Thumb bit), and where injected code may go near a thread's pc. */
#ifndef ARCH_CODE_ADDR
#define ARCH_CODE_ADDR(a) (a)
#endif
#ifndef ARCH_INJECT_ADDR
#define ARCH_INJECT_ADDR(pc) (pc)
#endif

/* The register file of one stopped thread, as ptrace gives it. */
struct arch_regs {
    arch_user_regs user;
};

/* DWARF-numbered registers, the unwinder's view.  Bit n of valid says r[n]
 * is known. */
struct unwind_regs {
    uint64_t r[ARCH_DWARF_NREGS];
    uint64_t valid;
};

/* Is the in-process agent (target/agent) the default engine on this CPU?
 * true where its agent is built and proven by the oracle tests (x86_64,
 * i386, aarch64 and arm on the boards;
 * the agent still checks each process at run time, agent_supported, and
 * says why it falls back to breakpoints); false: breakpoints, silently. */
bool arch_agent_default(void);

int arch_get_regs(pid_t tid, struct arch_regs *regs);
int arch_set_regs(pid_t tid, const struct arch_regs *regs);

uint64_t arch_pc(const struct arch_regs *regs);
void arch_set_pc(struct arch_regs *regs, uint64_t pc);
uint64_t arch_sp(const struct arch_regs *regs);
/* At a function's entry the caller-saved registers that carry none of its
 * nargs integer arguments hold nothing live (the ABI lets the callee
 * clobber them): sets them to 0, so that the leak scan does not take the
 * caller's stale values for roots. */
void arch_clear_dead_at_entry(struct arch_regs *regs, unsigned nargs);
/* Where integer argument n (0-based) of a function is at its first
 * instruction: a register (value), or a stack word (addr; i386 passes
 * every argument on the stack, and the caller reads the word). */
struct arch_arg_slot {
    bool in_memory;
    uint64_t value;  /* when !in_memory */
    uint64_t addr;   /* when in_memory */
};
#ifdef ARCH_ARGS_ON_STACK
struct arch_arg_slot arch_arg_slot(const struct arch_regs *regs, int n);
#else
/* Integer argument n (0-based) of a function at its first instruction. */
uint64_t arch_arg(const struct arch_regs *regs, int n);
static inline struct arch_arg_slot arch_arg_slot(const struct arch_regs *regs, int n)
{
    struct arch_arg_slot slot = {.in_memory = false, .value = arch_arg(regs, n)};
    return slot;
}
#endif
/* The integer return value at the caller's resumption point. */
uint64_t arch_retval(const struct arch_regs *regs);

/* Valgrind's client requests (valgrind.h, VALGRIND_DO_CLIENT_REQUEST_EXPR):
 * a fixed "special instruction preamble" (rotations that add up to none)
 * and then the request instruction, which valgrind's JIT recognises and
 * a CPU runs as a no-op.  The request's argument block (words: the
 * request code, then five arguments) is at the address in one register;
 * the default result is in the result register already, and stays there.
 * The tracer puts its breakpoint on the request instruction. */
struct arch_client_request {
    const uint8_t *code;    /* the preamble and the request instruction */
    unsigned len;
    unsigned insn_off;      /* where the request instruction starts */
    unsigned insn_len;
    unsigned word;          /* bytes per word of the argument block */
    unsigned align;         /* a sequence starts at a multiple of this */
    unsigned code_bit;      /* ORed into a site's address (arm: 1, Thumb) */
};
/* This CPU's sequence number i (one per instruction set: arm has ARM and
 * Thumb-2), NULL past the last one.  Every sequence of a CPU has the same
 * argument block (word). */
const struct arch_client_request *arch_client_request(unsigned i);
/* The address of the argument block, at the request instruction. */
uint64_t arch_client_request_block(const struct arch_regs *regs);

/* The trap instruction and where the PC is reported after it traps. */
extern const uint8_t arch_breakpoint_insn[ARCH_BREAKPOINT_LEN];
/* The trap for a breakpoint at code address addr, over the original bytes
 * code[0..avail): its bytes in out, and its length (at most
 * ARCH_BREAKPOINT_LEN), written at ARCH_CODE_ADDR(addr).  One trap on
 * most CPUs; arm picks an ARM or a 16-/32-bit Thumb trap. */
#ifdef ARCH_HAS_BREAKPOINT_FOR
unsigned arch_breakpoint_for(uint64_t addr, const uint8_t *code, size_t avail,
                             uint8_t out[ARCH_BREAKPOINT_LEN]);
#else
static inline unsigned arch_breakpoint_for(uint64_t addr, const uint8_t *code, size_t avail,
                                           uint8_t out[ARCH_BREAKPOINT_LEN])
{
    (void)addr;
    (void)code;
    (void)avail;
    for (unsigned i = 0; i < ARCH_BREAKPOINT_LEN; i++)
        out[i] = arch_breakpoint_insn[i];
    return ARCH_BREAKPOINT_LEN;
}
#endif
/* PC of the breakpoint that made a thread stop with this PC. */
uint64_t arch_breakpoint_addr_from_pc(uint64_t pc);

/* Where the return address lives at a function's first instruction: on the
 * stack (x86) or in a register (arm, aarch64). */
struct arch_return_slot {
    bool in_memory;
    uint64_t addr;   /* stack address when in_memory */
};
struct arch_return_slot arch_return_slot_at_entry(const struct arch_regs *regs);
/* Register variant: read and set the return-address register. */
uint64_t arch_return_reg(const struct arch_regs *regs);
void arch_set_return_reg(struct arch_regs *regs, uint64_t value);

/* Makes a thread stopped at a function's first instruction return to
 * ret_addr at once, as if the function were empty (the dynamic linker's
 * _dl_debug_state is). */
void arch_emulate_return(struct arch_regs *regs, uint64_t ret_addr);

/* Registers in DWARF numbering, for the unwinder. */
void arch_regs_to_unwind(const struct arch_regs *regs, struct unwind_regs *out);

#ifdef ARCH_HAS_SIGTRAMP
/* Is code[0..ARCH_SIGTRAMP_CODE_LEN), the instructions at a frame's pc,
 * the kernel's signal return trampoline?  Then off[n] is where, from the
 * frame's sp, the interrupted thread's DWARF register n was saved (the
 * kernel's rt_sigframe), or -1. */
bool arch_sigtramp_frame(const uint8_t *code, int64_t off[ARCH_DWARF_NREGS]);
#endif

/* Displaced execution of the instruction a breakpoint covers, so that the
 * breakpoint stays in place while other threads run.
 *
 * Given the original bytes at insn_addr, arch_displace plans how the stopped
 * thread gets past them:
 *   DISPLACE_EMULATE: set the PC to new_pc (an instruction with no effect but
 *                     the PC, e.g. endbr64 or nop, or a direct jmp);
 *   DISPLACE_OUT_OF_LINE: copy slot_bytes[0..slot_len) to slot_addr and set the
 *                     PC to slot_addr + slot_entry (arm: 1 enters Thumb code);
 *                     the copy ends by jumping back to the instruction after
 *                     the original one;
 *   DISPLACE_UNSUPPORTED: no plan; the function is not intercepted (there
 *                     is no single-step fallback: it would have to stop
 *                     every thread at each call).
 * slot_addr is the scratch slot reserved for this breakpoint in the target. */
enum displace_kind { DISPLACE_UNSUPPORTED, DISPLACE_EMULATE, DISPLACE_OUT_OF_LINE };

#define ARCH_DISPLACE_SLOT_MAX 64
#define ARCH_INSN_MAX 16

struct displace_plan {
    enum displace_kind kind;
    unsigned insn_len;
    uint64_t new_pc;                       /* DISPLACE_EMULATE */
    uint8_t slot_bytes[ARCH_DISPLACE_SLOT_MAX];
    unsigned slot_len;                     /* DISPLACE_OUT_OF_LINE */
    unsigned slot_entry;                   /* DISPLACE_OUT_OF_LINE: pc = slot + this */
};

struct displace_plan arch_displace(const uint8_t *insn, size_t avail, uint64_t insn_addr,
                                   uint64_t slot_addr);

#ifdef ARCH_RETURN_STUB_LEN
/* A return stub for one call site, ARCH_RETURN_STUB_LEN bytes at stub_addr:
 * the trap, then a jump to ret_addr.  A thread returning through it stops,
 * and the tracer resumes it where it stopped, with no register write. */
void arch_return_stub(uint8_t out[ARCH_RETURN_STUB_LEN], uint64_t stub_addr, uint64_t ret_addr);
#endif

/* A trap instruction (the return trampoline): the same as the breakpoint. */
#define ARCH_TRAMPOLINE_LEN ARCH_BREAKPOINT_LEN

/* Code for a one-off system call injected at a stopped thread's PC:
 * arch_syscall_insn is written at the PC, the registers set by
 * arch_setup_syscall, the thread continued until it traps at the end, and
 * arch_retval read. */
extern const uint8_t arch_syscall_insn[];
extern const size_t arch_syscall_insn_len;
void arch_setup_syscall(struct arch_regs *regs, uint64_t pc, long nr, const uint64_t args[6]);

#endif
