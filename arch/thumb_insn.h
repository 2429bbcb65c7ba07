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

#endif
