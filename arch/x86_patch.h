/* Entry trampolines of the agent engine on x86_64 (target/agent): the jump
 * that replaces a function's first instructions, the stub it jumps to, and
 * the out-of-line copy of the instructions it replaced. */
#ifndef MT_ARCH_X86_PATCH_H
#define MT_ARCH_X86_PATCH_H

#include <stddef.h>
#include <stdint.h>

#define X86_PATCH_JMP_LEN 5   /* jmp rel32 */
#define X86_PATCH_STUB_LEN 20 /* mov $index,%r11d; jmp *0(%rip); .quad entry */
#define X86_PATCH_MAX_COVER 16

/* The out-of-line copy of the instructions of the function at fn_addr
 * (code[0..avail) are its bytes) that a jmp rel32 replaces, for execution
 * at copy_addr: whole instructions covering at least X86_PATCH_JMP_LEN
 * bytes, RIP-relative operands and branches retargeted, then a jump back
 * to the first instruction not copied.  Returns the copy's length (at most
 * cap) and the bytes covered in *covered; 0 with a reason in why when the
 * entry cannot be moved (a return or an indirect jump inside the first 5
 * bytes, an unknown instruction, no room). */
size_t x86_patch_relocate(const uint8_t *code, size_t avail, uint64_t fn_addr, uint64_t copy_addr,
                          uint8_t *out, size_t cap, unsigned *covered, const char **why);

/* The stub: loads index into r11 and jumps to entry. */
void x86_patch_stub(uint8_t out[X86_PATCH_STUB_LEN], uint32_t index, uint64_t entry);

/* The jump written over the function's entry (then int3 up to covered
 * bytes); -1 when dest is beyond +-2 GiB. */
int x86_patch_jump(uint8_t *out, unsigned covered, uint64_t from, uint64_t dest);

#endif
