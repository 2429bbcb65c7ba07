/* x86 instruction length decoding (i386 and x86_64 general-purpose ISA,
 * SSE, VEX and EVEX) and the plans that execute a breakpointed instruction
 * somewhere else (displaced stepping) while the breakpoint stays in place. */
#ifndef MT_ARCH_X86_INSN_H
#define MT_ARCH_X86_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"

#define X86_INSN_MAX_LEN 15

enum x86_encoding { X86_ENC_LEGACY, X86_ENC_VEX, X86_ENC_EVEX, X86_ENC_XOP };

/* Opcode map: 1-byte, 0F, 0F38, 0F3A; EVEX maps 5 and 6 (AVX512-FP16); AMD
 * XOP maps 8, 9, A. */
enum x86_map {
    X86_MAP_1BYTE, X86_MAP_0F, X86_MAP_0F38, X86_MAP_0F3A, X86_MAP_5, X86_MAP_6,
    X86_MAP_XOP8, X86_MAP_XOP9, X86_MAP_XOPA
};

/* What the instruction does to the flow of control, as far as displaced
 * execution cares. */
enum x86_flow {
    X86_FLOW_NORMAL,        /* falls through to the next instruction */
    X86_FLOW_JMP_REL,       /* jmp rel8/rel16/rel32 */
    X86_FLOW_JCC_REL,       /* jcc rel8/rel32, loop, loope, loopne, jcxz/jecxz/jrcxz */
    X86_FLOW_CALL_REL,      /* call rel16/rel32 */
    X86_FLOW_XBEGIN,        /* xbegin rel: aborts to a relative address */
    X86_FLOW_JMP_INDIRECT,  /* jmp r/m */
    X86_FLOW_CALL_INDIRECT, /* call r/m */
    X86_FLOW_RET,           /* ret, ret imm16 */
    X86_FLOW_FAR,           /* far call/jmp/ret, iret */
    X86_FLOW_TRAP,          /* int3, int n, into, int1, syscall, sysenter, sysexit,
                             * sysret, ud0/1/2 */
};

struct x86_insn {
    unsigned len;
    /* Legacy prefixes. */
    unsigned n_prefixes;      /* legacy prefix bytes before REX/VEX/opcode */
    bool opsize_prefix;       /* 66 */
    bool addrsize_prefix;     /* 67 */
    bool lock;                /* F0 */
    uint8_t rep;              /* last of F2/F3, or 0 */
    uint8_t segment;          /* last segment override (2E 36 3E 26 64 65), or 0 */
    uint8_t rex;              /* REX byte (64-bit mode only), or 0 */
    enum x86_encoding encoding;
    bool vex_w;               /* VEX.W / EVEX.W */
    enum x86_map map;
    unsigned opcode_off;
    uint8_t opcode;
    bool has_modrm;
    uint8_t modrm;
    unsigned modrm_off;
    bool has_sib;
    uint8_t sib;
    unsigned disp_off, disp_size;   /* disp_size 0 when none */
    unsigned imm_off, imm_size;     /* all immediate bytes (enter: 3, far ptr: 6) */
    bool rip_relative;        /* mod=00 rm=101 without SIB in 64-bit mode */
    enum x86_flow flow;
    unsigned rel_off, rel_size;     /* the relative displacement of a *_REL flow or xbegin */
};

/* Decodes one instruction from p[0..avail).  Returns false when the bytes are
 * not a complete instruction this decoder knows (invalid, truncated,
 * 3DNow, XOP, ...). */
bool x86_decode(const uint8_t *p, size_t avail, bool mode64, struct x86_insn *out);

/* The destination of a *_REL flow (or xbegin) at insn_addr; wraps to 32 bits
 * outside 64-bit mode. */
uint64_t x86_branch_target(const struct x86_insn *insn, const uint8_t *p, uint64_t insn_addr,
                           bool mode64);

/* The displaced-execution plan for the instruction at insn_addr whose bytes
 * are insn[0..avail), with the scratch slot at slot_addr (see arch.h).
 *
 *   EMULATE      nop, endbr64/endbr32, pause, nopw/nopl; jmp rel8/rel32
 *                (new_pc = its target).
 *   OUT_OF_LINE  other position-independent instructions, ret and jmp r/m:
 *                the copy, then a jump back to insn_addr+len (64-bit:
 *                jmp *0(%rip) + absolute address; 32-bit: jmp rel32).  A
 *                RIP-relative displacement is rewritten for the slot, and the
 *                plan is UNSUPPORTED if the slot is beyond +-2 GiB of the
 *                operand.
 *                jcc/loop/jcxz: the branch retargeted over the fall-through
 *                jump, then a jump to the original target.
 *                call rel32: the original return address pushed (64-bit:
 *                lea -8(%rsp),%rsp + two movl, flags untouched; 32-bit: push
 *                imm32), then a jump to the callee.  With a CET shadow stack
 *                enabled in the target the callee's ret would fault; Linux
 *                user space does not enable it on the glibc this runs on.
 *                call r/m: the same push, then jmp r/m (refused when the
 *                operand involves the stack pointer).
 *   UNSUPPORTED  call r/m through the stack pointer, far transfers,
 *                int3/int/syscall/sysenter/ud2, xbegin, 16-bit operand size
 *                on branches and calls, addr32 RIP-relative, and anything
 *                x86_decode refuses.
 *
 * A signal delivered while the thread runs in the slot returns into the slot,
 * so the slot must stay unchanged until the thread's PC has left it. */
struct displace_plan x86_displace(const uint8_t *insn, size_t avail, uint64_t insn_addr,
                                  uint64_t slot_addr, bool mode64);

#endif
