/* The per-CPU parts of the agent engine's tracer side (target/agent).
 *
 * The entry patch, written by each CPU that has an agent (agent_patch_*:
 * arch/x86_64_patch.c, arch/i386_patch.c, arch/aarch64_patch.c,
 * arch/arm_patch.c): a
 * patched function's first instructions become a jump to a stub in a
 * scratch slot near its module; the stub passes the function's index on
 * to the agent's entry, and the out-of-line copy of the instructions the
 * jump replaced follows the stub in the slot.
 *
 * Whether a process can have the agent, the registers of a record, a
 * and a thread's slot key (agent_cpu_*: arch/<cpu>.c). */
#ifndef MT_ARCH_AGENT_CPU_H
#define MT_ARCH_AGENT_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/agent_cpu_flags.h"

#define AGENT_PATCH_READ 32     /* bytes of the entry read: enough for every CPU */
#define AGENT_PATCH_MAX_COVER 16 /* at most this many bytes are replaced */

/* Bytes of the stub, before the copy in a slot. */
unsigned agent_patch_stub_len(void);
/* The entry must have at least this many readable bytes. */
unsigned agent_patch_min_len(void);

/* For the function at addr (code[0..avail) its first bytes), patched
 * through slot (bytes_cap bytes) with index idx to the agent's entry:
 * the stub then the copy into bytes, what replaces the entry's first
 * *covered bytes into jump (AGENT_PATCH_MAX_COVER bytes).  Returns the
 * copy's length, or 0 with a reason in *why (NULL: the slot is out of
 * the jump's reach). */
size_t agent_patch_build(const uint8_t *code, size_t avail, uint64_t addr, uint64_t slot, unsigned idx,
                         uint64_t entry, uint8_t *bytes, size_t bytes_cap, uint8_t *jump,
                         unsigned *covered, const char **why);

/* The registers at a function's entry as the agent records them, in the
 * form a breakpoint stop gives (the unwinder needs the pc, the stack
 * pointer and the callee-saved registers): sp, the frame pointer, the
 * return address (where a register holds it), callee[5] (x86_64: rbx,
 * r12-r15; i386: ebx, esi, edi; aarch64: x19-x23; arm: r4, r5, r6, r11, r8, fp being r7) and the argument
 * registers (none on i386: cdecl passes them on the copied stack). */
struct arch_regs;
void agent_cpu_entry_regs(struct arch_regs *regs, uint64_t pc, uint64_t sp, uint64_t fp, uint64_t ra,
                            const uint64_t callee[5], const uint64_t args[6]);

/* Whether the agent can run in process pid on this CPU; false with why.
 * *cpu_flags gets the AGENT_CPU_* bits of agent_data (target/agent/
 * agent_abi.h): x86_64 says whether the kernel allows rdfsbase. */
bool agent_cpu_ready(int pid, uint32_t *cpu_flags, char *why, size_t whylen);

/* The key the agent gives the thread tid's slot: its thread pointer as
 * the agent reads it (fs base, TPIDR_EL0, the word at %gs:0, read with
 * read_word), 1 for a thread with none yet, 0 when it cannot be read. */
uint64_t agent_cpu_thread_key(int tid, int (*read_word)(void *ctx, uint64_t addr, uint32_t *out),
                                void *ctx);

#endif
