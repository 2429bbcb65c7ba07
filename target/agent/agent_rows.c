/* The unwind rows the agent unwinds with in the target (agent_abi.h,
 * struct agent_row), compiled by the tracer from the modules' CFI.  They
 * are learnt from the stacks the tracer itself unwinds from raw copies:
 * each frame's row goes into the shared table when the agent's form can
 * hold it, so the next call through the same frames is unwound in the
 * target and sends only its pcs.  The form holds exactly what the tracer's
 * unwinder would do at that pc (target/unwind/unwind.c on x86_64, i386,
 * aarch64 and arm, where the EHABI tables and Thumb prologues are read
 * where no CFI covers a pc: arm_step_form.c): CFA = rsp or rbp (aarch64: sp or x29) + offset, return address and saved rbp at CFA offsets, and
 * the pcs where it stops (no CFI, outermost frame).  Anything else
 * (expressions, signal frames, other registers) stays with the tracer. */
#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"
#include "target/agent/agent_internal.h"
#include "target/dwarf/cfi.h"
#include "target/heap/stacks.h"
#include "target/tracer/modules.h"
#include "target/tracer/tracee.h"
#include "target/unwind/unwind.h"
#ifdef ARCH_UNWIND_EXIDX
#include "target/objects/object.h"
#include "target/unwind/arm_step_form.h"
#endif

/* The frame pointer the rows follow: the psABI's (rbp, x29), on arm r7,
 * Thumb-2's (Debian's armhf code is Thumb-2; an ARM-code frame on r11 is
 * left to the tracer). */
#ifdef ARCH_AGENT_ROW_FP
#define ROW_FP ARCH_AGENT_ROW_FP
#else
#define ROW_FP ARCH_DWARF_FP
#endif

static struct agent_row *rows_of(struct agent_engine *a)
{
    return (struct agent_row *)(a->map + AGENT_ROWS_OFF);
}

bool agent_breg_expr(const uint8_t *e, size_t len, bool deref, unsigned *reg, int32_t *off)
{
    if (!e || len < 2 || e[0] < 0x70 || e[0] > 0x8f) /* DW_OP_breg0..31 */
        return false;
    *reg = e[0] - 0x70u;
    if (*reg != ARCH_DWARF_SP && *reg != ROW_FP)
        return false;
    int64_t v = 0;
    unsigned shift = 0;
    size_t i = 1;
    uint8_t b;
    do { /* SLEB128, at most 4 bytes: offsets here are small */
        if (i >= len || shift > 21)
            return false;
        b = e[i++];
        v |= (int64_t)(b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    if (b & 0x40)
        v -= (int64_t)1 << shift;
    *off = (int32_t)v;
    if (deref)
        return i + 1 == len && e[i] == 0x06; /* DW_OP_deref */
    return i == len;
}

#ifdef ARCH_UNWIND_EXIDX
/* arm: where no CFI covers a pc, the unwinder's EHABI or prologue step
 * (target/unwind/arm_step_form.c) in the agent's form. */
static struct exidx_table *rows_find_exidx(void *ctx, uint64_t pc, uint64_t *bias)
{
    struct module *m = module_find(((struct tracee *)ctx)->modules, pc);
    if (!m)
        return NULL;
    *bias = m->bias;
    return object_exidx(m->obj);
}

static size_t rows_func_code(void *ctx, uint64_t pc, uint64_t *start, uint8_t *code, size_t max)
{
    return module_func_code(((struct tracee *)ctx)->modules, pc, start, code, max);
}

static uint64_t compile_arm_row(struct tracee *t, uint64_t probe)
{
    struct unwind_lookup lookup = {.ctx = t, .find_exidx = rows_find_exidx, .func_code = rows_func_code};
    struct arm_step_form f = arm_step_form(&lookup, probe);
    if (f.kind == ARM_STEP_STOP)
        return AGENT_ROW_VAL(AGENT_ROW_STOP, 0, 0, 0, 0);
    if (f.kind == ARM_STEP_OUTERMOST)
        return AGENT_ROW_VAL(AGENT_ROW_OUTERMOST, 0, 0, 0, 0);
    if (f.kind != ARM_STEP_ROW || f.ra_off != (int8_t)f.ra_off ||
        (f.fp_saved && (f.fp_off != (int16_t)f.fp_off || (uint16_t)f.fp_off == AGENT_ROW_BP_SAME)))
        return 0;
    return AGENT_ROW_VAL(AGENT_ROW_STEP, f.cfa_from_fp, f.cfa_off,
                         f.fp_saved ? f.fp_off : (int16_t)AGENT_ROW_BP_SAME, f.ra_off);
}
#endif

/* 0 when the row cannot be said in the agent's form. */
static uint64_t compile_row(struct tracee *t, uint64_t probe)
{
#if defined(__x86_64__) || defined(__aarch64__) || defined(__i386__) || defined(__arm__)
    struct module *m = module_find(t->modules, probe);
#ifdef ARCH_HAS_SIGTRAMP
    /* Without CFI the tracer's unwinder may still step a signal frame by
     * its code (aarch64): only a pc with a row is learnt. */
    const uint64_t no_row = 0;
#else
    const uint64_t no_row = AGENT_ROW_VAL(AGENT_ROW_STOP, 0, 0, 0, 0);
#endif
    if (!m)
        return no_row;
    struct cfi_table *table = object_cfi(m->obj);
    const struct cfi_row *row = table ? cfi_lookup(table, probe - m->bias) : NULL;
#ifdef ARCH_UNWIND_EXIDX
    if (!row)
        return compile_arm_row(t, probe);
#endif
    if (!row)
        return no_row;
    if (row->ra_column != ARCH_DWARF_RA)
        return 0;
    const struct cfi_rule *ra = &row->regs[ARCH_DWARF_RA];
    if (ra->kind == CFI_RULE_UNDEFINED)
        return AGENT_ROW_VAL(AGENT_ROW_OUTERMOST, 0, 0, 0, 0);
    /* CFA = reg + offset, or (a realigned frame: i386's main) the word at
     * reg + offset */
    unsigned cfa_reg = row->cfa_reg;
    int32_t cfa_off = (int32_t)row->cfa_offset;
    bool deref = row->cfa_kind == CFI_CFA_EXPRESSION;
    if (deref ? !agent_breg_expr(row->cfa_expr, row->cfa_expr_len, true, &cfa_reg, &cfa_off)
              : row->cfa_kind != CFI_CFA_REG_OFFSET || row->cfa_offset != cfa_off)
        return 0;
    if (row->signal_frame || row->addr_size != ARCH_PTR_SIZE ||
        (cfa_reg != ARCH_DWARF_SP && cfa_reg != ROW_FP))
        return 0;
    if (ra->kind != CFI_RULE_OFFSET || ra->u.offset != (int8_t)ra->u.offset)
        return 0;
    uint8_t spk = row->regs[ARCH_DWARF_SP].kind;
    if (spk != CFI_RULE_UNSPECIFIED && spk != CFI_RULE_SAME_VALUE)
        return 0;
    const struct cfi_rule *bp = &row->regs[ROW_FP];
    int bp_off;
    unsigned bp_reg = 0;
    int32_t bp_expr_off = 0;
    if (bp->kind == CFI_RULE_UNSPECIFIED || bp->kind == CFI_RULE_SAME_VALUE)
        bp_off = (int16_t)AGENT_ROW_BP_SAME;
    else if (!deref && bp->kind == CFI_RULE_OFFSET && bp->u.offset == (int16_t)bp->u.offset &&
             (uint16_t)bp->u.offset != AGENT_ROW_BP_SAME)
        bp_off = (int)bp->u.offset;
    else if (deref && bp->kind == CFI_RULE_EXPRESSION &&
             agent_breg_expr(bp->u.expr, bp->expr_len, false, &bp_reg, &bp_expr_off) &&
             bp_reg == ROW_FP && bp_expr_off == (int16_t)bp_expr_off &&
             (uint16_t)bp_expr_off != AGENT_ROW_BP_SAME)
        bp_off = (int)bp_expr_off; /* saved at rbp + offset */
    else
        return 0;
    return AGENT_ROW_VAL(AGENT_ROW_STEP, cfa_reg == ROW_FP, cfa_off, bp_off, ra->u.offset) |
           (deref ? AGENT_ROW_CFA_DEREF : 0);
#else
    (void)t;
    (void)probe;
    return 0;
#endif
}

static void insert(struct agent_engine *a, uint64_t key, uint64_t val)
{
    struct agent_row *rows = rows_of(a);
    uint32_t h = agent_row_hash(key);
    for (uint32_t i = 0; i < 16; i++) {
        struct agent_row *r = &rows[(h + i) & (AGENT_ROWS - 1)];
        uint64_t k = __atomic_load_n(&r->key, __ATOMIC_RELAXED);
        if (k == key)
            return;
        if (k == 0) {
            r->val = val;
            __atomic_store_n(&r->key, key, __ATOMIC_RELEASE);
            a->rows++;
            return;
        }
    }
}

void agent_learn_rows(struct tracee *t, uint32_t stack_id)
{
    struct agent_engine *a = t->agent;
    unsigned n = 0;
    const uint64_t *pcs = stack_table_pcs(t->stacks, stack_id, &n);
    if (!pcs || a->rows >= AGENT_ROWS / 2)
        return;
    /* Frame 0 is the function's entry (an exact pc), the others return
     * addresses, looked up inside the call.  The frame after the last
     * says why the unwind stopped, when it stopped on its own. */
    for (unsigned i = 0; i < n; i++) {
#if ARCH_DWARF_RA != UNWIND_DWARF_PC
        /* arm, aarch64: frame 0 steps by the return-address register, no row */
        if (i == 0)
            continue;
#endif
        uint64_t probe = i == 0 ? pcs[0] : pcs[i] - 1;
        uint64_t val = compile_row(t, probe);
        if (!val)
            return; /* the agent would have to stop here: not learnt */
        insert(a, probe, val);
    }
}

/* A module as the rows knew it. */
struct agent_mod_sig {
    uint64_t start, end, inode;
};

static int sig_cmp(const void *x, const void *y)
{
    const struct agent_mod_sig *a = x, *b = y;
    return a->start < b->start ? -1 : a->start > b->start;
}

/* Is pc inside a module mapped the same way in both lists? */
static bool unchanged_at(const struct agent_mod_sig *old, size_t nold, const struct agent_mod_sig *cur,
                         size_t ncur, uint64_t pc)
{
    const struct agent_mod_sig *o = NULL, *c = NULL;
    for (size_t i = 0; i < nold && !o; i++)
        if (pc >= old[i].start && pc < old[i].end)
            o = &old[i];
    for (size_t i = 0; i < ncur && !c; i++)
        if (pc >= cur[i].start && pc < cur[i].end)
            c = &cur[i];
    return o && c && o->start == c->start && o->end == c->end && o->inode == c->inode;
}

/* The module map was read again (a rendezvous): a row stays true while the
 * module its pc lies in is mapped as it was; every other row goes (a
 * module gone, or one mapped where a pc had none).  The agent reads the
 * table meanwhile: rows_gen is odd while rows are removed, and an unwind
 * that saw it change is not used (agent_x86_64.c). */
void agent_rows_clear(struct tracee *t)
{
    struct agent_engine *a = t->agent;
    if (!a)
        return;
    size_t ncur = t->modules->count;
    struct agent_mod_sig *cur = xcalloc(ncur ? ncur : 1, sizeof(*cur));
    for (size_t i = 0; i < ncur; i++) {
        const struct module *m = t->modules->mods[i];
        cur[i] = (struct agent_mod_sig){m->start, m->end, m->inode};
    }
    qsort(cur, ncur, sizeof(*cur), sig_cmp);
    bool same = ncur == a->nmods && (ncur == 0 || memcmp(cur, a->mods, ncur * sizeof(*cur)) == 0);
    if (same || !a->rows) {
        free(a->mods);
        a->mods = cur;
        a->nmods = ncur;
        return;
    }
    struct agent_row *rows = rows_of(a);
    struct agent_ctl *ctl = (struct agent_ctl *)a->map;
    struct agent_row *keep = xcalloc(a->rows, sizeof(*keep));
    uint32_t nkeep = 0;
    for (uint32_t i = 0; i < AGENT_ROWS && nkeep < a->rows; i++)
        if (rows[i].key && unchanged_at(a->mods, a->nmods, cur, ncur, rows[i].key))
            keep[nkeep++] = rows[i];
    uint64_t gen = __atomic_load_n(&ctl->rows_gen, __ATOMIC_RELAXED);
    __atomic_store_n(&ctl->rows_gen, gen | 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    for (uint32_t i = 0; i < AGENT_ROWS; i++) {
        __atomic_store_n(&rows[i].key, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&rows[i].val, 0, __ATOMIC_RELAXED);
    }
    a->rows = 0;
    for (uint32_t i = 0; i < nkeep; i++)
        insert(a, keep[i].key, keep[i].val);
    __atomic_store_n(&ctl->rows_gen, (gen | 1) + 1, __ATOMIC_RELEASE);
    free(keep);
    free(a->mods);
    a->mods = cur;
    a->nmods = ncur;
}

void agent_rows_copy(struct agent_engine *dst, const struct agent_engine *src)
{
    memcpy(dst->map + AGENT_ROWS_OFF, src->map + AGENT_ROWS_OFF,
           (size_t)AGENT_ROWS * sizeof(struct agent_row));
    dst->rows = src->rows;
    free(dst->mods);
    dst->mods = NULL;
    dst->nmods = 0;
    if (src->nmods) {
        dst->mods = xreallocarray(NULL, src->nmods, sizeof(*src->mods));
        memcpy(dst->mods, src->mods, src->nmods * sizeof(*src->mods));
        dst->nmods = src->nmods;
    }
}
