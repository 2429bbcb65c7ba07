/* The CFA program interpreter: DW_CFA_* instructions of DWARF 2-5 and the
 * GNU extensions GCC and glibc emit. */
#include "target/dwarf/cfi_internal.h"

#include <string.h>

enum {
    DW_CFA_nop = 0x00, DW_CFA_set_loc = 0x01, DW_CFA_advance_loc1 = 0x02,
    DW_CFA_advance_loc2 = 0x03, DW_CFA_advance_loc4 = 0x04, DW_CFA_offset_extended = 0x05,
    DW_CFA_restore_extended = 0x06, DW_CFA_undefined = 0x07, DW_CFA_same_value = 0x08,
    DW_CFA_register = 0x09, DW_CFA_remember_state = 0x0a, DW_CFA_restore_state = 0x0b,
    DW_CFA_def_cfa = 0x0c, DW_CFA_def_cfa_register = 0x0d, DW_CFA_def_cfa_offset = 0x0e,
    DW_CFA_def_cfa_expression = 0x0f, DW_CFA_expression = 0x10,
    DW_CFA_offset_extended_sf = 0x11, DW_CFA_def_cfa_sf = 0x12,
    DW_CFA_def_cfa_offset_sf = 0x13, DW_CFA_val_offset = 0x14, DW_CFA_val_offset_sf = 0x15,
    DW_CFA_val_expression = 0x16, DW_CFA_MIPS_advance_loc8 = 0x1d,
    DW_CFA_GNU_window_save = 0x2d, DW_CFA_GNU_args_size = 0x2e,
    DW_CFA_GNU_negative_offset_extended = 0x2f,
    DW_CFA_advance_loc = 0x40, DW_CFA_offset = 0x80, DW_CFA_restore = 0xc0,
};

/* GCC nests remember/restore a level or two; more is malformed input. */
#define CFI_STATE_STACK_MAX 8

struct cfa_state {
    uint8_t cfa_kind;
    uint32_t cfa_reg;
    int64_t cfa_offset;
    const uint8_t *cfa_expr;
    size_t cfa_expr_len;
    bool ra_mangled;
    struct cfi_rule regs[CFI_NREGS];
};

struct interp {
    const struct cfi_cie *cie;
    struct cfa_state cur;
    const struct cfa_state *initial;   /* after the CIE's instructions; NULL while running them */
    struct cfa_state stack[CFI_STATE_STACK_MAX];
    unsigned depth;
};

static void set_rule(struct interp *in, uint64_t reg, uint8_t kind, int64_t offset)
{
    if (reg >= CFI_NREGS)
        return;   /* a register the unwinder does not track */
    struct cfi_rule *r = &in->cur.regs[reg];
    r->kind = kind;
    r->expr_len = 0;
    if (kind == CFI_RULE_REGISTER)
        r->u.reg = (uint32_t)offset;
    else
        r->u.offset = offset;
}

static void restore_rule(struct interp *in, uint64_t reg)
{
    if (reg >= CFI_NREGS)
        return;
    if (in->initial)
        in->cur.regs[reg] = in->initial->regs[reg];
    else
        memset(&in->cur.regs[reg], 0, sizeof(in->cur.regs[reg]));
}

/* A DW_FORM_block operand: uleb length and bytes. */
static bool read_block(struct cursor *c, const uint8_t **p, size_t *len)
{
    uint64_t n = cursor_uleb128(c);
    if (!cursor_ok(c) || n > cursor_left(c) || n > UINT32_MAX)
        return false;
    *p = cursor_ptr(c);
    *len = (size_t)n;
    return cursor_skip(c, n);
}

/* Runs one instruction list.  Stops early (returning 1) when the location
 * passes pc; 0 at the end of the list; -1 on malformed input. */
static int run(struct interp *in, const struct cfi_env *env, const struct cfi_section *s,
               const uint8_t *insns, size_t len, uint64_t *loc, uint64_t pc)
{
    struct cursor c;
    cursor_init(&c, insns, len, env->big_endian);
    const struct cfi_cie *cie = in->cie;
    int64_t daf = cie->data_align;
    uint64_t caf = cie->code_align;

    while (!cursor_at_end(&c)) {
        uint8_t op = cursor_u8(&c);
        uint64_t reg, delta = 0, u;
        int64_t sv;
        bool advance = false;

        switch (op & 0xc0) {
        case DW_CFA_advance_loc:
            delta = (uint64_t)(op & 0x3f) * caf;
            advance = true;
            break;
        case DW_CFA_offset:
            u = cursor_uleb128(&c);
            set_rule(in, op & 0x3f, CFI_RULE_OFFSET, (int64_t)(u * (uint64_t)daf));
            break;
        case DW_CFA_restore:
            restore_rule(in, op & 0x3f);
            break;
        default:
            switch (op) {
            case DW_CFA_nop:
                break;
            case DW_CFA_set_loc: {
                struct cfi_ptr_base base = {
                    .section_vaddr = s->vaddr + (uint64_t)(insns - s->data),
                    .text = env->text_vaddr, .data = env->data_vaddr,
                    .addr_size = cie->addr_size,
                };
                uint64_t newloc;
                if (!cfi_read_pointer(&c, s->is_eh ? cie->fde_enc : DW_EH_PE_absptr, &base,
                                      &newloc))
                    return -1;
                if (newloc < *loc)
                    return -1;   /* locations only move forward */
                if (newloc > pc)
                    return 1;
                *loc = newloc;
                break;
            }
            case DW_CFA_advance_loc1: delta = cursor_u8(&c) * caf; advance = true; break;
            case DW_CFA_advance_loc2: delta = cursor_u16(&c) * caf; advance = true; break;
            case DW_CFA_advance_loc4: delta = cursor_u32(&c) * caf; advance = true; break;
            case DW_CFA_MIPS_advance_loc8: delta = cursor_u64(&c) * caf; advance = true; break;
            case DW_CFA_offset_extended:
                reg = cursor_uleb128(&c);
                u = cursor_uleb128(&c);
                set_rule(in, reg, CFI_RULE_OFFSET, (int64_t)(u * (uint64_t)daf));
                break;
            case DW_CFA_offset_extended_sf:
                reg = cursor_uleb128(&c);
                sv = cursor_sleb128(&c);
                set_rule(in, reg, CFI_RULE_OFFSET, (int64_t)((uint64_t)sv * (uint64_t)daf));
                break;
            case DW_CFA_GNU_negative_offset_extended:
                reg = cursor_uleb128(&c);
                u = cursor_uleb128(&c);
                set_rule(in, reg, CFI_RULE_OFFSET, (int64_t)(0 - u * (uint64_t)daf));
                break;
            case DW_CFA_val_offset:
                reg = cursor_uleb128(&c);
                u = cursor_uleb128(&c);
                set_rule(in, reg, CFI_RULE_VAL_OFFSET, (int64_t)(u * (uint64_t)daf));
                break;
            case DW_CFA_val_offset_sf:
                reg = cursor_uleb128(&c);
                sv = cursor_sleb128(&c);
                set_rule(in, reg, CFI_RULE_VAL_OFFSET, (int64_t)((uint64_t)sv * (uint64_t)daf));
                break;
            case DW_CFA_restore_extended:
                restore_rule(in, cursor_uleb128(&c));
                break;
            case DW_CFA_undefined:
                set_rule(in, cursor_uleb128(&c), CFI_RULE_UNDEFINED, 0);
                break;
            case DW_CFA_same_value:
                set_rule(in, cursor_uleb128(&c), CFI_RULE_SAME_VALUE, 0);
                break;
            case DW_CFA_register:
                reg = cursor_uleb128(&c);
                u = cursor_uleb128(&c);
                if (u >= CFI_NREGS)
                    set_rule(in, reg, CFI_RULE_UNDEFINED, 0);
                else
                    set_rule(in, reg, CFI_RULE_REGISTER, (int64_t)u);
                break;
            case DW_CFA_remember_state:
                if (in->depth >= CFI_STATE_STACK_MAX)
                    return -1;
                in->stack[in->depth++] = in->cur;
                break;
            case DW_CFA_restore_state:
                if (in->depth == 0)
                    return -1;
                in->cur = in->stack[--in->depth];
                break;
            case DW_CFA_def_cfa:
                reg = cursor_uleb128(&c);
                u = cursor_uleb128(&c);
                in->cur.cfa_kind = CFI_CFA_REG_OFFSET;
                in->cur.cfa_reg = reg > UINT32_MAX ? UINT32_MAX : (uint32_t)reg;
                in->cur.cfa_offset = (int64_t)u;
                break;
            case DW_CFA_def_cfa_sf:
                reg = cursor_uleb128(&c);
                sv = cursor_sleb128(&c);
                in->cur.cfa_kind = CFI_CFA_REG_OFFSET;
                in->cur.cfa_reg = reg > UINT32_MAX ? UINT32_MAX : (uint32_t)reg;
                in->cur.cfa_offset = (int64_t)((uint64_t)sv * (uint64_t)daf);
                break;
            case DW_CFA_def_cfa_register:
                reg = cursor_uleb128(&c);
                in->cur.cfa_kind = CFI_CFA_REG_OFFSET;
                in->cur.cfa_reg = reg > UINT32_MAX ? UINT32_MAX : (uint32_t)reg;
                break;
            case DW_CFA_def_cfa_offset:
                in->cur.cfa_offset = (int64_t)cursor_uleb128(&c);
                break;
            case DW_CFA_def_cfa_offset_sf:
                sv = cursor_sleb128(&c);
                in->cur.cfa_offset = (int64_t)((uint64_t)sv * (uint64_t)daf);
                break;
            case DW_CFA_def_cfa_expression:
                if (!read_block(&c, &in->cur.cfa_expr, &in->cur.cfa_expr_len))
                    return -1;
                in->cur.cfa_kind = CFI_CFA_EXPRESSION;
                break;
            case DW_CFA_expression:
            case DW_CFA_val_expression: {
                reg = cursor_uleb128(&c);
                const uint8_t *p;
                size_t n;
                if (!read_block(&c, &p, &n))
                    return -1;
                if (reg < CFI_NREGS) {
                    struct cfi_rule *r = &in->cur.regs[reg];
                    r->kind = op == DW_CFA_expression ? CFI_RULE_EXPRESSION
                                                      : CFI_RULE_VAL_EXPRESSION;
                    r->u.expr = p;
                    r->expr_len = (uint32_t)n;
                }
                break;
            }
            case DW_CFA_GNU_args_size:
                cursor_uleb128(&c);
                break;
            case DW_CFA_GNU_window_save:
                /* On aarch64 this is DW_CFA_AARCH64_negate_ra_state. */
                in->cur.ra_mangled = !in->cur.ra_mangled;
                break;
            default:
                return -1;
            }
        }
        if (!cursor_ok(&c))
            return -1;
        if (advance) {
            if (delta > UINT64_MAX - *loc)
                return -1;
            if (*loc + delta > pc)
                return 1;
            *loc += delta;
        }
    }
    return 0;
}

int cfi_run_program(const struct cfi_env *env, const struct cfi_section *s,
                    const struct cfi_cie *cie, const struct cfi_fde *fde, uint64_t pc,
                    struct cfi_row *row)
{
    struct interp in;
    memset(&in.cur, 0, sizeof(in.cur));
    in.cie = cie;
    in.initial = NULL;
    in.depth = 0;

    uint64_t loc = fde ? fde->pc_begin : 0;
    /* CIE instructions describe the state at every FDE's first byte. */
    uint64_t cie_limit = UINT64_MAX;
    if (run(&in, env, s, cie->insns, cie->insns_len, &loc, cie_limit) < 0)
        return -1;
    struct cfa_state initial = in.cur;
    in.initial = &initial;
    in.depth = 0;
    if (fde) {
        loc = fde->pc_begin;
        if (run(&in, env, s, fde->insns, fde->insns_len, &loc, pc) < 0)
            return -1;
    }

    row->cfa_kind = in.cur.cfa_kind;
    row->cfa_reg = in.cur.cfa_reg;
    row->cfa_offset = in.cur.cfa_offset;
    row->cfa_expr = in.cur.cfa_expr;
    row->cfa_expr_len = in.cur.cfa_expr_len;
    row->ra_mangled = in.cur.ra_mangled;
    memcpy(row->regs, in.cur.regs, sizeof(row->regs));
    row->ra_column = cie->ra_column;
    row->signal_frame = cie->signal_frame;
    row->addr_size = cie->addr_size;
    row->big_endian = env->big_endian;
    row->fde_start = fde ? fde->pc_begin : 0;
    row->fde_end = fde ? fde->pc_end : 0;
    return 0;
}
