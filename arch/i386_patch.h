/* Entry trampolines of the agent engine on i386 (target/agent): the jmp
 * rel32 that replaces a function's first instructions (it reaches any
 * address: the 32-bit address space wraps), the stub it jumps to, and the
 * out-of-line copy of the instructions it replaced (the displaced stepping
 * plans of arch/x86_insn.c in 32-bit mode). */
#ifndef MT_ARCH_I386_PATCH_H
#define MT_ARCH_I386_PATCH_H

#include <stddef.h>
#include <stdint.h>

#define I386_PATCH_JMP_LEN 5   /* jmp rel32 */
#define I386_PATCH_STUB_LEN 10 /* mov $index,%eax; jmp rel32 entry */
#define I386_PATCH_MAX_COVER 16

/* The out-of-line copy of the instructions of the function at fn_addr
 * (code[0..avail) are its bytes) that the jmp replaces, for execution at
 * copy_addr: whole instructions covering at least I386_PATCH_JMP_LEN
 * bytes, then a jump back to the first instruction not copied.  A call
 * rel32 (the PIC thunk, `call __x86.get_pc_thunk.bx`) or a jcc ends the
 * copy: the call pushes its original return address, so the callee
 * returns into the function itself, the jcc goes on at its original
 * fall-through or target (refused when that lies inside the bytes the jmp
 * replaces).  Returns the copy's length (at most cap) and the bytes
 * covered in *covered; 0 with a reason in why when the entry cannot move. */
size_t i386_patch_relocate(const uint8_t *code, size_t avail, uint32_t fn_addr, uint32_t copy_addr,
                           uint8_t *out, size_t cap, unsigned *covered, const char **why);

/* The stub at stub_addr: the index into eax (scratch at a cdecl function's
 * entry), then a jump to entry. */
void i386_patch_stub(uint8_t out[I386_PATCH_STUB_LEN], uint32_t stub_addr, uint32_t index,
                     uint32_t entry);

/* The jump written over the function's entry (then int3 up to covered
 * bytes); -1 when covered is too short. */
int i386_patch_jump(uint8_t *out, unsigned covered, uint32_t from, uint32_t dest);

#endif
