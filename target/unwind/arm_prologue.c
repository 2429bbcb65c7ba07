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

/* No real frame is near 16 MiB: past that the code is not a prologue (and
 * the offsets would overflow). */
#define FRAME_LIMIT (1u << 24)

static bool grow(struct arm_prologue *p, uint32_t bytes)
{
    if (bytes > FRAME_LIMIT || p->frame_size > FRAME_LIMIT)
        return false;
    for (unsigned r = 0; r < 16; r++)
        if (p->saved[r] >= 0)
            p->saved[r] += (int32_t)bytes;
    p->frame_size += bytes;
    return true;
}

/* Branch targets inside the scanned bytes carry the state of the path that
 * branches there: code after a return or an unconditional branch (a
 * shrink-wrapped function's early `bx lr` before its push) is reached only
 * through them.  One slot per halfword. */
#define SLOTS (ARM_PROLOGUE_MAX / 2 + 1)

struct scan {
    struct arm_prologue at[SLOTS]; /* the state a branch carries to slot k */
    uint8_t mark[SLOTS];           /* 0: none; 1: a state; 2: states that differ */
};

/* A branch at offset at by off bytes.  Only branches met before anything
 * was pushed get here (the scan ends at the first one after), so the state
 * is still the entry's; a backward branch (a loop) goes to code where it
 * was the entry's too.  A forward one carries it to its target. */
static void carry(struct scan *sc, const struct arm_prologue *st, size_t at, int32_t off, size_t len)
{
    int64_t target = (int64_t)at + 4 + off;
    if (target <= (int64_t)at || target > (int64_t)len || (target & 1))
        return; /* a loop, or beyond the pc: no path to the pc through it here */
    size_t k = (size_t)target / 2;
    if (sc->mark[k] == 0) {
        sc->at[k] = *st;
        sc->mark[k] = 1;
    } else if (memcmp(&sc->at[k], st, sizeof(*st)) != 0) {
        sc->mark[k] = 2;
    }
}

static int32_t sext(uint32_t v, unsigned bits)
{
    uint32_t m = 1u << (bits - 1);
    return (int32_t)((v ^ m) - m);
}

int arm_thumb_prologue(const uint8_t *code, size_t len, struct arm_prologue *out)
{
    memset(out, 0, sizeof(*out));
    for (unsigned r = 0; r < 16; r++)
        out->saved[r] = -1;
    if (len > ARM_PROLOGUE_MAX)
        len = ARM_PROLOGUE_MAX;
    struct scan sc;
    memset(sc.mark, 0, sizeof(sc.mark));
    bool live = true;      /* the code at i is reached by falling through */
    unsigned in_it = 0;    /* instructions left in an IT block */
    size_t i = 0;
    while (i + 2 <= len) {
        /* Where paths meet they must agree; code reached by no known path
         * (after a return, until a branch target) is skipped. */
        if (!(i & 1) && sc.mark[i / 2]) {
            if (sc.mark[i / 2] == 2 || (live && memcmp(&sc.at[i / 2], out, sizeof(*out)) != 0))
                return -1;
            *out = sc.at[i / 2];
            live = true;
        }
        if (!live) {
            i += 2; /* every halfword: a branch target is one */
            continue;
        }
        uint32_t hw = (uint32_t)code[i] | (uint32_t)code[i + 1] << 8;
        unsigned top = hw >> 11;
        bool cond = in_it > 0;
        if (in_it)
            in_it--;
        if (top == 0x1d || top == 0x1e || top == 0x1f) {
            if (i + 4 > len)
                break;
            uint32_t hw2 = (uint32_t)code[i + 2] | (uint32_t)code[i + 3] << 8;
            size_t at = i;
            i += 4;
            uint32_t imm12 = ((hw >> 10) & 1) << 11 | ((hw2 >> 12) & 7) << 8 | (hw2 & 0xff);
            /* ldrd/strd, and single loads and stores (T4), that write sp back */
            bool strd_push = hw == 0xe96d;                        /* strd rt, rt2, [sp, #-n]! */
            bool str_push = hw == 0xf84d && (hw2 & 0x0fff) == 0x0d04;
            bool pop_pc = hw == 0xf85d && hw2 == 0xfb04;           /* ldr pc, [sp], #4 */
            bool writeback = ((hw & 0xfe4f) == 0xe84d && (hw & 0x0020)) ||
                             ((hw & 0xff8f) == 0xf80d && (hw2 & 0x0900) == 0x0900);
            if (writeback && !strd_push && !str_push && !pop_pc)
                return -1;                                        /* sp moved otherwise */
            bool moves_sp = hw == 0xe92d || strd_push || str_push ||
                            ((hw & 0xfbff) == 0xf1ad && (hw2 & 0x8f00) == 0x0d00) ||
                            ((hw & 0xfbff) == 0xf2ad && (hw2 & 0x8f00) == 0x0d00) ||
                            ((hw & 0xffbf) == 0xed2d && (hw2 & 0x0e00) == 0x0a00);
            if (moves_sp && cond)
                return -1;                                        /* conditional: unknown */
            if (hw == 0xe92d) {                                   /* push.w */
                if (hw2 & 0xa000)
                    return -1;                                    /* sp or pc in the list */
                push(out, hw2);
            } else if (str_push) {                                /* str rt, [sp, #-4]! */
                push(out, 1u << (hw2 >> 12));
            } else if (strd_push) {
                unsigned rt = hw2 >> 12, rt2 = (hw2 >> 8) & 15;
                if (rt == rt2 || rt == 13 || rt == 15 || rt2 == 13 || rt2 == 15)
                    return -1;
                if (!grow(out, (hw2 & 0xff) * 4))
                    return -1;
                out->saved[rt] = 0;
                out->saved[rt2] = 4;
            } else if ((hw & 0xfbff) == 0xf1ad && (hw2 & 0x8f00) == 0x0d00) {   /* sub.w sp */
                if (!grow(out, thumb_expand_imm(imm12)))
                    return -1;
            } else if ((hw & 0xfbff) == 0xf2ad && (hw2 & 0x8f00) == 0x0d00) {   /* subw sp */
                if (!grow(out, imm12))
                    return -1;
            } else if ((hw & 0xffbf) == 0xed2d && (hw2 & 0x0e00) == 0x0a00) {   /* vpush */
                if (!grow(out, (hw2 & 0xff) * 4))
                    return -1;
            } else if ((hw & 0xf800) == 0xf000 && (hw2 & 0x8000)) {  /* b/bl/blx, misc */
                if (out->frame_size)
                    break;
                bool b_cond = (hw2 & 0xd000) == 0x8000 && ((hw >> 7) & 7) != 7;
                bool b_always = (hw2 & 0xd000) == 0x9000;
                if (b_cond || b_always) {
                    uint32_t s = (hw >> 10) & 1, j1 = (hw2 >> 13) & 1, j2 = (hw2 >> 11) & 1;
                    int32_t off;
                    if (b_cond)
                        off = sext(s << 20 | j2 << 19 | j1 << 18 | (hw & 0x3f) << 12 |
                                   (hw2 & 0x7ff) << 1, 21);
                    else
                        off = sext(s << 24 | (~(j1 ^ s) & 1) << 23 | (~(j2 ^ s) & 1) << 22 |
                                   (hw & 0x3ff) << 12 | (hw2 & 0x7ff) << 1, 25);
                    carry(&sc, out, at, off, len);
                    if (b_always && !cond)
                        live = false;
                }
            } else if (pop_pc) {
                if (!cond)
                    live = false;
            } else if (hw == 0xe8bd ||                            /* pop.w */
                       (((hw & 0xfbe0) == 0xf1a0 || (hw & 0xfbe0) == 0xf100 ||
                         (hw & 0xfbe0) == 0xf2a0 || (hw & 0xfbe0) == 0xf200) &&
                        (hw2 & 0x0f00) == 0x0d00)) {
                return -1;                                        /* sp moved otherwise */
            }
            continue;
        }
        size_t at = i;
        i += 2;
        bool moves_sp = (hw & 0xfe00) == 0xb400 || (hw & 0xff00) == 0xb000 ||
                        (hw & 0xff87) == 0x4685 || (hw & 0xff87) == 0x4485;
        if (moves_sp && cond)
            return -1;
        if ((hw & 0xfe00) == 0xb400) {                            /* push {..., lr} */
            push(out, (hw & 0xff) | ((hw & 0x100) ? 1u << 14 : 0));
        } else if ((hw & 0xff80) == 0xb080) {                     /* sub sp, #imm */
            if (!grow(out, (hw & 0x7f) * 4))
                return -1;
        } else if ((hw & 0xff80) == 0xb000 || (hw & 0xff87) == 0x4685 ||   /* add sp; mov sp */
                   (hw & 0xff87) == 0x4485) {
            return -1;
        } else if ((hw & 0xff00) == 0xbf00 && (hw & 0xf)) {       /* it */
            in_it = 4 - (unsigned)__builtin_ctz(hw & 0xf);
        } else if ((hw & 0xfe00) == 0xbc00) {                     /* pop */
            if (!(hw & 0x100) || out->frame_size)
                break;
            if (!cond)
                live = false;                                     /* pop {..., pc}: a return */
        } else if ((hw & 0xff80) == 0x4700) {                     /* bx rm */
            if (out->frame_size)
                break;
            if (!cond)
                live = false;
        } else if ((hw & 0xff80) == 0x4780) {                     /* blx rm */
            break;
        } else if ((hw & 0xf000) == 0xd000 && ((hw >> 8) & 0xf) < 0xe) {   /* b<cond> */
            if (out->frame_size)
                break;
            carry(&sc, out, at, sext(hw & 0xff, 8) * 2, len);
        } else if ((hw & 0xf800) == 0xe000) {                     /* b */
            if (out->frame_size)
                break;
            carry(&sc, out, at, sext(hw & 0x7ff, 11) * 2, len);
            if (!cond)
                live = false;
        } else if ((hw & 0xf500) == 0xb100) {                     /* cbz, cbnz */
            if (out->frame_size)
                break;
            carry(&sc, out, at, (int32_t)(((hw >> 9) & 1) << 6 | ((hw >> 3) & 0x1f) << 1), len);
        } else if ((hw & 0xf000) == 0xd000) {                     /* svc, udf */
            if (out->frame_size)
                break;
        }
    }
    /* The pc itself may be a branch target; reached by no path seen, where
     * it came from is not known. */
    if (i == len && !(i & 1) && sc.mark[i / 2]) {
        if (sc.mark[i / 2] == 2 || (live && memcmp(&sc.at[i / 2], out, sizeof(*out)) != 0))
            return -1;
        *out = sc.at[i / 2];
        live = true;
    }
    return live ? 0 : -1;
}
