/* The arm unwinder's step as offsets (see arm_step_form.h). */
#include "target/unwind/arm_step_form.h"

#include <string.h>

#include "target/unwind/arm_prologue.h"

/* Symbolic values: sp and r7 (the frame pointer of Thumb code) as bases far apart, lr as a value no read
 * returns, and every word read from the stack as MARK + the read's index
 * (its address kept). */
#define SP_BASE 0x40000000u
#define FP_BASE 0x20000000u
#define BASE_SPAN 0x01000000u
#define LR_VALUE 0x0e0e0e0eu
#define MARK 0xc0000000u
#define READS_MAX 64u

struct reads {
    uint32_t addr[READS_MAX];
    unsigned n;
    bool big_endian;
};

static int sym_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    struct reads *r = ctx;
    if (len != 4 || r->n == READS_MAX)
        return -1;
    uint32_t v = MARK | r->n;
    r->addr[r->n++] = (uint32_t)addr;
    uint8_t *b = buf;
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (r->big_endian ? 8 * (3 - i) : 8 * i));
    return 0;
}

/* Which base a symbolic address is from: 1 sp, 2 r7, 0 neither. */
static int base_of(uint32_t a)
{
    if (a - (SP_BASE - BASE_SPAN) < 2 * BASE_SPAN)
        return 1;
    if (a - (FP_BASE - BASE_SPAN) < 2 * BASE_SPAN)
        return 2;
    return 0;
}

static bool is_mark(uint32_t v, const struct reads *r) { return (v & ~(READS_MAX - 1)) == MARK && (v & (READS_MAX - 1)) < r->n; }

static struct arm_step_form from_opcodes(const uint8_t *ops, size_t n, bool big_endian)
{
    struct arm_step_form f = {.kind = ARM_STEP_NONE};
    struct reads r = {.n = 0, .big_endian = big_endian};
    struct exidx_regs regs;
    memset(&regs, 0, sizeof(regs));
    regs.r[13] = SP_BASE;
    regs.r[7] = FP_BASE;
    regs.r[14] = LR_VALUE;
    /* (r11 unknown: a "vsp = r11" frame, ARM code's, is the tracer's) */
    regs.valid = 1u << 13 | 1u << 7 | 1u << 14;
    bool full = false;
    if (exidx_execute(ops, n, &regs, sym_read, &r, big_endian, &full) != 0 || full)
        return f;
    uint32_t cfa = regs.r[13];
    int base = base_of(cfa);
    if (!base || is_mark(cfa, &r))
        return f;
    if (!is_mark(regs.r[15], &r))
        return f; /* the return address left in lr: only frame 0 may trust it */
    uint32_t ra_at = r.addr[regs.r[15] & (READS_MAX - 1)];
    if (base_of(ra_at) != base)
        return f;
    f.cfa_from_fp = base == 2;
    f.cfa_off = (int32_t)(cfa - (base == 2 ? FP_BASE : SP_BASE));
    f.ra_off = (int32_t)(ra_at - cfa);
    if (regs.r[7] != FP_BASE) {
        if (!is_mark(regs.r[7], &r))
            return f;
        uint32_t fp_at = r.addr[regs.r[7] & (READS_MAX - 1)];
        if (base_of(fp_at) != base)
            return f;
        f.fp_saved = true;
        f.fp_off = (int32_t)(fp_at - cfa);
    }
    f.kind = ARM_STEP_ROW;
    return f;
}

/* unwind.c's prologue_step, not at an exact pc. */
static struct arm_step_form from_prologue(const struct unwind_lookup *lookup, uint64_t probe)
{
    struct arm_step_form f = {.kind = ARM_STEP_NONE};
    uint8_t code[ARM_PROLOGUE_MAX];
    uint64_t start = 0, pc = probe + 1;
    size_t len = lookup->func_code ? lookup->func_code(lookup->ctx, probe, &start, code, sizeof(code)) : 0;
    struct arm_prologue pro;
    if (!len || pc < start ||
        arm_thumb_prologue(code, (size_t)(pc - start) < len ? (size_t)(pc - start) : len, &pro) < 0 ||
        pro.saved[14] < 0)
        return f;
    f.kind = ARM_STEP_ROW;
    f.cfa_off = (int32_t)pro.frame_size;
    f.ra_off = pro.saved[14] - (int32_t)pro.frame_size;
    if (pro.saved[7] >= 0) {
        f.fp_saved = true;
        f.fp_off = pro.saved[7] - (int32_t)pro.frame_size;
    }
    return f;
}

struct arm_step_form arm_step_form(const struct unwind_lookup *lookup, uint64_t probe)
{
    struct arm_step_form f = {.kind = ARM_STEP_STOP};
    uint64_t bias = 0;
    struct exidx_table *x = lookup->find_exidx ? lookup->find_exidx(lookup->ctx, probe, &bias) : NULL;
    uint8_t ops[EXIDX_OPS_MAX];
    size_t n = 0;
    uint64_t fn = 0;
    enum exidx_find_result r = x ? exidx_find(x, probe - bias, ops, &n, &fn) : EXIDX_NONE;
    if (r == EXIDX_FOUND)
        return from_opcodes(ops, n, exidx_big_endian(x));
    struct arm_step_form p = from_prologue(lookup, probe);
    if (p.kind == ARM_STEP_ROW)
        return p;
    /* (a prologue that moves sp in a way not followed, or a return address
     * never pushed: the unwinder ends there too) */
    f.kind = r == EXIDX_CANTUNWIND ? ARM_STEP_OUTERMOST : ARM_STEP_STOP;
    return f;
}
