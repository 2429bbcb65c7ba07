/* Thumb (T16/T32) instructions that a breakpoint covers: their length and
 * how to execute them somewhere else.  Pure functions of the bytes and
 * their address. */
#ifndef MT_ARCH_THUMB_INSN_H
#define MT_ARCH_THUMB_INSN_H

#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"

/* 2 or 4: the length of the instruction whose first halfword is hw1. */
unsigned thumb_insn_len(uint16_t hw1);

/* The plan for the Thumb instruction at code[0..avail) (little-endian
 * halfwords), at insn_addr (even: the address without the Thumb bit), to
 * run from the slot at slot_addr (word aligned).  Emulated pcs and the
 * slot entry carry the Thumb bit. */
struct displace_plan thumb_displace(const uint8_t *code, size_t avail, uint32_t insn_addr,
                                    uint32_t slot_addr);

/* The same, where the slot goes on at next_pc (the Thumb bit is added)
 * instead of the instruction after it: the agent's entry patch moves two
 * instructions, the first of which continues into the copy of the second
 * (arch/arm_patch.c).  0: the instruction after it.  THUMB_NEXT_INLINE:
 * an instruction that runs unchanged (or a nop) is given alone, to fall
 * through into what follows it (slot_len 0 for a nop); anything else is
 * refused. */
#define THUMB_NEXT_INLINE 0xffffffffu
struct displace_plan thumb_displace_to(const uint8_t *code, size_t avail, uint32_t insn_addr,
                                       uint32_t slot_addr, uint32_t next_pc);

#endif
