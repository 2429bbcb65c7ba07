/* A64 instructions that a breakpoint covers: how to execute them somewhere
 * else (displaced stepping).  Pure functions of the instruction word and its
 * address, so the plans can be checked on any CPU that runs them (the
 * arch_cross tests run them under qemu-aarch64). */
#ifndef MT_ARCH_AARCH64_INSN_H
#define MT_ARCH_AARCH64_INSN_H

#include <stdint.h>

#include "arch/arch.h"

#define A64_BRK0 0xd4200000u   /* brk #0 */
#define A64_SVC0 0xd4000001u   /* svc #0 */

/* The plan for the instruction word `insn` found at insn_addr, whose copy
 * would run in the scratch slot at slot_addr (4-byte aligned). */
struct displace_plan a64_displace(uint32_t insn, uint64_t insn_addr, uint64_t slot_addr);

#endif
