/* Displaced execution of one A64 instruction.
 *
 * Only the PC-relative instructions need care: B and BL, B.cond, CBZ/CBNZ,
 * TBZ/TBNZ, ADR, ADRP and the literal loads (LDR, LDRSW, PRFM, SIMD LDR).
 * Their copies would compute from the slot's address, so they are emulated
 * (B, NOP, BTI) or rewritten into absolute sequences in the slot.  Anything
 * else reads no PC and runs unchanged in the slot, followed by a branch back.
 *
 * The branch back is a plain B whenever the original code is within its
 * +-128 MiB reach (the scratch page is mapped just below the module): an
 * indirect BR into a BTI-guarded page would fault at a target that is no
 * landing pad.  Farther away, LDR+BR through x16 or x17 (IP0/IP1, which no
 * caller may expect preserved across a call), picking one the instruction
 * does not write. */
#include "arch/aarch64_insn.h"

#include <string.h>

#define B_RANGE (128ll << 20)

struct emitter {
    uint8_t *buf;
    unsigned len;     /* bytes used */
    uint64_t base;    /* target address of buf[0] */
};

static void emit(struct emitter *e, uint32_t word)
{
    if (e->len + 4 > ARCH_DISPLACE_SLOT_MAX)
        return;   /* sequences below are sized to fit; never reached */
    for (int i = 0; i < 4; i++)
        e->buf[e->len + i] = (uint8_t)(word >> (8 * i));
    e->len += 4;
}

static void emit64(struct emitter *e, uint64_t v)
{
    emit(e, (uint32_t)v);
    emit(e, (uint32_t)(v >> 32));
}

static uint64_t here(const struct emitter *e) { return e->base + e->len; }

static int64_t sign_extend(uint64_t v, unsigned bits)
{
    uint64_t m = 1ull << (bits - 1);
    v &= (1ull << bits) - 1;
    return (int64_t)((v ^ m) - m);
}

/* ldr xt, [pc, #8]; b +12; .quad value */
static void emit_load_const(struct emitter *e, unsigned xt, uint64_t value)
{
    emit(e, 0x58000040u | xt);          /* ldr xt, .+8 */
    emit(e, 0x14000003u);               /* b .+12 */
    emit64(e, value);
}

/* Continue at target: b, or ldr+br through the scratch register. */
static void emit_jump(struct emitter *e, uint64_t target, unsigned scratch)
{
    int64_t off = (int64_t)(target - here(e));
    if (off >= -B_RANGE && off < B_RANGE) {
        emit(e, 0x14000000u | ((uint32_t)((uint64_t)off >> 2) & 0x3ffffffu));
        return;
    }
    emit(e, 0x58000040u | scratch);          /* ldr xs, .+8 */
    emit(e, 0xd61f0000u | (scratch << 5));   /* br xs */
    emit64(e, target);
}

/* x16 unless the instruction names it in one of the usual destination
 * fields (Rt/Rd at bits 0-4, Rt2 at bits 10-14): then x17. */
static unsigned scratch_for(uint32_t insn)
{
    unsigned rt = insn & 31, rt2 = (insn >> 10) & 31;
    return (rt == 16 || rt2 == 16) ? 17 : 16;
}

static struct displace_plan emulate(uint64_t new_pc)
{
    struct displace_plan p;
    memset(&p, 0, sizeof(p));
    p.kind = DISPLACE_EMULATE;
    p.insn_len = 4;
    p.new_pc = new_pc;
    return p;
}

static bool is_nop_like(uint32_t insn)
{
    if ((insn & 0xfffff01fu) != 0xd503201fu)
        return false;                          /* not in the HINT space */
    unsigned op = (insn >> 5) & 0x7f;          /* CRm:op2 */
    /* NOP, and BTI (c/j/jc/plain): no effect when the PC moves on.  PAC
     * hints such as paciasp change LR: those are copied, not skipped. */
    return op == 0 || op == 32 || op == 34 || op == 36 || op == 38;
}

struct displace_plan a64_displace(uint32_t insn, uint64_t insn_addr, uint64_t slot_addr)
{
    uint64_t next = insn_addr + 4;
    if (is_nop_like(insn))
        return emulate(next);
    if ((insn & 0xfc000000u) == 0x14000000u)   /* b */
        return emulate(insn_addr + (uint64_t)(sign_extend(insn, 26) * 4));

    struct displace_plan p;
    memset(&p, 0, sizeof(p));
    p.kind = DISPLACE_OUT_OF_LINE;
    p.insn_len = 4;
    struct emitter e = {.buf = p.slot_bytes, .len = 0, .base = slot_addr};
    unsigned scratch = scratch_for(insn);
    unsigned rt = insn & 31;

    if ((insn & 0xfc000000u) == 0x94000000u) {                 /* bl */
        uint64_t target = insn_addr + (uint64_t)(sign_extend(insn, 26) * 4);
        emit_load_const(&e, 30, next);
        emit_jump(&e, target, 16);
    } else if ((insn & 0xff000010u) == 0x54000000u ||           /* b.cond */
               (insn & 0x7e000000u) == 0x34000000u ||           /* cbz, cbnz */
               (insn & 0x7e000000u) == 0x36000000u) {           /* tbz, tbnz */
        bool tb = (insn & 0x7e000000u) == 0x36000000u;
        unsigned bits = tb ? 14 : 19;
        uint32_t field = ((1u << bits) - 1) << 5;
        uint64_t target = insn_addr + (uint64_t)(sign_extend(insn >> 5, bits) * 4);
        /* The same test, now branching to the taken path below. */
        uint32_t skip_words = 1 + (uint32_t)4;   /* this insn + the longest jump */
        emit(&e, (insn & ~field) | (skip_words << 5));
        unsigned fall_start = e.len;
        emit_jump(&e, next, 16);
        while (e.len < fall_start + 16)
            emit(&e, A64_BRK0);                  /* pad to the fixed offset */
        emit_jump(&e, target, 16);
    } else if ((insn & 0x1f000000u) == 0x10000000u) {           /* adr, adrp */
        int64_t imm = sign_extend(((insn >> 5) & 0x7ffff) << 2 | ((insn >> 29) & 3), 21);
        uint64_t value = (insn & 0x80000000u)
                             ? (insn_addr & ~(uint64_t)0xfff) + (uint64_t)(imm * 4096)
                             : insn_addr + (uint64_t)imm;
        if (rt == 31)
            return emulate(next);   /* xzr: no effect */
        emit_load_const(&e, rt, value);
        emit_jump(&e, next, scratch);
    } else if ((insn & 0x3b000000u) == 0x18000000u) {           /* load literal */
        uint64_t addr = insn_addr + (uint64_t)(sign_extend(insn >> 5, 19) * 4);
        unsigned opc = insn >> 30;
        bool simd = insn & (1u << 26);
        if (!simd && (opc == 3 || rt == 31))
            return emulate(next);   /* prfm (a hint), or a load into xzr */
        if (simd) {
            static const uint32_t ldr_simd[3] = {0xbd400000u, 0xfd400000u, 0x3dc00000u};
            if (opc == 3)
                goto unsupported;
            emit_load_const(&e, 16, addr);
            emit(&e, ldr_simd[opc] | (16u << 5) | rt);   /* ldr s/d/q t, [x16] */
            emit_jump(&e, next, 17);
        } else {
            static const uint32_t ldr_gp[3] = {0xb9400000u, 0xf9400000u, 0xb9800000u};
            emit_load_const(&e, rt, addr);
            emit(&e, ldr_gp[opc] | (rt << 5) | rt);      /* ldr wt/xt, ldrsw xt, [xt] */
            emit_jump(&e, next, scratch);
        }
    } else {
        emit(&e, insn);
        emit_jump(&e, next, scratch);
    }
    p.slot_len = e.len;
    return p;

unsupported:
    memset(&p, 0, sizeof(p));
    p.kind = DISPLACE_UNSUPPORTED;
    p.insn_len = 4;
    return p;
}
