/* Displaced execution of one Thumb instruction (T16 or T32).
 *
 * The slot is Thumb code: the instruction itself when it reads no pc,
 * then "ldr.w pc, [pc, #k]" with a literal word holding the next
 * instruction's address | 1 (a load into pc works at any distance and
 * interworks).  The pc-relative forms are rewritten with literal words:
 * ldr/ldrb/ldrh/ldrsb/ldrsh literal (the address is loaded, then the value
 * through it), adr and add/mov from pc (the value is loaded), b<cond>,
 * cbz/cbnz (the same test in the slot, branching to one of two absolute
 * jumps), bl and blx (lr and pc loaded).  b and nop are emulated.  Where a
 * scratch register is needed it is r12 (ip), which the AAPCS lets any
 * veneer between a caller and a function's entry corrupt.
 *
 * Refused (the engine then leaves the function alone): an IT instruction
 * (it conditions the instructions after it, which would not be in the
 * slot), any other use of the pc as an operand (tbb/tbh, ldrd and vldr
 * literal, ldr pc literal, ...), traps and undefined encodings. */
#include "arch/thumb_insn.h"

#include <stdbool.h>
#include <string.h>

#define NOP16 0xbf00u
#define LDR_W_LIT_HW1 0xf8dfu   /* ldr.w rt, [pc, #+imm12] */
#define IP 12u
#define SP 13u
#define PC 15u

#define LITS_MAX 4

struct emitter {
    uint8_t *buf;
    unsigned len;
    uint32_t lit[LITS_MAX];
    unsigned lit_at[LITS_MAX];   /* offset of the ldr.w that loads lit[i] */
    unsigned nlit;
};

static void emit16(struct emitter *e, uint32_t hw)
{
    if (e->len + 2 > ARCH_DISPLACE_SLOT_MAX)
        return;   /* sequences below are sized to fit */
    e->buf[e->len] = (uint8_t)hw;
    e->buf[e->len + 1] = (uint8_t)(hw >> 8);
    e->len += 2;
}

static void emit32(struct emitter *e, uint32_t hw1, uint32_t hw2)
{
    emit16(e, hw1);
    emit16(e, hw2);
}

/* ldr.w rt, =value (the offset is filled in by finish). */
static void emit_load(struct emitter *e, unsigned rt, uint32_t value)
{
    if (e->nlit == LITS_MAX)
        return;
    e->lit[e->nlit] = value;
    e->lit_at[e->nlit++] = e->len;
    emit32(e, LDR_W_LIT_HW1, rt << 12);
}

/* Continue at target (bit 0: Thumb). */
static void emit_jump(struct emitter *e, uint32_t target) { emit_load(e, PC, target); }

/* Appends the literal words (word aligned) and points each load at its
 * word: a Thumb literal address is Align(pc + 4, 4) + imm12. */
static void finish(struct emitter *e, uint32_t slot_addr)
{
    if (e->len & 2)
        emit16(e, NOP16);
    for (unsigned i = 0; i < e->nlit; i++) {
        uint32_t word_off = e->len;
        uint32_t base = (slot_addr + e->lit_at[i] + 4) & ~3u;
        uint32_t imm = slot_addr + word_off - base;
        emit16(e, e->lit[i] & 0xffff);
        emit16(e, e->lit[i] >> 16);
        e->buf[e->lit_at[i] + 2] |= (uint8_t)imm;
        e->buf[e->lit_at[i] + 3] |= (uint8_t)((imm >> 8) & 0x0f);
    }
}

unsigned thumb_insn_len(uint16_t hw1)
{
    unsigned top = hw1 >> 11;
    return (top == 0x1d || top == 0x1e || top == 0x1f) ? 4 : 2;
}

static struct displace_plan plan_of(enum displace_kind kind, unsigned len)
{
    struct displace_plan p;
    memset(&p, 0, sizeof(p));
    p.kind = kind;
    p.insn_len = len;
    return p;
}

static struct displace_plan emulate(unsigned len, uint32_t new_pc)
{
    struct displace_plan p = plan_of(DISPLACE_EMULATE, len);
    p.new_pc = new_pc | 1u;
    return p;
}

static int32_t sign_extend(uint32_t v, unsigned bits)
{
    uint32_t m = 1u << (bits - 1);
    v &= (bits == 32) ? ~0u : (1u << bits) - 1;
    return (int32_t)((v ^ m) - m);
}

/* What the plan does with the instruction. */
enum how {
    HOW_REFUSE,
    HOW_COPY,           /* reads no pc: runs unchanged */
    HOW_NOP,            /* no effect but the pc */
    HOW_BRANCH,         /* b: emulated at target */
    HOW_COND,           /* b<cond> or cbz/cbnz: test in the slot, two jumps */
    HOW_CALL,           /* bl / blx: lr = next | 1, pc = target */
    HOW_VALUE,          /* rd = value (adr, mov rd, pc) */
    HOW_ADD_VALUE,      /* rd += value (add rd, pc) via ip */
    HOW_LOAD,           /* rd = [value] with the load `op` (ldr literal forms) */
};

struct decoded {
    enum how how;
    unsigned rd;
    uint32_t value;     /* target, value or load address */
    uint32_t test;      /* HOW_COND: the test, rewritten to skip 4 bytes; HOW_LOAD: load hw1 */
};

/* T16. pc is the value the instruction reads as pc (its address + 4). */
static struct decoded decode16(uint32_t hw, uint32_t pc)
{
    struct decoded d = {HOW_COPY, 0, 0, 0};
    uint32_t aligned = pc & ~3u;
    if ((hw & 0xfc00) == 0x4400) {            /* add/cmp/mov hi registers, bx/blx */
        unsigned op = (hw >> 8) & 3, rm = (hw >> 3) & 15;
        unsigned rdn = (hw & 7) | ((hw >> 4) & 8);
        if (op == 3) {                        /* bx/blx rm */
            d.how = rm == PC ? HOW_REFUSE : HOW_COPY;
        } else if (rm == PC) {
            d.rd = rdn;
            d.value = pc;
            d.how = rdn == PC || rdn == SP || op == 1 ? HOW_REFUSE
                    : op == 0                      ? (rdn == IP ? HOW_REFUSE : HOW_ADD_VALUE)
                                                   : HOW_VALUE;
        } else if (rdn == PC) {
            /* add pc, rm reads the pc; mov pc, rm is a branch to rm. */
            d.how = op == 2 ? HOW_COPY : HOW_REFUSE;
        }
    } else if ((hw & 0xf800) == 0x4800) {     /* ldr rt, [pc, #imm8*4] */
        d.how = HOW_LOAD;
        d.rd = (hw >> 8) & 7;
        d.value = aligned + (hw & 0xff) * 4;
        d.test = 0xf8d0;                      /* ldr.w rt, [rn, #0] */
    } else if ((hw & 0xf800) == 0xa000) {     /* adr rd, #imm8*4 */
        d.how = HOW_VALUE;
        d.rd = (hw >> 8) & 7;
        d.value = aligned + (hw & 0xff) * 4;
    } else if ((hw & 0xf500) == 0xb100) {     /* cbz/cbnz rn, #imm */
        d.how = HOW_COND;
        d.value = pc + ((hw >> 3) & 0x1f) * 2 + ((hw >> 9) & 1) * 64;
        d.test = (hw & ~0x02f8u) | (1u << 3);  /* the same test, to +2 past the next jump */
    } else if ((hw & 0xff00) == 0xbf00) {     /* IT, or a hint */
        d.how = (hw & 0x000f) ? HOW_REFUSE : hw == NOP16 ? HOW_NOP : HOW_COPY;
    } else if ((hw & 0xff00) == 0xbe00) {     /* bkpt */
        d.how = HOW_REFUSE;
    } else if ((hw & 0xf000) == 0xd000) {     /* b<cond>, udf, svc */
        unsigned cond = (hw >> 8) & 15;
        if (cond == 14) {
            d.how = HOW_REFUSE;
        } else if (cond != 15) {
            d.how = HOW_COND;
            d.value = pc + (uint32_t)(sign_extend(hw & 0xff, 8) * 2);
            d.test = (hw & 0xff00) | 1u;
        }
    } else if ((hw & 0xf800) == 0xe000) {     /* b #imm11 */
        d.how = HOW_BRANCH;
        d.value = pc + (uint32_t)(sign_extend(hw & 0x7ff, 11) * 2);
    }
    return d;
}

/* Data processing with rd/rn at their usual places: rn = 15 is mov/mvn for
 * orr/orn, rd = 15 is a test (tst/teq/cmn/cmp) when flags are set. */
static bool dp_pc_ok(unsigned op, bool s, unsigned rn, unsigned rd)
{
    if (rn == PC && op != 2 && op != 3)
        return false;
    if (rd == PC && !(s && (op == 0 || op == 4 || op == 8 || op == 13)))
        return false;
    return true;
}

/* T32. */
static struct decoded decode32(uint32_t hw1, uint32_t hw2, uint32_t pc)
{
    struct decoded d = {HOW_COPY, 0, 0, 0};
    uint32_t aligned = pc & ~3u;
    unsigned rn = hw1 & 15, rt = hw2 >> 12, rd = (hw2 >> 8) & 15, rm = hw2 & 15;

    if ((hw1 & 0xfe40) == 0xe800) {                   /* ldm/stm, push/pop */
        bool load = hw1 & 0x10;
        if (rn == PC || (!load && (hw2 & 0x8000)))
            d.how = HOW_REFUSE;
    } else if ((hw1 & 0xfe40) == 0xe840) {            /* ldrd/strd, exclusives, tbb/tbh */
        if (rn == PC || rt == PC || rd == PC)
            d.how = HOW_REFUSE;
    } else if ((hw1 & 0xfe00) == 0xea00) {            /* data processing, shifted register */
        if (rm == PC || !dp_pc_ok((hw1 >> 5) & 15, hw1 & 0x10, rn, rd))
            d.how = HOW_REFUSE;
    } else if ((hw1 & 0xfc00) == 0xec00) {            /* coprocessor/VFP load/store, mcrr */
        if (rn == PC)
            d.how = HOW_REFUSE;
    } else if ((hw1 & 0xfc00) == 0xee00) {            /* coprocessor data, mcr/mrc, SIMD */
        d.how = HOW_COPY;
    } else if ((hw1 & 0xf800) == 0xf000 && !(hw2 & 0x8000)) {
        if (!(hw1 & 0x0200)) {                        /* modified immediate */
            if (!dp_pc_ok((hw1 >> 5) & 15, hw1 & 0x10, rn, rd))
                d.how = HOW_REFUSE;
        } else {                                      /* plain binary immediate */
            unsigned op = (hw1 >> 4) & 31;
            uint32_t imm12 = ((hw1 >> 10) & 1) << 11 | ((hw2 >> 12) & 7) << 8 | (hw2 & 0xff);
            if (rd == PC || rd == SP) {
                d.how = rd == SP && rn == SP && (op == 0 || op == 10) ? HOW_COPY : HOW_REFUSE;
            } else if (rn == PC && (op == 0 || op == 10)) {   /* adr (addw/subw from pc) */
                d.how = HOW_VALUE;
                d.rd = rd;
                d.value = op == 0 ? aligned + imm12 : aligned - imm12;
            } else if (rn == PC && op != 4 && op != 12 && op != 22) {
                d.how = HOW_REFUSE;                   /* movw/movt: imm4; bfi: bfc */
            }
        }
    } else if ((hw1 & 0xf800) == 0xf000) {            /* branches and misc control */
        uint32_t s = (hw1 >> 10) & 1, j1 = (hw2 >> 13) & 1, j2 = (hw2 >> 11) & 1;
        uint32_t i1 = !(j1 ^ s), i2 = !(j2 ^ s);
        int32_t off24 = sign_extend(s << 24 | i1 << 23 | i2 << 22 | (hw1 & 0x3ff) << 12 |
                                        (hw2 & 0x7ff) << 1, 25);
        unsigned cond = (hw1 >> 6) & 15;
        if ((hw2 & 0x5000) == 0x1000) {               /* b.w */
            d.how = HOW_BRANCH;
            d.value = pc + (uint32_t)off24;
        } else if ((hw2 & 0x5000) == 0x5000) {        /* bl */
            d.how = HOW_CALL;
            d.value = (pc + (uint32_t)off24) | 1u;
        } else if ((hw2 & 0x5000) == 0x4000) {        /* blx: to ARM code */
            d.how = (hw2 & 1) ? HOW_REFUSE : HOW_CALL;
            d.value = aligned + (uint32_t)off24;
        } else if (cond < 14) {                       /* b<cond>.w */
            d.how = HOW_COND;
            d.value = pc + (uint32_t)sign_extend(s << 20 | j2 << 19 | j1 << 18 |
                                                     (hw1 & 0x3f) << 12 | (hw2 & 0x7ff) << 1,
                                                 21);
            d.test = 0xd001u | cond << 8;             /* the 16-bit b<cond>, to +2 */
        } else if (hw1 == 0xf3af && hw2 == 0x8000) {  /* nop.w */
            d.how = HOW_NOP;
        } else if ((hw1 == 0xf3af && (hw2 & 0xff00) == 0x8000) ||   /* hints */
                   ((hw1 & 0xffef) == 0xf3ef && (hw2 & 0xf000) == 0x8000 && rd != PC) || /* mrs */
                   ((hw1 & 0xffe0) == 0xf380 && (hw2 & 0xf000) == 0x8000 && rn != PC)) { /* msr */
            d.how = HOW_COPY;
        } else {
            d.how = HOW_REFUSE;                       /* udf.w, smc, eret, subs pc, lr... */
        }
    } else if ((hw1 & 0xff10) == 0xf900) {            /* SIMD element/structure load/store */
        if (rn == PC)
            d.how = HOW_REFUSE;
    } else if ((hw1 & 0xfe00) == 0xf800) {            /* load/store single */
        bool load = hw1 & 0x10;
        unsigned size = (hw1 >> 5) & 3;
        bool reg_offset = !(hw1 & 0x80) && (hw2 & 0x0fc0) == 0 && rn != PC;
        if (!load) {
            if (rn == PC || rt == PC || (reg_offset && rm == PC))
                d.how = HOW_REFUSE;
        } else if (rn == PC) {                        /* literal */
            uint32_t imm = hw2 & 0xfff;
            if (rt == PC || rt == SP || size == 3) {
                d.how = HOW_REFUSE;                   /* ldr pc, =x; pld/pli literal would be nops */
            } else {
                d.how = HOW_LOAD;
                d.rd = rt;
                d.value = (hw1 & 0x80) ? aligned + imm : aligned - imm;
                d.test = (hw1 & 0xfff0) | 0x80;       /* the imm12 form, base rt */
            }
        } else if (reg_offset && rm == PC) {
            d.how = HOW_REFUSE;
        } else if (rt == PC && size != 2) {
            d.how = HOW_COPY;                         /* pld/pli with a register base: hints */
        }
    } else if ((hw1 & 0xff80) == 0xfa00 && (hw2 & 0xf080) == 0xf080) {   /* sxt/uxt(a) */
        if (rd == PC || rm == PC)
            d.how = HOW_REFUSE;
    } else if ((hw1 & 0xff00) == 0xfa00 || (hw1 & 0xff00) == 0xfb00) {   /* dp register, mul */
        bool long_mul = (hw1 & 0xff80) == 0xfb80;
        if (rn == PC || rd == PC || rm == PC || (long_mul && rt == PC))
            d.how = HOW_REFUSE;
    } else if ((hw1 & 0xfc00) == 0xfc00) {            /* coprocessor (ldc2/stc2/mcr2...), SIMD */
        if ((hw1 & 0xfe00) == 0xfc00 && rn == PC)
            d.how = HOW_REFUSE;
    } else {
        d.how = HOW_REFUSE;
    }
    return d;
}

struct displace_plan thumb_displace(const uint8_t *code, size_t avail, uint32_t insn_addr,
                                    uint32_t slot_addr)
{
    return thumb_displace_to(code, avail, insn_addr, slot_addr, 0);
}

struct displace_plan thumb_displace_to(const uint8_t *code, size_t avail, uint32_t insn_addr,
                                       uint32_t slot_addr, uint32_t next_pc)
{
    if (avail < 2 || (insn_addr & 1) || (slot_addr & 3))
        return plan_of(DISPLACE_UNSUPPORTED, 2);
    uint32_t hw1 = (uint32_t)code[0] | (uint32_t)code[1] << 8;
    unsigned len = thumb_insn_len((uint16_t)hw1);
    if (avail < len)
        return plan_of(DISPLACE_UNSUPPORTED, len);
    uint32_t hw2 = len == 4 ? ((uint32_t)code[2] | (uint32_t)code[3] << 8) : 0;
    uint32_t pc = insn_addr + 4;
    uint32_t next = next_pc ? next_pc | 1u : (insn_addr + len) | 1u;
    struct decoded d = len == 4 ? decode32(hw1, hw2, pc) : decode16(hw1, pc);
    if (next_pc == THUMB_NEXT_INLINE) {
        /* Only what runs unchanged and falls through: the bytes alone. */
        struct displace_plan p = plan_of(d.how == HOW_COPY || d.how == HOW_NOP ? DISPLACE_OUT_OF_LINE
                                                                              : DISPLACE_UNSUPPORTED,
                                         len);
        if (d.how == HOW_COPY) {
            memcpy(p.slot_bytes, code, len);
            p.slot_len = len;
        }
        p.slot_entry = 1;
        return p;
    }

    if (d.how == HOW_REFUSE)
        return plan_of(DISPLACE_UNSUPPORTED, len);
    if (d.how == HOW_NOP)
        return emulate(len, next);
    if (d.how == HOW_BRANCH)
        return emulate(len, d.value);

    struct displace_plan p = plan_of(DISPLACE_OUT_OF_LINE, len);
    p.slot_entry = 1;
    struct emitter e;
    memset(&e, 0, sizeof(e));
    e.buf = p.slot_bytes;
    switch (d.how) {
    case HOW_COPY:
        emit16(&e, hw1);
        if (len == 4)
            emit16(&e, hw2);
        emit_jump(&e, next);
        break;
    case HOW_COND:
        /* test (2 bytes) skips the 4-byte jump to next when taken */
        emit16(&e, d.test);
        emit_jump(&e, next);
        emit_jump(&e, d.value | 1u);
        break;
    case HOW_CALL:
        emit_load(&e, 14, next);
        emit_jump(&e, d.value);
        break;
    case HOW_VALUE:
        emit_load(&e, d.rd, d.value);
        emit_jump(&e, next);
        break;
    case HOW_ADD_VALUE:
        emit_load(&e, IP, d.value);
        emit16(&e, 0x4400u | (d.rd & 8) << 4 | IP << 3 | (d.rd & 7));   /* add rd, ip */
        emit_jump(&e, next);
        break;
    case HOW_LOAD:
        emit_load(&e, d.rd, d.value);
        emit32(&e, d.test | d.rd, d.rd << 12);   /* ldr{b,h,sb,sh}.w rd, [rd] */
        emit_jump(&e, next);
        break;
    default:
        return plan_of(DISPLACE_UNSUPPORTED, len);
    }
    finish(&e, slot_addr);
    p.slot_len = e.len;
    return p;
}
