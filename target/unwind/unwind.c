/* Frame-by-frame unwinding with CFI rows. */
#include "target/unwind/unwind.h"
#include "target/dwarf/expr.h"
#include "target/unwind/arm_prologue.h"

#include <string.h>

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    const struct unwind_memory *mem = ctx;
    return mem->read(mem->ctx, addr, buf, len);
}

static bool reg_known(const struct unwind_regs *r, uint32_t n)
{
    return n < ARCH_DWARF_NREGS && (r->valid & (1ull << n));
}

#ifdef ARCH_UNWIND_EXIDX
static int exidx_run(struct unwind_regs *regs, const uint8_t *ops, size_t n, bool big_endian,
                     const struct unwind_memory *mem, uint64_t *cfa_out, bool *signal_frame)
{
    struct exidx_regs er = {.valid = 0};
    for (unsigned i = 0; i < 16; i++) {
        er.r[i] = (uint32_t)regs->r[i];
        if (reg_known(regs, i))
            er.valid |= 1u << i;
    }
    bool full = false;
    if (exidx_execute(ops, n, &er, mem_read, (void *)mem, big_endian, &full) != 0)
        return -1;
    struct unwind_regs next = {.valid = 0};
    for (unsigned i = 0; i < 16; i++) {
        next.r[i] = er.r[i];
        if (er.valid & (1u << i))
            next.valid |= 1ull << i;
    }
    next.r[UNWIND_DWARF_PC] = ARCH_RA_TO_PC(next.r[UNWIND_DWARF_PC]);   /* Thumb bit */
    *regs = next;
    *cfa_out = er.r[13];
    *signal_frame = full;
    return 0;
}

/* arm, last resort: a Thumb function's prologue, read from its code (most
 * of Debian's armhf libc has no unwind tables).  The caller's registers
 * come back from where the prologue pushed them; a return address that was
 * never pushed is still in lr, which only the frame the thread stopped in
 * (or one a signal interrupted) can trust. */
static int prologue_step(struct unwind_regs *regs, uint64_t probe, bool pc_is_exact,
                         const struct unwind_memory *mem, const struct unwind_lookup *lookup,
                         uint64_t *cfa_out)
{
    uint8_t code[ARM_PROLOGUE_MAX];
    uint64_t start = 0, pc = regs->r[UNWIND_DWARF_PC];
    size_t len = lookup->func_code ? lookup->func_code(lookup->ctx, probe, &start, code,
                                                       sizeof(code))
                                   : 0;
    if (!len || pc < start || !reg_known(regs, ARCH_DWARF_SP))
        return -1;
    struct arm_prologue pro;
    if (arm_thumb_prologue(code, (size_t)(pc - start) < len ? (size_t)(pc - start) : len, &pro) < 0)
        return -1;
    if (pro.saved[14] < 0 && !pc_is_exact)
        return -1;
    struct unwind_regs next = *regs;
    uint64_t sp = regs->r[ARCH_DWARF_SP];
    for (unsigned r = 0; r < 16; r++) {
        if (pro.saved[r] < 0)
            continue;
        uint32_t v;
        if (mem->read(mem->ctx, (sp + (uint64_t)pro.saved[r]) & 0xffffffffu, &v, 4) != 0)
            return -1;
        next.r[r] = v;
        next.valid |= 1ull << r;
    }
    next.r[ARCH_DWARF_SP] = (sp + pro.frame_size) & 0xffffffffu;
    if (!(next.valid & (1ull << 14)))
        return -1;
    next.r[UNWIND_DWARF_PC] = ARCH_RA_TO_PC(next.r[14]);
    next.valid |= 1ull << UNWIND_DWARF_PC;
    *cfa_out = next.r[ARCH_DWARF_SP];
    *regs = next;
    return 0;
}

/* arm: the EHABI opcodes of the function at probe.  The caller's sp is
 * where the opcodes leave the virtual sp (the CFA's role); a sequence that
 * pops sp and pc together is a signal frame's (glibc's restorer): its pc is
 * exact.  Where the tables say nothing (no entry, or the linker's
 * EXIDX_CANTUNWIND filler over code built without tables), the prologue;
 * where that fails too, a CANTUNWIND function is the outermost frame. */
static int exidx_step(struct unwind_regs *regs, uint64_t probe, bool pc_is_exact,
                      const struct unwind_memory *mem, const struct unwind_lookup *lookup,
                      uint64_t *cfa_out, bool *signal_frame)
{
    uint64_t bias = 0;
    struct exidx_table *x = lookup->find_exidx ? lookup->find_exidx(lookup->ctx, probe, &bias)
                                               : NULL;
    uint8_t ops[EXIDX_OPS_MAX];
    size_t n = 0;
    uint64_t fn = 0;
    enum exidx_find_result r = x ? exidx_find(x, probe - bias, ops, &n, &fn) : EXIDX_NONE;
    if (r == EXIDX_FOUND)
        return exidx_run(regs, ops, n, exidx_big_endian(x), mem, cfa_out, signal_frame);
    *signal_frame = false;
    if (prologue_step(regs, probe, pc_is_exact, mem, lookup, cfa_out) == 0)
        return 0;
    return r == EXIDX_CANTUNWIND ? 1 : -1;
}
#endif

#ifdef ARCH_HAS_SIGTRAMP
/* The kernel's signal return trampoline, known by its code where no CFI
 * describes it: the interrupted registers come back from the signal frame,
 * and the pc found there is exact. */
static int sigtramp_step(struct unwind_regs *regs, const struct unwind_memory *mem,
                         uint64_t *cfa_out, bool *signal_frame)
{
    uint8_t code[ARCH_SIGTRAMP_CODE_LEN];
    int64_t off[ARCH_DWARF_NREGS];
    if (!reg_known(regs, ARCH_DWARF_SP) ||
        mem->read(mem->ctx, regs->r[UNWIND_DWARF_PC], code, sizeof(code)) != 0 ||
        !arch_sigtramp_frame(code, off))
        return -1;
    uint64_t sp = regs->r[ARCH_DWARF_SP];
    struct unwind_regs next = {.valid = 0};
    for (unsigned i = 0; i < ARCH_DWARF_NREGS; i++) {
        if (off[i] < 0)
            continue;
        uint64_t v = 0;
        if (mem->read(mem->ctx, sp + (uint64_t)off[i], &v, ARCH_PTR_SIZE) != 0)
            return -1;
        next.r[i] = v;
        next.valid |= 1ull << i;
    }
    if (!reg_known(&next, UNWIND_DWARF_PC))
        return -1;
    *regs = next;
    *cfa_out = sp;
    *signal_frame = true;
    return 0;
}
#endif

int unwind_step(struct unwind_regs *regs, bool pc_is_exact, const struct unwind_memory *mem,
                const struct unwind_lookup *lookup, uint64_t *cfa_out, bool *signal_frame)
{
    if (!reg_known(regs, UNWIND_DWARF_PC))
        return -1;
    uint64_t pc = regs->r[UNWIND_DWARF_PC];
    /* A return address may be one past the end of the caller's function
     * (a call to a noreturn function): look at the call instruction. */
    uint64_t probe = pc_is_exact ? pc : pc - 1;
    uint64_t bias = 0;
    struct cfi_table *table = lookup->find(lookup->ctx, probe, &bias);
    /* Owned by the table and valid until its next lookup: no copy. */
    const struct cfi_row *row = table ? cfi_lookup(table, probe - bias) : NULL;
    if (!row) {
#ifdef ARCH_HAS_SIGTRAMP
        if (sigtramp_step(regs, mem, cfa_out, signal_frame) == 0)
            return 0;
#endif
#ifdef ARCH_UNWIND_EXIDX
        return exidx_step(regs, probe, pc_is_exact, mem, lookup, cfa_out, signal_frame);
#else
        return -1;
#endif
    }

    unsigned asz = row->addr_size == 4 ? 4 : 8;
    uint64_t mask = asz == 4 ? 0xffffffffull : UINT64_MAX;
    struct expr_context ectx = {
        .addr_size = asz, .big_endian = row->big_endian, .regs = regs,
        .read = mem_read, .read_ctx = (void *)mem,
    };

    uint64_t cfa;
    if (row->cfa_kind == CFI_CFA_REG_OFFSET) {
        if (!reg_known(regs, row->cfa_reg))
            return -1;
        cfa = (regs->r[row->cfa_reg] + (uint64_t)row->cfa_offset) & mask;
    } else if (expr_eval(row->cfa_expr, row->cfa_expr_len, &ectx, NULL, 0, &cfa) != EXPR_OK) {
        return -1;
    }
    ectx.has_cfa = true;
    ectx.cfa = cfa;

    if (row->ra_column >= ARCH_DWARF_NREGS)
        return -1;
    if (row->regs[row->ra_column].kind == CFI_RULE_UNDEFINED)
        return 1;   /* _start, clone, start_thread: nothing called this */

    struct unwind_regs next;
    next.valid = 0;
    for (uint32_t i = 0; i < ARCH_DWARF_NREGS; i++) {
        const struct cfi_rule *rule = &row->regs[i];
        uint64_t v = 0, addr;
        bool ok = true;
        switch (rule->kind) {
        case CFI_RULE_UNSPECIFIED:
        case CFI_RULE_SAME_VALUE:
            ok = reg_known(regs, i);
            v = regs->r[i];
            break;
        case CFI_RULE_UNDEFINED:
            ok = false;
            break;
        case CFI_RULE_OFFSET:
            ok = expr_read_addr(&ectx, (cfa + (uint64_t)rule->u.offset) & mask, asz, &v) == 0;
            break;
        case CFI_RULE_VAL_OFFSET:
            v = (cfa + (uint64_t)rule->u.offset) & mask;
            break;
        case CFI_RULE_REGISTER:
            ok = reg_known(regs, rule->u.reg);
            v = ok ? regs->r[rule->u.reg] : 0;
            break;
        case CFI_RULE_EXPRESSION:
            ok = expr_eval(rule->u.expr, rule->expr_len, &ectx, &cfa, 1, &addr) == EXPR_OK &&
                 expr_read_addr(&ectx, addr, asz, &v) == 0;
            break;
        case CFI_RULE_VAL_EXPRESSION:
            ok = expr_eval(rule->u.expr, rule->expr_len, &ectx, &cfa, 1, &v) == EXPR_OK;
            break;
        default:
            ok = false;
        }
        if (ok) {
            next.r[i] = v;
            next.valid |= 1ull << i;
        } else if (i == row->ra_column) {
            return -1;   /* the return address was saved but cannot be read */
        }
    }
    /* The caller's stack pointer is the CFA unless a rule says otherwise
     * (a signal frame restores it from the saved context). */
    uint8_t sp_kind = row->regs[ARCH_DWARF_SP].kind;
    if (sp_kind == CFI_RULE_UNSPECIFIED || sp_kind == CFI_RULE_SAME_VALUE) {
        next.r[ARCH_DWARF_SP] = cfa;
        next.valid |= 1ull << ARCH_DWARF_SP;
    }
    /* Where the return-address column is not the pc (arm, aarch64), the
     * caller resumes at the return address. */
    next.r[UNWIND_DWARF_PC] = ARCH_RA_TO_PC(next.r[row->ra_column]);   /* arm: Thumb bit */
    next.valid |= 1ull << UNWIND_DWARF_PC;

    *regs = next;
    *cfa_out = cfa;
    *signal_frame = row->signal_frame;
    return 0;
}

/* first_exact: frame 0's pc is where the thread stopped (else a return
 * address, looked up inside the call). */
static int unwind_from(const struct unwind_regs *regs, bool first_exact,
                       const struct unwind_memory *mem, const struct unwind_lookup *lookup,
                       uint64_t *pcs, int max)
{
    if (max <= 0 || !reg_known(regs, UNWIND_DWARF_PC))
        return 0;
    struct unwind_regs cur = *regs;
    uint64_t pc = cur.r[UNWIND_DWARF_PC];
    if (pc == 0)
        return 0;
    pcs[0] = pc;
    int n = 1;
    bool exact = first_exact;
    bool prev_signal = false;    /* the last frame stepped through was a signal frame */
    bool have_prev_cfa = false;
    uint64_t prev_cfa = 0;
    uint64_t sp = reg_known(&cur, ARCH_DWARF_SP) ? cur.r[ARCH_DWARF_SP] : 0;

    while (n < max) {
        uint64_t cfa;
        bool signal_frame;
        if (unwind_step(&cur, exact, mem, lookup, &cfa, &signal_frame) != 0)
            break;
        /* Each caller's frame lies above its callee's, except across a
         * signal (the handler may run on an alternate stack). */
        if (!prev_signal && !signal_frame) {
            if (have_prev_cfa ? cfa <= prev_cfa : cfa < sp)
                break;
        }
        prev_cfa = cfa;
        have_prev_cfa = true;
        prev_signal = signal_frame;
        pc = cur.r[UNWIND_DWARF_PC];
        if (pc == 0)
            break;
        exact = signal_frame;
        pcs[n++] = signal_frame ? (pc | UNWIND_PC_EXACT) : pc;
    }
    return n;
}

int unwind_stack(const struct unwind_regs *regs, const struct unwind_memory *mem,
                 const struct unwind_lookup *lookup, uint64_t *pcs, int max)
{
    return unwind_from(regs, true, mem, lookup, pcs, max);
}

int unwind_stack_at_entry(const struct unwind_regs *regs, const struct unwind_memory *mem,
                          const struct unwind_lookup *lookup, uint64_t *pcs, int max)
{
#if ARCH_DWARF_RA != UNWIND_DWARF_PC
    /* arm, aarch64: the return address is still in its register and sp is
     * the caller's, so frame 1 needs no CFI (nor exidx, which describes a
     * function after its prologue). */
    if (max < 2 || !reg_known(regs, UNWIND_DWARF_PC) || !reg_known(regs, ARCH_DWARF_RA))
        return unwind_stack(regs, mem, lookup, pcs, max);
    pcs[0] = regs->r[UNWIND_DWARF_PC];
    struct unwind_regs caller = *regs;
    caller.r[UNWIND_DWARF_PC] = ARCH_RA_TO_PC(regs->r[ARCH_DWARF_RA]);
    return 1 + unwind_from(&caller, false, mem, lookup, pcs + 1, max - 1);
#else
    return unwind_stack(regs, mem, lookup, pcs, max);
#endif
}
