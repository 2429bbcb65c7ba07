/* Frame-by-frame unwinding with CFI rows. */
#include "target/unwind/unwind.h"
#include "target/dwarf/expr.h"

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
    if (!table)
        return -1;
    /* Owned by the table and valid until its next lookup: no copy. */
    const struct cfi_row *row = cfi_lookup(table, probe - bias);
    if (!row)
        return -1;

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
     * the caller's, so frame 1 needs no CFI (an armhf libc has only
     * .ARM.exidx, which is not read). */
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
