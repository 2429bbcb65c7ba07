/* Thumb prologue analysis: where a function saved its caller's registers,
 * read from its first instructions.  The last resort of the arm unwinder,
 * as gdb's: Debian's armhf glibc is built without unwind tables for most of
 * its C code, whose .ARM.exidx ranges are the linker's EXIDX_CANTUNWIND
 * fillers, and a target has no debug files.
 *
 * From the function's start up to the pc (at most ARM_PROLOGUE_MAX bytes),
 * the stack-growing instructions are followed: push (16- and 32-bit, and
 * str rt, [sp, #-4]!), sub sp (16-bit, sub.w/subw with an immediate),
 * vpush.  The scan ends at the pc, at a branch once something was pushed,
 * or at an instruction that moves sp another way (then nothing is known). */
#ifndef MT_UNWIND_ARM_PROLOGUE_H
#define MT_UNWIND_ARM_PROLOGUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARM_PROLOGUE_MAX 96

struct arm_prologue {
    uint32_t frame_size;   /* caller's sp = sp at the pc + frame_size */
    int32_t saved[16];     /* r[n] saved at sp + saved[n]; -1: not saved */
};

/* code[0..len): the function's first bytes (Thumb), len = pc - start
 * (capped by the caller).  0, or -1 when sp moves in a way not followed. */
int arm_thumb_prologue(const uint8_t *code, size_t len, struct arm_prologue *out);

#endif
