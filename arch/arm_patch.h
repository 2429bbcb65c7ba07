/* Entry trampolines of the agent engine on arm (target/agent): the branch
 * that replaces a function's first instructions, the stub it branches to,
 * and the out-of-line copy of the instructions it replaced (the displaced
 * stepping plans of arch/thumb_insn.c and arch/arm_insn.c).
 *
 * A Thumb function (its address has bit 0 set) gets a b.w (4 bytes, +-16
 * MiB) to a Thumb stub; the instructions it covers, one 32-bit or two
 * 16-bit ones (the second 32-bit one may stick out by two bytes, which stay
 * as they are), are moved.  An ARM function gets a b (4 bytes, +-32 MiB) to
 * an ARM stub, and its one instruction is moved.  Both stubs load the
 * function's index into ip (r12: any veneer between a caller and a
 * function may clobber it) and load the agent's entry (ARM code) into pc. */
#ifndef MT_ARCH_ARM_PATCH_H
#define MT_ARCH_ARM_PATCH_H

#include <stddef.h>
#include <stdint.h>

#define ARM_PATCH_JMP_LEN 4   /* b.w (Thumb) or b (ARM) */
#define ARM_PATCH_STUB_LEN 12 /* movw ip, #index; ldr pc, [pc, ...]; .word entry */

/* The out-of-line copy of the first instructions of the function at
 * fn_addr (bit 0: Thumb; code[0..avail) its bytes), for execution at
 * copy_addr (4-byte aligned, entered in the function's state): the
 * instructions the jump covers, rewritten where they read the pc, then a
 * jump back to the first one not moved.  Refused (0, a reason in why): an
 * IT instruction among them (no patch may cut an IT block), a first
 * instruction that ends the function before the jump's 4 bytes (they
 * would overwrite what follows), anything the displacement rules refuse. */
size_t arm_patch_relocate(const uint8_t *code, size_t avail, uint32_t fn_addr, uint32_t copy_addr,
                          uint8_t *out, size_t cap, const char **why);

/* The stub (in the function's state, 4-byte aligned at stub_addr). */
void arm_patch_stub(uint8_t out[ARM_PATCH_STUB_LEN], uint32_t fn_addr, uint32_t index, uint32_t entry);

/* The branch written over the function's entry to dest (the stub); -1
 * when dest is out of its reach or misaligned. */
int arm_patch_jump(uint8_t out[ARM_PATCH_JMP_LEN], uint32_t fn_addr, uint32_t dest);

#endif
