/* Displaced execution of one A32 (ARM-state) instruction.
 *
 * An instruction that does not read the pc runs unchanged in the slot,
 * followed by "ldr pc, [pc, #-4]; .word next" (a load into pc works at any
 * distance and interworks).  B is emulated; BL, conditional branches and
 * pc-relative word/byte loads (ldr rt, [pc, #imm]) are rewritten with
 * literal words.  Any other use of r15 as an operand is refused (the engine
 * then does not intercept that function). */
#include "arch/arm_insn.h"

#include <string.h>

#define COND_AL 0xeu
#define LDR_PC_LIT_M4 0xe51ff004u   /* ldr pc, [pc, #-4]: the next word */

struct words {
    uint8_t *buf;
    unsigned len;
};

static void put(struct words *w, uint32_t v)
{
    if (w->len + 4 > ARCH_DISPLACE_SLOT_MAX)
        return;   /* sequences below are sized to fit */
    for (int i = 0; i < 4; i++)
        w->buf[w->len + i] = (uint8_t)(v >> (8 * i));
    w->len += 4;
}

static struct displace_plan plan_of(enum displace_kind kind)
{
    struct displace_plan p;
    memset(&p, 0, sizeof(p));
    p.kind = kind;
    p.insn_len = 4;
    return p;
}

static bool field_is_pc(uint32_t insn, unsigned shift) { return ((insn >> shift) & 15) == 15; }

/* Does the instruction name r15 anywhere we would copy it? */
static bool reads_or_writes_pc(uint32_t insn)
{
    switch ((insn >> 25) & 7) {
    case 1:   /* data processing, immediate (movw/movt: imm4 where Rn is) */
        if ((insn & 0x0fb00000u) == 0x03000000u)
            return field_is_pc(insn, 12);
        return field_is_pc(insn, 16) || field_is_pc(insn, 12);
    case 2:   /* load/store, immediate offset */
        return field_is_pc(insn, 16) || field_is_pc(insn, 12);
    case 4:   /* ldm/stm: a pop into pc just leaves; a push of pc stores the slot */
        return field_is_pc(insn, 16) || (!(insn & (1u << 20)) && (insn & (1u << 15)));
    case 6:   /* coprocessor/VFP load/store (vpush, vldr): Rn only */
        return field_is_pc(insn, 16);
    case 7:   /* svc, coprocessor data/register transfers */
        if (insn & (1u << 24))
            return false;
        return (insn & (1u << 4)) && field_is_pc(insn, 12);
    default:  /* data processing and misc, register operands; register-offset load/store */
        return field_is_pc(insn, 16) || field_is_pc(insn, 12) || field_is_pc(insn, 8) ||
               field_is_pc(insn, 0);
    }
}

struct displace_plan arm_displace(uint32_t insn, uint32_t insn_addr, uint32_t slot_addr)
{
    (void)slot_addr;   /* every sequence is position independent */
    uint32_t cond = insn >> 28;
    uint32_t next = insn_addr + 4;
    uint32_t pc_value = insn_addr + 8;   /* what the instruction reads as pc */
    struct displace_plan p = plan_of(DISPLACE_OUT_OF_LINE);
    struct words w = {.buf = p.slot_bytes, .len = 0};

    if (cond == 0xf) {
        /* Unconditional space: pld/pli are hints; blx imm and the rest are
         * not handled. */
        if ((insn & 0xfd70f000u) == 0xf550f000u || (insn & 0xfd70f000u) == 0xf450f000u) {
            p = plan_of(DISPLACE_EMULATE);
            p.new_pc = next;
            return p;
        }
        return plan_of(DISPLACE_UNSUPPORTED);
    }

    if (((insn >> 25) & 7) == 5) {   /* b, bl */
        int32_t off = (int32_t)(insn << 8) >> 6;   /* imm24 * 4, signed */
        uint32_t target = pc_value + (uint32_t)off;
        bool link = insn & (1u << 24);
        if (!link && cond == COND_AL) {
            p = plan_of(DISPLACE_EMULATE);
            p.new_pc = target;
            return p;
        }
        if (cond != COND_AL) {
            put(&w, (cond << 28) | 0x0a000001u);   /* b<cond> to the taken path (+12) */
            put(&w, LDR_PC_LIT_M4);                /* not taken */
            put(&w, next);
        }
        if (link) {
            put(&w, 0xe59fe000u);                  /* ldr lr, [pc, #0]: the word after next */
            put(&w, 0xe59ff000u);                  /* ldr pc, [pc, #0] */
            put(&w, next);
            put(&w, target);
        } else {
            put(&w, LDR_PC_LIT_M4);
            put(&w, target);
        }
        p.slot_len = w.len;
        return p;
    }

    bool load_imm = ((insn >> 25) & 7) == 2 && (insn & (1u << 20));
    if (load_imm && field_is_pc(insn, 16)) {   /* ldr{b} rt, [pc, #+-imm12] */
        unsigned rt = (insn >> 12) & 15;
        bool pre_no_wb = (insn & (1u << 24)) && !(insn & (1u << 21));
        if (rt == 15 || !pre_no_wb)
            return plan_of(DISPLACE_UNSUPPORTED);
        uint32_t imm = insn & 0xfff;
        uint32_t addr = (insn & (1u << 23)) ? pc_value + imm : pc_value - imm;
        put(&w, (cond << 28) | 0x059f0004u | rt << 12);                    /* ldr rt, [pc, #4] */
        put(&w, (insn & 0xf0400000u) | 0x05900000u | rt << 16 | rt << 12); /* ldr{b} rt, [rt] */
        put(&w, 0xe59ff000u);                                              /* ldr pc, [pc, #0] */
        put(&w, addr);
        put(&w, next);
        p.slot_len = w.len;
        return p;
    }

    bool bx_reg = (insn & 0x0fffffd0u) == 0x012fff10u;   /* bx/blx rm */
    if (bx_reg ? field_is_pc(insn, 0) : reads_or_writes_pc(insn))
        return plan_of(DISPLACE_UNSUPPORTED);
    put(&w, insn);
    put(&w, LDR_PC_LIT_M4);
    put(&w, next);
    p.slot_len = w.len;
    return p;
}
