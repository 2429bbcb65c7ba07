/* Entry trampolines of the agent engine on aarch64 (target/agent): the B
 * that replaces a function's first instruction, the stub it branches to,
 * and the out-of-line copy of the instruction it replaced (the displaced
 * stepping plans of arch/aarch64_insn.c). */
#ifndef MT_ARCH_AARCH64_PATCH_H
#define MT_ARCH_AARCH64_PATCH_H

#include <stddef.h>
#include <stdint.h>

#define A64_PATCH_JMP_LEN 4   /* b imm26: one instruction, written in one aligned store */
#define A64_PATCH_STUB_LEN 24 /* movz x17, #index; ldr x16, .+12; br x16; nop; .quad entry */

/* The out-of-line copy of the instruction insn found at fn_addr, for
 * execution at copy_addr (4-byte aligned): PC-relative forms rewritten,
 * then a branch back to fn_addr + 4 (or wherever the instruction went).
 * Returns its length (at most cap), or 0 with a reason in why. */
size_t a64_patch_relocate(uint32_t insn, uint64_t fn_addr, uint64_t copy_addr, uint8_t *out,
                          size_t cap, const char **why);

/* The stub: the function's index into x17, then a branch to entry through
 * x16 (IP0 and IP1: no caller expects them kept across a call). */
void a64_patch_stub(uint8_t out[A64_PATCH_STUB_LEN], uint32_t index, uint64_t entry);

/* The B written over the function's first instruction; -1 when dest is
 * beyond its +-128 MiB reach or either address is not 4-byte aligned. */
int a64_patch_jump(uint8_t out[A64_PATCH_JMP_LEN], uint64_t from, uint64_t dest);

#endif
