/* Thumb prologue analysis (see arm_prologue.h). */
#include "target/unwind/arm_prologue.h"

#include <string.h>

/* The constant of a T32 modified immediate (i:imm3:imm8). */
static uint32_t thumb_expand_imm(uint32_t imm12)
{
    uint32_t b = imm12 & 0xff;
    if ((imm12 >> 10) == 0) {
        switch ((imm12 >> 8) & 3) {
        case 0: return b;
        case 1: return b << 16 | b;
        case 2: return b << 24 | b << 8;
        default: return b << 24 | b << 16 | b << 8 | b;
        }
    }
    uint32_t v = 0x80 | (imm12 & 0x7f);
    unsigned rot = (imm12 >> 7) & 31;
    return (v >> rot) | (v << ((32 - rot) & 31));
}

/* Registers of mask pushed at the new sp, lowest register lowest. */
static void push(struct arm_prologue *p, uint32_t mask)
{
    unsigned n = (unsigned)__builtin_popcount(mask & 0xffff);
    for (unsigned r = 0; r < 16; r++)
        if (p->saved[r] >= 0)
            p->saved[r] += (int32_t)(4 * n);
    unsigned k = 0;
    for (unsigned r = 0; r < 16; r++)
        if (mask & (1u << r))
            p->saved[r] = (int32_t)(4 * k++);
    p->frame_size += 4 * n;
}

static void grow(struct arm_prologue *p, uint32_t bytes)
{
    for (unsigned r = 0; r < 16; r++)
        if (p->saved[r] >= 0)
            p->saved[r] += (int32_t)bytes;
    p->frame_size += bytes;
}

static bool is_branch16(uint32_t hw)
{
    return (hw & 0xf000) == 0xd000 ||   /* b<cond>, svc, udf */
           (hw & 0xf800) == 0xe000 ||   /* b */
           (hw & 0xff00) == 0x4700 ||   /* bx, blx */
           (hw & 0xf500) == 0xb100 ||   /* cbz, cbnz */
           (hw & 0xfe00) == 0xbc00;     /* pop */
}

int arm_thumb_prologue(const uint8_t *code, size_t len, struct arm_prologue *out)
{
    memset(out, 0, sizeof(*out));
    for (unsigned r = 0; r < 16; r++)
        out->saved[r] = -1;
    if (len > ARM_PROLOGUE_MAX)
        len = ARM_PROLOGUE_MAX;
    size_t i = 0;
    while (i + 2 <= len) {
        uint32_t hw = (uint32_t)code[i] | (uint32_t)code[i + 1] << 8;
        unsigned top = hw >> 11;
        if (top == 0x1d || top == 0x1e || top == 0x1f) {
            if (i + 4 > len)
                break;
            uint32_t hw2 = (uint32_t)code[i + 2] | (uint32_t)code[i + 3] << 8;
            i += 4;
            uint32_t imm12 = ((hw >> 10) & 1) << 11 | ((hw2 >> 12) & 7) << 8 | (hw2 & 0xff);
            if (hw == 0xe92d) {                                   /* push.w */
                if (hw2 & 0xa000)
                    return -1;                                    /* sp or pc in the list */
                push(out, hw2);
            } else if (hw == 0xf84d && (hw2 & 0x0fff) == 0x0d04) { /* str rt, [sp, #-4]! */
                push(out, 1u << (hw2 >> 12));
            } else if ((hw & 0xfbff) == 0xf1ad && (hw2 & 0x8f00) == 0x0d00) {   /* sub.w sp */
                grow(out, thumb_expand_imm(imm12));
            } else if ((hw & 0xfbff) == 0xf2ad && (hw2 & 0x8f00) == 0x0d00) {   /* subw sp */
                grow(out, imm12);
            } else if ((hw & 0xffbf) == 0xed2d && (hw2 & 0x0e00) == 0x0a00) {   /* vpush */
                grow(out, (hw2 & 0xff) * 4);
            } else if ((hw & 0xf800) == 0xf000 && (hw2 & 0x8000)) {  /* b/bl/blx, misc */
                if (out->frame_size)
                    break;
            } else if (hw == 0xe8bd ||                            /* pop.w */
                       (((hw & 0xfbe0) == 0xf1a0 || (hw & 0xfbe0) == 0xf100 ||
                         (hw & 0xfbe0) == 0xf2a0 || (hw & 0xfbe0) == 0xf200) &&
                        (hw2 & 0x0f00) == 0x0d00)) {
                return -1;                                        /* sp moved otherwise */
            }
            continue;
        }
        i += 2;
        if ((hw & 0xfe00) == 0xb400) {                            /* push {..., lr} */
            push(out, (hw & 0xff) | ((hw & 0x100) ? 1u << 14 : 0));
        } else if ((hw & 0xff80) == 0xb080) {                     /* sub sp, #imm */
            grow(out, (hw & 0x7f) * 4);
        } else if ((hw & 0xff80) == 0xb000 || (hw & 0xff87) == 0x4685 ||   /* add sp; mov sp */
                   (hw & 0xff87) == 0x4485) {
            return -1;
        } else if (is_branch16(hw)) {
            if (out->frame_size || (hw & 0xfe00) == 0xbc00 || (hw & 0xff00) == 0x4700)
                break;
        }
    }
    return 0;
}
