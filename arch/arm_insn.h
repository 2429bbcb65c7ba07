/* ARM-state (A32) instructions that a breakpoint covers: how to execute
 * them somewhere else.  Pure functions of the word and its address. */
#ifndef MT_ARCH_ARM_INSN_H
#define MT_ARCH_ARM_INSN_H

#include <stdint.h>

#include "arch/arch.h"

#define ARM_BREAKPOINT 0xe7f001f0u   /* udf, the Linux ptrace breakpoint */

struct displace_plan arm_displace(uint32_t insn, uint32_t insn_addr, uint32_t slot_addr);

#endif
