#include "target/dwarf/line_program.h"

#include <string.h>

#include "target/dwarf/info_constants.h"

static void reset_registers(struct line_program *p)
{
    memset(&p->regs, 0, sizeof(p->regs));
    p->regs.file = 1;
    p->regs.line = 1;
    p->regs.is_stmt = p->h->default_is_stmt;
    p->op_index = 0;
    p->sequence_started = false;
}

void line_program_start(struct line_program *p, const struct dwarf_sections *secs,
                        const struct line_header *h, uint64_t offset)
{
    memset(p, 0, sizeof(*p));
    p->secs = secs;
    p->h = h;
    cursor_init(&p->c, secs->line.data, secs->line.size, secs->big_endian);
    if (h->end <= secs->line.size)
        p->c.end = (size_t)h->end;
    if (offset < h->program_offset || offset > p->c.end)
        p->c.error = true;
    else
        cursor_seek(&p->c, (size_t)offset);
    unsigned bits = h->unit.address_size * 8;
    p->address_mask = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    reset_registers(p);
    p->regs.sequence_offset = offset;
}

void line_program_resume(struct line_program *p, const struct dwarf_sections *secs,
                         const struct line_header *h, const struct line_row *after,
                         uint64_t op_index, uint64_t offset)
{
    line_program_start(p, secs, h, offset);
    p->regs = *after;
    p->regs.discriminator = 0;
    p->regs.end_sequence = false;
    p->op_index = h->max_ops_per_insn > 1 ? op_index % h->max_ops_per_insn : 0;
    p->sequence_started = true;
}

/* Advances the address by an operation advance (VLIW-aware). */
static void advance(struct line_program *p, uint64_t operation_advance)
{
    const struct line_header *h = p->h;
    if (h->max_ops_per_insn == 1) {
        p->regs.address += h->min_insn_length * operation_advance;
    } else {
        uint64_t total = p->op_index + operation_advance;
        p->regs.address += h->min_insn_length * (total / h->max_ops_per_insn);
        p->op_index = total % h->max_ops_per_insn;
    }
    p->regs.address &= p->address_mask;
}

/* Emits the current registers as a row and clears the per-row registers. */
static bool emit(struct line_program *p, struct line_row *row)
{
    *row = p->regs;
    p->regs.discriminator = 0;
    p->sequence_started = true;
    return true;
}

static void extended(struct line_program *p, struct line_row *row, bool *emitted)
{
    struct cursor *c = &p->c;
    uint64_t len = cursor_uleb128(c);
    if (!cursor_ok(c) || len == 0)
        return;
    size_t saved_end;
    if (!cursor_limit(c, len, &saved_end))
        return;
    size_t op_end = c->end;
    uint8_t op = cursor_u8(c);
    switch (op) {
    case DW_LNE_end_sequence:
        p->regs.end_sequence = true;
        *emitted = emit(p, row);
        cursor_restore_end(c, saved_end);
        cursor_seek(c, op_end);
        reset_registers(p);
        p->regs.sequence_offset = op_end;
        return;
    case DW_LNE_set_address: {
        uint64_t size = len - 1;
        if (size == 1 || size == 2 || size == 4 || size == 8)
            p->regs.address = cursor_uint(c, (unsigned)size) & p->address_mask;
        p->op_index = 0;
        break;
    }
    case DW_LNE_define_file:
        p->defines_seen++;
        if (p->defines_seen == p->define_wanted)
            p->define_offset = c->pos;
        break;
    case DW_LNE_set_discriminator:
        p->regs.discriminator = (uint32_t)cursor_uleb128(c);
        break;
    default:
        break; /* vendor opcodes: the length lets us skip them */
    }
    bool ok = cursor_ok(c);
    cursor_restore_end(c, saved_end);
    if (ok)
        cursor_seek(c, op_end);
}

bool line_program_next(struct line_program *p, struct line_row *row)
{
    struct cursor *c = &p->c;
    const struct line_header *h = p->h;
    while (cursor_ok(c) && !cursor_at_end(c)) {
        unsigned op = cursor_u8(c);
        if (op >= h->opcode_base) {
            unsigned adjusted = op - h->opcode_base;
            advance(p, adjusted / h->line_range);
            p->regs.line += (uint32_t)(h->line_base + (int)(adjusted % h->line_range));
            return emit(p, row);
        }
        bool emitted = false;
        switch (op) {
        case 0:
            extended(p, row, &emitted);
            if (emitted)
                return true;
            break;
        case DW_LNS_copy:
            return emit(p, row);
        case DW_LNS_advance_pc:
            advance(p, cursor_uleb128(c));
            break;
        case DW_LNS_advance_line:
            p->regs.line += (uint32_t)cursor_sleb128(c);
            break;
        case DW_LNS_set_file:
            p->regs.file = cursor_uleb128(c);
            break;
        case DW_LNS_set_column:
            p->regs.column = cursor_uleb128(c);
            break;
        case DW_LNS_negate_stmt:
            p->regs.is_stmt = !p->regs.is_stmt;
            break;
        case DW_LNS_set_basic_block:
        case DW_LNS_set_prologue_end:
        case DW_LNS_set_epilogue_begin:
            break;
        case DW_LNS_const_add_pc:
            advance(p, (255 - h->opcode_base) / h->line_range);
            break;
        case DW_LNS_fixed_advance_pc:
            p->regs.address = (p->regs.address + cursor_u16(c)) & p->address_mask;
            p->op_index = 0;
            break;
        case DW_LNS_set_isa:
            cursor_uleb128(c);
            break;
        default: {
            /* A standard opcode newer than we know: skip its operands. */
            unsigned n = line_header_std_length(p->secs, h, op);
            for (unsigned i = 0; i < n && cursor_ok(c); i++)
                cursor_uleb128(c);
            break;
        }
        }
    }
    return false;
}

bool line_program_find_defined_file(const struct dwarf_sections *secs, const struct line_header *h,
                                    uint64_t n, uint64_t *entry_offset)
{
    struct line_program p;
    struct line_row row;
    line_program_start(&p, secs, h, h->program_offset);
    p.define_wanted = n;
    while (line_program_next(&p, &row) && p.define_offset == 0)
        ;
    if (p.define_offset == 0)
        return false;
    *entry_offset = p.define_offset;
    return true;
}
